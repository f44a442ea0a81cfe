// The HTTP shapes every doorway shares: the data plane reads requests in them,
// and the admin API and the dashboard answer in them, whichever server
// (uWebSockets.js, node:http) carries the bytes.

export interface IncomingRequest {
  /** Upper-case method. */
  method: string
  path: string
  query: string
  /** Lower-case names. */
  headers: Record<string, string>
  /** Address of the TCP peer (a function: reading it costs, and most requests never need it). */
  peerAddress(): string
  body(): Promise<string>
}

export interface OutgoingResponse {
  status: number
  headers: Record<string, string>
  body: string
}

/** Routes of the platform itself (admin API, dashboard), tried when no project is named. */
export type PlatformRoutes = (request: IncomingRequest) => Promise<OutgoingResponse | undefined>
