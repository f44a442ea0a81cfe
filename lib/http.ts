// The HTTP shapes every doorway shares: the data plane reads requests in them,
// and the admin API and the dashboard answer in them, whichever server
// (uWebSockets.js, node:http) carries the bytes.

export interface IncomingRequest {
  /** Upper-case method; HEAD arrives as GET (the servers answer it as GET without the body), with `head` set. */
  method: string
  /** The request was a HEAD. */
  head?: boolean
  path: string
  query: string
  /** Lower-case names. */
  headers: Record<string, string>
  /** Address of the TCP peer (a function: reading it costs, and most requests never need it). */
  peerAddress(): string
  /**
   * The body, once the request may run: nothing that changes state starts
   * before it resolves (the data plane awaits it before dispatching and before
   * the platform's own routes). An engine may hold it back or reject it: the
   * uWS engine does until the packet that carried the request is parsed, so a
   * request whose connection closes for pipelining never runs. UTF-8 text,
   * but an `application/octet-stream` body is one character per byte
   * (lib/http/body.ts bodyText).
   */
  body(): Promise<string>
  /**
   * The body as it arrives, for the routes that take it so (Storage's uploads,
   * of any length): each chunk once the reader asks for it, the connection
   * read no faster than that. A request's body is read either whole (`body`)
   * or so, never both. Each chunk owns its memory, so it may be moved to a
   * worker thread without a copy.
   */
  bodyChunks?(): AsyncIterable<Uint8Array>
}

/**
 * A body written as it is made (the admin API's usage export): the server
 * pulls one chunk, waits until the connection has taken it, then pulls the
 * next, so what is in memory is a chunk whatever the answer's length. Sent
 * with chunked transfer encoding. If the chunks fail partway, the connection
 * is closed without the last chunk, so the client sees a broken answer, never
 * a short one that looks whole; if the client goes away, the chunks are ended
 * (their iterator's `return`), which frees what they hold.
 */
export class StreamedBody {
  readonly chunks: AsyncIterable<string | Uint8Array>
  /** The body's length when it is known before it is made (a stored object's): sent as Content-Length rather than chunked. */
  readonly length: number | undefined

  constructor(chunks: AsyncIterable<string | Uint8Array>, length?: number) {
    this.chunks = chunks
    this.length = length
  }
}

/** What the servers write: text, bytes already encoded (a large answer made on another thread, handed over without a copy), or a stream. */
export type ResponseBody = string | Uint8Array | StreamedBody

export interface OutgoingResponse<Body extends ResponseBody = string> {
  status: number
  headers: Record<string, string>
  body: Body
  /**
   * Set-Cookie lines, each sent as a header of its own: unlike other
   * headers, several cookies cannot share one comma-separated line (an
   * Expires attribute holds a comma).
   */
  setCookies?: readonly string[]
}

/** Routes of the platform itself (admin API, dashboard), tried when no project is named. */
export type PlatformRoutes = (request: IncomingRequest) => Promise<OutgoingResponse<ResponseBody> | undefined>
