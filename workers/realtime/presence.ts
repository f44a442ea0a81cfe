// Presence as Phoenix keeps it and realtime-js reads it: per channel topic, a
// map of keys (the joiner's `presence.key`, else one made for it) to metas,
// each meta the tracked payload with its `phx_ref`. A change is a diff of
// joins and leaves; a joiner is sent the whole state first. A channel tracks
// one meta at a time: tracking again replaces it (the new meta carries the
// old one's ref as `phx_ref_prev`), untracking or leaving removes it. On a
// fleet, every node holds every node's presence, each entry under the node it
// came from (Phoenix.Tracker replicates the same way), so a joiner's state is
// whole at once and a node that goes can be taken out by name.
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

/** One meta on one channel: the key it is under, and the meta. */
interface Entry {
  key: string
  meta: Meta
}

/** A channel's entries of one node, by id (a tracker's id here, a meta's `phx_ref` for another node's). */
type Entries = Map<string, Entry>

/** What a node tracks, channel by channel, as another node is told it: presence_state's shape per channel. */
export type NodeState = Record<string, PresenceEntries>

function addTo(diff: PresenceEntries, entry: Entry): void {
  ;(diff[entry.key] ??= { metas: [] }).metas.push(entry.meta)
}

function isEmpty(diff: PresenceDiff): boolean {
  return Object.keys(diff.joins).length === 0 && Object.keys(diff.leaves).length === 0
}

/**
 * Every channel's presence as this node knows it: what its own sockets track,
 * and on a fleet what every other node's do (each entry kept under the node
 * it came from, so a node that goes leaves with everything it had).
 */
export class PresenceTable {
  /** This node's name among the others (the catalogue's node id). */
  readonly node: string
  /** node -> channel -> entries */
  readonly #nodes = new Map<string, Map<string, Entries>>()

  constructor(node = 'this node') {
    this.node = node
  }

  /** The whole state of `topic` on every node, as presence_state carries it. */
  state(topic: string): PresenceEntries {
    const state: PresenceEntries = {}
    for (const channels of this.#nodes.values()) for (const entry of channels.get(topic)?.values() ?? []) addTo(state, entry)
    return state
  }

  /** `tracker` (one of this node's channels) now tracks `payload` on `topic`: the diff to send everyone on it. */
  track(topic: string, tracker: Tracker, payload: Record<string, unknown>): PresenceDiff {
    const tracked = this.#entries(this.node, topic)
    const before = tracked.get(tracker.id)
    const meta: Meta = { ...payload, phx_ref: newRef(), ...(before ? { phx_ref_prev: before.meta.phx_ref } : {}) }
    tracked.set(tracker.id, { key: tracker.key, meta })
    return { joins: entries(tracker.key, meta), leaves: before ? entries(before.key, before.meta) : {} }
  }

  /** `tracker` stops tracking `topic`: the diff to send, or undefined when it tracked nothing. */
  untrack(topic: string, tracker: Tracker): PresenceDiff | undefined {
    const tracked = this.#nodes.get(this.node)?.get(topic)
    const before = tracked?.get(tracker.id)
    if (tracked === undefined || before === undefined) return undefined
    tracked.delete(tracker.id)
    this.#prune(this.node, topic)
    return { joins: {}, leaves: entries(before.key, before.meta) }
  }

  /**
   * A change another node made to `topic` (its diff as its sockets were
   * sent it): the part of it that changed what this node knows, or undefined
   * when nothing did (a leave of a meta never heard of, a join heard already).
   */
  apply(node: string, topic: string, diff: PresenceDiff): PresenceDiff | undefined {
    const tracked = this.#entries(node, topic)
    const applied: PresenceDiff = { joins: {}, leaves: {} }
    for (const { metas } of Object.values(diff.leaves)) {
      for (const meta of metas) {
        const before = tracked.get(meta.phx_ref)
        if (before === undefined) continue
        tracked.delete(meta.phx_ref)
        addTo(applied.leaves, before)
      }
    }
    for (const [key, { metas }] of Object.entries(diff.joins)) {
      for (const meta of metas) {
        if (tracked.has(meta.phx_ref)) continue
        const entry = { key, meta }
        tracked.set(meta.phx_ref, entry)
        addTo(applied.joins, entry)
      }
    }
    this.#prune(node, topic)
    return isEmpty(applied) ? undefined : applied
  }

  /** Everything `node` tracks, in place of what this node held of it: each channel's diff. */
  replace(node: string, state: NodeState): Map<string, PresenceDiff> {
    const diffs = new Map<string, PresenceDiff>()
    const held = this.#nodes.get(node) ?? new Map<string, Entries>()
    for (const topic of new Set([...held.keys(), ...Object.keys(state)])) {
      const before = held.get(topic) ?? new Map<string, Entry>()
      const after: Entries = new Map()
      for (const [key, { metas }] of Object.entries(state[topic] ?? {})) for (const meta of metas) after.set(meta.phx_ref, { key, meta })
      const diff: PresenceDiff = { joins: {}, leaves: {} }
      for (const [ref, entry] of before) if (!after.has(ref)) addTo(diff.leaves, entry)
      for (const [ref, entry] of after) if (!before.has(ref)) addTo(diff.joins, entry)
      if (!isEmpty(diff)) diffs.set(topic, diff)
    }
    this.#nodes.delete(node)
    for (const [topic, keys] of Object.entries(state)) {
      for (const [key, { metas }] of Object.entries(keys)) for (const meta of metas) this.#entries(node, topic).set(meta.phx_ref, { key, meta })
    }
    return diffs
  }

  /** `node` is gone: everything it tracked leaves, each channel's diff. */
  drop(node: string): Map<string, PresenceDiff> {
    return this.replace(node, {})
  }

  /** What this node's own sockets track, as the others are told it. */
  own(): NodeState {
    const state: NodeState = {}
    for (const [topic, tracked] of this.#nodes.get(this.node) ?? []) for (const entry of tracked.values()) addTo((state[topic] ??= {}), entry)
    return state
  }

  /** How many metas `node` tracks, as far as this node knows. */
  count(node: string): number {
    let count = 0
    for (const tracked of this.#nodes.get(node)?.values() ?? []) count += tracked.size
    return count
  }

  #entries(node: string, topic: string): Entries {
    let channels = this.#nodes.get(node)
    if (channels === undefined) this.#nodes.set(node, (channels = new Map()))
    let tracked = channels.get(topic)
    if (tracked === undefined) channels.set(topic, (tracked = new Map()))
    return tracked
  }

  #prune(node: string, topic: string): void {
    const channels = this.#nodes.get(node)
    if (channels?.get(topic)?.size === 0) channels.delete(topic)
    if (channels?.size === 0) this.#nodes.delete(node)
  }
}
