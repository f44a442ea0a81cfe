// What carries Realtime between the fleet's nodes: a broadcast, a presence
// change or a database change made on one node reaches the sockets of every
// other. One node needs none (its sockets hear it through uWS's own publish):
// `NO_BUS` then. A fleet names NATS (DECISIONS.md: an engine made for it, not
// a protocol of our own and not PostgreSQL): nats-bus.ts.
/** A message from another node, as `publish` sent it. */
export type BusHandler = (data: Uint8Array) => void

export interface RealtimeBus {
  /** Whether messages cross nodes at all (false on one node). */
  readonly fleet: boolean
  /** Whether messages cross now (false while the bus is away: they are dropped, not queued). */
  readonly connected: boolean
  /**
   * To every other node subscribed to `subject` (a node never hears its own:
   * its sockets were sent the message already). Dropped while not connected.
   */
  publish(subject: string, data: Uint8Array): void
  /** Messages on `subject` until the answer is called; kept across the bus's reconnections. */
  subscribe(subject: string, handler: BusHandler): () => void
  /** Resolves once the bus has what this node sent it so far, its subscriptions included (at once while away). */
  flushed(): Promise<void>
  /** `listener` each time the bus connects (the first time, and after every break), when what was missed can be asked again. */
  onConnect(listener: () => void): void
  close(): Promise<void>
}

/** One node: nothing crosses, nothing is heard. */
export const NO_BUS: RealtimeBus = {
  fleet: false,
  connected: false,
  publish: () => {},
  subscribe: () => () => {},
  flushed: async () => {},
  onConnect: () => {},
  close: async () => {},
}
