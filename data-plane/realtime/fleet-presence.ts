// Presence across the fleet. Every node holds the whole fleet's presence in
// its PresenceTable, each entry under the node it came from (Phoenix.Tracker,
// which Supabase Realtime runs on, replicates the same way), so a socket that
// joins on any node is sent the whole state at once. On the bus's presence
// subject each node sends:
//
// - each change its sockets make, numbered, as the diff they were sent;
// - a heartbeat every HEARTBEAT_MS with its last number: a node that hears a
//   number it did not see, or a node it never heard of, asks that node for its
//   state, so a lost change heals within a heartbeat;
// - its whole state when asked, and whenever it (re)connects to the bus, when
//   it also asks everyone for theirs (a node joining later, or back from a
//   partition, learns what the others track);
// - `bye` when it stops.
//
// A node not heard from for DOWN_AFTER_MS (it died, or it is cut off) is taken
// out: its presences leave, each node sending the leaves to its own sockets.
// So a node's presences leave every other node within DOWN_AFTER_MS plus one
// heartbeat of its death (8 s), or at once when it stops.
import { log } from '../../lib/log.ts'
import type { PresenceDiff, PresenceTable } from '../../workers/realtime/presence.ts'
import type { RealtimeBus } from './bus.ts'
import { decodePresence, encodePresence, type PresenceMessage } from './envelope.ts'
import { PRESENCE_SUBJECT } from './topics.ts'

export const HEARTBEAT_MS = 2000
/** Three heartbeats missed. */
export const DOWN_AFTER_MS = 3 * HEARTBEAT_MS
/** Answers to requests for state that arrive together are sent once. */
const STATE_COALESCE_MS = 50

export interface FleetPresenceOptions {
  table: PresenceTable
  bus: RealtimeBus
  /** Changes made elsewhere, to this node's sockets on channel `key`. */
  deliver(key: string, diff: PresenceDiff): void
}

interface Peer {
  /** The number of its last change heard. */
  seq: number
  /** When it was last heard from. */
  seen: number
}

export class FleetPresence {
  readonly #table: PresenceTable
  readonly #bus: RealtimeBus
  readonly #deliver: (key: string, diff: PresenceDiff) => void
  readonly #peers = new Map<string, Peer>()
  readonly #unsubscribe: () => void
  readonly #timer: NodeJS.Timeout
  #seq = 0
  #stateDue: NodeJS.Timeout | undefined
  #closed = false

  constructor(options: FleetPresenceOptions) {
    this.#table = options.table
    this.#bus = options.bus
    this.#deliver = options.deliver
    this.#unsubscribe = this.#bus.subscribe(PRESENCE_SUBJECT, (data) => this.#receive(decodePresence(data)))
    this.#bus.onConnect(() => {
      this.#sendState()
      this.#send({ k: 'sync', o: this.#node })
    })
    this.#timer = setInterval(() => this.#tick(), HEARTBEAT_MS)
    this.#timer.unref()
  }

  get #node(): string {
    return this.#table.node
  }

  /** A change this node's sockets made on channel `key` (the table has it already). */
  changed(key: string, diff: PresenceDiff): void {
    this.#seq++
    this.#send({ k: 'diff', o: this.#node, s: this.#seq, c: key, d: diff })
  }

  /** The node stops: the others take its presences out at once rather than after DOWN_AFTER_MS. */
  close(): void {
    if (this.#closed) return
    this.#closed = true
    clearInterval(this.#timer)
    clearTimeout(this.#stateDue)
    this.#send({ k: 'bye', o: this.#node })
    this.#unsubscribe()
  }

  #tick(): void {
    this.#send({ k: 'beat', o: this.#node, s: this.#seq })
    const now = Date.now()
    for (const [node, peer] of this.#peers) {
      if (now - peer.seen <= DOWN_AFTER_MS) continue
      const entries = this.#table.count(node)
      this.#forget(node)
      log.info("a Realtime node went silent: its presences left this node's channels", { node, silentMs: now - peer.seen, entries })
    }
  }

  #receive(message: PresenceMessage): void {
    if (message.o === this.#node || this.#closed) return
    if (message.k === 'bye') return this.#forget(message.o)
    if (message.k === 'sync') {
      if (message.of === undefined || message.of === this.#node) this.#stateSoon()
      return
    }
    const peer = this.#peers.get(message.o)
    const now = Date.now()
    if (message.k === 'state') {
      this.#peers.set(message.o, { seq: message.s, seen: now })
      for (const [key, diff] of this.#table.replace(message.o, message.t)) this.#deliver(key, diff)
      return
    }
    // Its changes since what was heard, if none was missed; otherwise its state is asked for.
    const expected = message.k === 'diff' ? (peer?.seq ?? 0) + 1 : (peer?.seq ?? -1)
    if (peer === undefined || message.s !== expected) this.#send({ k: 'sync', o: this.#node, of: message.o })
    this.#peers.set(message.o, { seq: message.s, seen: now })
    if (message.k === 'diff') {
      const applied = this.#table.apply(message.o, message.c, message.d)
      if (applied) this.#deliver(message.c, applied)
    }
  }

  #forget(node: string): void {
    this.#peers.delete(node)
    for (const [key, diff] of this.#table.drop(node)) this.#deliver(key, diff)
  }

  #stateSoon(): void {
    this.#stateDue ??= setTimeout(() => {
      this.#stateDue = undefined
      this.#sendState()
    }, STATE_COALESCE_MS)
  }

  #sendState(): void {
    this.#send({ k: 'state', o: this.#node, s: this.#seq, t: this.#table.own() })
  }

  #send(message: PresenceMessage): void {
    this.#bus.publish(PRESENCE_SUBJECT, encodePresence(message))
  }
}
