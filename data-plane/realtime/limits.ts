// A project's Realtime limits on this node (lib/plans.ts REALTIME_LIMITS): its
// open sockets, and its broadcasts, joins and presence changes per second.
// A fleet's nodes each take an equal share of a per-second or concurrent
// figure (rounded up), so the project's total stays near its plan's without a
// counter shared between nodes on every message. Past a limit, Supabase
// Realtime's reasons (refusals.*).
import { REALTIME_LIMITS, type Plan, type RealtimeLimits } from '../../lib/plans.ts'

/** Counts in one-second windows: cheap, and a burst is refused within the second it passes the figure. */
class PerSecond {
  #window = 0
  #count = 0

  /** Takes `n`; false (taking nothing) when the second's figure would be passed. */
  take(n: number, limit: number, now: number): boolean {
    const window = Math.floor(now / 1000)
    if (window !== this.#window) {
      this.#window = window
      this.#count = 0
    }
    if (this.#count + n > limit) return false
    this.#count += n
    return true
  }
}

/** A broadcast's payload size, as the plan's limit counts it: its bytes, or its JSON's. */
export function payloadBytes(payload: unknown): number {
  if (payload instanceof Uint8Array) return payload.byteLength
  return Buffer.byteLength(JSON.stringify(payload ?? null) ?? '')
}

export type Spent = 'messages' | 'joins' | 'presence'

/** One project's counters on this node. */
export class ProjectRealtime {
  connections = 0
  /** Sockets open past the figure, not counted, waiting for a place (their joins refused meanwhile). */
  waiting = 0
  /** Broadcasts this node took for the project since it started (usage and the metrics read the difference). */
  messages = 0
  /** The most sockets open at once since `resetPeak`. */
  peakConnections = 0
  readonly #rates: Record<Spent, PerSecond> = { messages: new PerSecond(), joins: new PerSecond(), presence: new PerSecond() }
  readonly #limits: () => RealtimeLimits

  constructor(limits: () => RealtimeLimits) {
    this.#limits = limits
  }

  get limits(): RealtimeLimits {
    return this.#limits()
  }

  /** A socket opens: false when the project has its limit's sockets open already (nothing is counted then). */
  open(): boolean {
    if (this.connections >= this.limits.connections) return false
    this.connections++
    if (this.connections > this.peakConnections) this.peakConnections = this.connections
    return true
  }

  close(): void {
    this.connections = Math.max(0, this.connections - 1)
  }

  /**
   * A socket past the figure waits for a place: false when as many wait as the
   * figure itself, so a tenant's sockets on a node stay bounded (twice its share).
   */
  wait(): boolean {
    if (this.waiting >= this.limits.connections) return false
    this.waiting++
    return true
  }

  /** A waiting socket was counted, or closed. */
  waited(): void {
    this.waiting = Math.max(0, this.waiting - 1)
  }

  resetPeak(): void {
    this.peakConnections = this.connections
  }

  /** Takes `n` of a per-second figure; false when the second has none left. */
  take(what: Spent, n = 1, now = Date.now()): boolean {
    const limits = this.limits
    const limit = what === 'messages' ? limits.messagesPerSecond : what === 'joins' ? limits.joinsPerSecond : limits.presencePerSecond
    if (!this.#rates[what].take(n, limit, now)) return false
    if (what === 'messages') this.messages += n
    return true
  }
}

/** This node's share of a plan's figures on a fleet of `nodes`. */
export function nodeShare(limits: RealtimeLimits, nodes: number): RealtimeLimits {
  const share = (figure: number) => Math.ceil(figure / Math.max(1, nodes))
  return {
    connections: share(limits.connections),
    messagesPerSecond: share(limits.messagesPerSecond),
    joinsPerSecond: share(limits.joinsPerSecond),
    // A socket's and a message's own limits do not divide.
    channelsPerConnection: limits.channelsPerConnection,
    presencePerSecond: share(limits.presencePerSecond),
    payloadBytes: limits.payloadBytes,
  }
}

/** Every project's counters on this node, made on a project's first socket. */
export class RealtimeLimitsTable {
  readonly #projects = new Map<string, ProjectRealtime>()
  readonly #nodes: () => number
  readonly #plans = new Map<string, Plan>()

  /** `nodes`: the fleet's live nodes now (1 on one node). */
  constructor(nodes: () => number = () => 1) {
    this.#nodes = nodes
  }

  /** The project's counters, its limits read from its plan as it is now. */
  of(ref: string, plan: Plan): ProjectRealtime {
    this.#plans.set(ref, plan)
    let project = this.#projects.get(ref)
    if (project === undefined) {
      project = new ProjectRealtime(() => nodeShare(REALTIME_LIMITS[this.#plans.get(ref) ?? 'free'], this.#nodes()))
      this.#projects.set(ref, project)
    }
    return project
  }

  /** The project's counters, if it had a socket on this node. */
  peek(ref: string): ProjectRealtime | undefined {
    return this.#projects.get(ref)
  }

  /** Projects with counters, for usage and the metrics. */
  entries(): IterableIterator<[string, ProjectRealtime]> {
    return this.#projects.entries()
  }
}
