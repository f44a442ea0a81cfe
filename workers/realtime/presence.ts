// Presence as Phoenix keeps it and realtime-js reads it: per channel topic, a
// map of keys (the joiner's `presence.key`, else one made for it) to metas,
// each meta the tracked payload with its `phx_ref`. A change is a diff of
// joins and leaves; a joiner is sent the whole state first. A channel tracks
// one meta at a time: tracking again replaces it (the new meta carries the
// old one's ref as `phx_ref_prev`), untracking or leaving removes it.
import crypto from 'node:crypto'

export type Meta = Record<string, unknown> & { phx_ref: string }

/** `{key: {metas: [...]}}`: presence_state's payload, and each half of presence_diff's. */
export type PresenceEntries = Record<string, { metas: Meta[] }>

export interface PresenceDiff {
  joins: PresenceEntries
  leaves: PresenceEntries
}

/** The presence of one channel on one topic: who tracks it, under which key. */
export interface Tracker {
  readonly id: string
  readonly key: string
}

/** A meta's ref: unique, short, opaque (Phoenix's are base64 of a node-local counter). */
export function newRef(): string {
  return crypto.randomBytes(9).toString('base64url')
}

function entries(key: string, meta: Meta): PresenceEntries {
  return { [key]: { metas: [meta] } }
}

/** Every topic's presence on this node. */
export class PresenceTable {
  /** topic -> tracker id -> (key, meta) */
  readonly #topics = new Map<string, Map<string, { key: string; meta: Meta }>>()

  /** The whole state of `topic`, as presence_state carries it. */
  state(topic: string): PresenceEntries {
    const state: PresenceEntries = {}
    for (const { key, meta } of this.#topics.get(topic)?.values() ?? []) (state[key] ??= { metas: [] }).metas.push(meta)
    return state
  }

  /** `tracker` now tracks `payload` on `topic`: the diff to send everyone on it. */
  track(topic: string, tracker: Tracker, payload: Record<string, unknown>): PresenceDiff {
    let tracked = this.#topics.get(topic)
    if (tracked === undefined) this.#topics.set(topic, (tracked = new Map()))
    const before = tracked.get(tracker.id)
    const meta: Meta = { ...payload, phx_ref: newRef(), ...(before ? { phx_ref_prev: before.meta.phx_ref } : {}) }
    tracked.set(tracker.id, { key: tracker.key, meta })
    return { joins: entries(tracker.key, meta), leaves: before ? entries(before.key, before.meta) : {} }
  }

  /** `tracker` stops tracking `topic`: the diff to send, or undefined when it tracked nothing. */
  untrack(topic: string, tracker: Tracker): PresenceDiff | undefined {
    const tracked = this.#topics.get(topic)
    const before = tracked?.get(tracker.id)
    if (tracked === undefined || before === undefined) return undefined
    tracked.delete(tracker.id)
    if (tracked.size === 0) this.#topics.delete(topic)
    return { joins: {}, leaves: entries(before.key, before.meta) }
  }
}
