// What carries Realtime between the fleet's nodes: a broadcast, a presence
// change or a database change made on one node reaches the sockets of every
// other. One node needs none (its sockets hear it through uWS's own publish):
// `NO_BUS` then. A fleet names NATS (DECISIONS.md: an engine made for it, not
// a protocol of our own and not PostgreSQL).
/** A message from another node, as `publish` sent it. */
export type BusHandler = (data: Uint8Array) => void

export interface RealtimeBus {
  /** Whether messages cross nodes at all (false on one node). */
  readonly fleet: boolean
  /** To every node subscribed to `subject`, this one included where it is subscribed. */
  publish(subject: string, data: Uint8Array): void
  /** Messages on `subject` until the answer is called. */
  subscribe(subject: string, handler: BusHandler): () => void
  close(): Promise<void>
}

/** One node: nothing crosses, nothing is heard. */
export const NO_BUS: RealtimeBus = {
  fleet: false,
  publish: () => {},
  subscribe: () => () => {},
  close: async () => {},
}
