// The production HTTP engine: uWebSockets.js on the main thread. It only
// parses, hands the request to DataPlane.handle, and writes the answer.
// Imported only through http-engine.ts: loading it throws where no native build
// of @based/uws loads.
import { STATUS_CODES } from 'node:http'
import uWS from '@based/uws'
import { platformErrors } from '../lib/errors.ts'
import { log } from '../lib/log.ts'
import { routedMethod } from './http-server.ts'
import { StreamedBody, type IncomingRequest, type OutgoingResponse, type ResponseBody } from '../lib/http.ts'
import type { DataPlane } from './data-plane.ts'
import { bodyText, MAX_BODY_BYTES } from '../lib/http/body.ts'
import { answerRequest, stoppingResponse, type RunningServer } from './http-server.ts'
import { REALTIME_SOCKET_ROUTES, uwsRealtimeSocket } from './realtime-socket.ts'

/** The uWebSockets.js release inside @based/uws 6.0.1 (package.json pins that exactly; test/platform/http-engine.test.ts holds the two together). */
export const UWS_VERSION = '20.51'

const statusLines = new Map<number, string>()
function statusLine(status: number): string {
  let line = statusLines.get(status)
  if (line === undefined) {
    line = `${status} ${STATUS_CODES[status] ?? 'Unknown'}`
    statusLines.set(status, line)
  }
  return line
}

function byteLength(body: string | Uint8Array): number {
  return typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength
}

/** A request's life, for the drain: answered or aborted ends it once. */
interface RequestState {
  aborted: boolean
  ended: boolean
  /** The connection is not read until this request's answer is written (see holdNextRequest). */
  paused: boolean
  /** Told when the connection goes away (a streamed answer waiting for the socket stops). */
  onAbort?: () => void
}

const aborted = new Error('the connection closed before the request was read')

/** How much of a refused body is still read (and dropped) so its client sees the answer; past it, the connection is closed. */
const DISCARD_BYTES = 16 * 1024 * 1024

/** Chunks a streamed body keeps read ahead of its reader before the connection is paused (backpressure). */
const READ_AHEAD_BYTES = 256 * 1024

/**
 * A request's body as uWS delivers it. uWS needs the reader subscribed before
 * the handler returns, but only the route (found later) knows whether it wants
 * the body whole (`text`, bounded by MAX_BODY_BYTES) or as it arrives (`chunks`,
 * Storage's uploads, any length): so the chunks are kept as they come, and the
 * connection is paused while more than READ_AHEAD_BYTES wait unread, until the
 * reader asks for more or for the whole text.
 */
class UwsBody {
  readonly #res: uWS.HttpResponse
  readonly #state: RequestState
  readonly #contentType: string | undefined
  #chunks: Buffer[] = []
  #waiting = 0
  #size = 0
  #lastSeen = false
  #done = false
  #failure: Error | undefined
  #pausedForReader = false
  #whole = false
  #wake: (() => void) | undefined
  #discarding = false

  constructor(res: uWS.HttpResponse, state: RequestState, contentType: string | undefined) {
    this.#res = res
    this.#state = state
    this.#contentType = contentType
    res.onData((chunk, isLast) => this.#arrived(chunk, isLast))
  }

  #arrived(chunk: ArrayBuffer, isLast: boolean): void {
    // uWS reuses the chunk's memory after this callback returns: copied once, into memory of its own,
    // so a worker can be handed it without another copy (lib/port-stream.ts transfers whole buffers).
    if (this.#discarding) {
      this.#size += chunk.byteLength
      if (isLast) this.#done = true
      return
    }
    const copy = Buffer.from(chunk.slice(0))
    this.#size += copy.byteLength
    if (this.#whole && this.#size > MAX_BODY_BYTES) this.#fail(platformErrors.bodyTooLarge(MAX_BODY_BYTES))
    if (this.#failure === undefined) {
      this.#chunks.push(copy)
      this.#waiting += copy.byteLength
    }
    if (isLast) {
      this.#lastSeen = true
      holdNextRequest(this.#res, this.#state)
      // A pipelined request may follow in this same packet and abort this one
      // (see packetParsed): the body counts as read once the packet is parsed.
      void packetParsed().then(() => {
        if (this.#state.aborted) this.#fail(aborted)
        this.#done = true
        this.#notify()
      })
    } else if (!this.#whole && this.#waiting > READ_AHEAD_BYTES && !this.#pausedForReader && !this.#state.aborted) {
      this.#pausedForReader = true
      this.#res.pause()
    }
    this.#notify()
  }

  #fail(error: Error): void {
    this.#failure ??= error
    this.#chunks = []
    this.#waiting = 0
    this.#notify()
  }

  /** The connection closed before the body was read whole. */
  aborted(): void {
    this.#fail(aborted)
  }

  #notify(): void {
    const wake = this.#wake
    this.#wake = undefined
    wake?.()
  }

  #readMore(): void {
    if (!this.#pausedForReader || this.#lastSeen || this.#state.aborted || this.#waiting > READ_AHEAD_BYTES / 2) return
    this.#pausedForReader = false
    this.#res.resume()
  }

  #next(): Promise<void> {
    return new Promise((resolve) => (this.#wake = resolve))
  }

  async text(): Promise<string> {
    this.#whole = true
    if (this.#size > MAX_BODY_BYTES) this.#fail(platformErrors.bodyTooLarge(MAX_BODY_BYTES))
    if (this.#pausedForReader && !this.#lastSeen && !this.#state.aborted) {
      this.#pausedForReader = false
      this.#res.resume()
    }
    while (!this.#done && this.#failure === undefined) await this.#next()
    if (this.#failure !== undefined) throw this.#failure
    return bodyText(Buffer.concat(this.#chunks), this.#contentType)
  }

  async *chunks(): AsyncGenerator<Uint8Array> {
    for (;;) {
      if (this.#failure !== undefined) throw this.#failure
      const chunk = this.#chunks.shift()
      if (chunk !== undefined) {
        this.#waiting -= chunk.byteLength
        this.#readMore()
        yield chunk
        continue
      }
      if (this.#done) return
      await this.#next()
    }
  }

  /** Whether every byte the client sent was read (an answer given before that closes the connection). */
  get read(): boolean {
    return this.#done
  }

  /**
   * The answer went before the body was read: what is left of it is read and
   * dropped, if its declared length says it is at most DISCARD_BYTES more;
   * answers whether it will be (otherwise the connection is to be closed).
   */
  discard(declared: string | undefined): boolean {
    const length = declared === undefined ? NaN : Number(declared)
    if (!Number.isFinite(length) || length - this.#size > DISCARD_BYTES || this.#failure !== undefined) return false
    this.#discarding = true
    this.#chunks = []
    this.#waiting = 0
    if (this.#pausedForReader && !this.#lastSeen && !this.#state.aborted) {
      this.#pausedForReader = false
      this.#res.resume()
    }
    return true
  }
}

/** Requests whose handler ran and whose answer is not written yet; the drain waits for them. */
class InFlight {
  count = 0
  draining = false
  #idle: (() => void) | undefined

  end(state: RequestState): void {
    if (state.ended) return
    state.ended = true
    this.count--
    if (this.count === 0) this.#idle?.()
  }

  /** Resolves true once none is left, false if `graceMillis` passed first. */
  settle(graceMillis: number): Promise<boolean> {
    if (this.count === 0) return Promise.resolve(true)
    if (graceMillis <= 0) return Promise.resolve(false)
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), graceMillis)
      this.#idle = () => {
        clearTimeout(timer)
        resolve(true)
      }
    })
  }
}

function writeHeaders(res: uWS.HttpResponse, response: OutgoingResponse<ResponseBody>): void {
  for (const name in response.headers) res.writeHeader(name, response.headers[name]!)
  if (response.setCookies !== undefined) for (const cookie of response.setCookies) res.writeHeader('set-cookie', cookie)
}

/**
 * Stops reading the connection while this request's answer is not written, so a
 * request the client pipelines in a later packet stays in the kernel's buffer
 * instead of reaching uWS, which closes a connection that sends a request while
 * the one ahead waits (HttpContext.h: it denies "async pipelining"), dropping
 * the answer of a request that already ran. Called once the request is read
 * whole (a body stops arriving too) and only when its answer is not written yet.
 */
function holdNextRequest(res: uWS.HttpResponse, state: RequestState): void {
  if (state.ended || state.aborted || state.paused) return
  state.paused = true
  res.pause()
}

/** Reads the connection again; inside the answer's cork, before it ends (uWS forbids touching a response after). */
function readNextRequest(res: uWS.HttpResponse, state: RequestState | undefined): void {
  if (state === undefined || !state.paused) return
  state.paused = false
  res.resume()
}

function send(res: uWS.HttpResponse, response: OutgoingResponse<string | Uint8Array>, head: boolean, closeConnection: boolean, state?: RequestState): void {
  res.cork(() => {
    readNextRequest(res, state)
    res.writeStatus(statusLine(response.status))
    writeHeaders(res, response)
    if (head) {
      // HEAD: the GET answer's headers and length, no body (a body would be read as the next response).
      // Written by hand: endWithoutBody(length) would leave uWS waiting for that many bytes, and any first
      // argument, undefined too, counts as that length; so uWS cannot close the connection here itself. The
      // header asks the client to (it said so itself, or the server is draining and closes every socket last).
      res.writeHeader('content-length', String(byteLength(response.body)))
      if (closeConnection) res.writeHeader('connection', 'close')
      res.endWithoutBody()
    } else {
      res.end(response.body, closeConnection)
    }
  })
}

/**
 * A streamed answer (lib/http.ts StreamedBody): the head, then each chunk as
 * the socket takes the one before (uWS buffers what it could not send and
 * calls onWritable once it has), then the last chunk. Settles when done,
 * failed (the connection closed without the last chunk) or aborted (the
 * chunks ended, so what they hold is freed).
 */
async function stream(res: uWS.HttpResponse, response: OutgoingResponse<StreamedBody>, state: RequestState, head: boolean, closeConnection: boolean): Promise<void> {
  const chunks = response.body.chunks[Symbol.asyncIterator]()
  let wake: (() => void) | undefined
  state.onAbort = () => wake?.()
  try {
    // A known length goes out as Content-Length (tryEnd), unless the connection is to close after it: only end() can close it.
    const length = closeConnection && !head ? undefined : response.body.length
    res.cork(() => {
      res.writeStatus(statusLine(response.status))
      writeHeaders(res, response)
      if (head) {
        // The client reads no body either way (see send()); the length is the GET answer's when known.
        if (length !== undefined) res.writeHeader('content-length', String(length))
        if (closeConnection) res.writeHeader('connection', 'close')
        readNextRequest(res, state)
        res.endWithoutBody()
      }
    })
    if (head) return
    for (;;) {
      const next = await chunks.next()
      if (state.aborted) return
      if (next.done) {
        // A known length is sent as Content-Length: its last chunk ended the answer (tryEnd below).
        if (length !== undefined && length > 0) throw new Error(`the streamed answer ended short of its length (${length} bytes)`)
        res.cork(() => {
          readNextRequest(res, state)
          res.end('', closeConnection)
        })
        return
      }
      const taken = length === undefined ? writeChunk(res, next.value) : endChunk(res, state, next.value, length)
      if (taken === 'ended') return
      if (taken !== true) {
        let finished = false
        await new Promise<void>((resolve) => {
          wake = resolve
          res.onWritable((offset) => {
            if (taken === false) {
              resolve()
              return true
            }
            // uWS took part of a chunk of a known length: the rest is offered again from where it stopped.
            const [ok, done] = res.tryEnd(taken.chunk.subarray(offset - taken.offset), length!)
            finished = done
            if (ok || done) resolve()
            return ok || done
          })
        })
        wake = undefined
        if (state.aborted) return
        if (finished) return
      }
    }
  } catch (error) {
    log.error('a streamed answer failed partway; its connection is closed', error)
    if (!state.aborted) res.close()
  } finally {
    state.onAbort = undefined
    // Ends the chunks' source early when the client left or it failed (a no-op once they are done).
    await chunks.return?.().catch(() => {})
  }
}

function writeChunk(res: uWS.HttpResponse, chunk: string | Uint8Array): boolean {
  let taken = true
  res.cork(() => {
    taken = res.write(chunk)
  })
  return taken
}

/** A part of an answer of a known length (uWS's tryEnd): written whole, ended, or what uWS has not taken yet. */
function endChunk(res: uWS.HttpResponse, state: RequestState, value: string | Uint8Array, length: number): true | 'ended' | { chunk: Uint8Array; offset: number } {
  const chunk = typeof value === 'string' ? Buffer.from(value) : value
  let answer: true | 'ended' | { chunk: Uint8Array; offset: number } = true
  res.cork(() => {
    const offset = res.getWriteOffset()
    if (offset + chunk.byteLength >= length) readNextRequest(res, state)
    const [ok, done] = res.tryEnd(chunk, length)
    if (done) answer = 'ended'
    else if (!ok) answer = { chunk, offset }
  })
  return answer
}

/** One server's shared parts, so a request carries one reference instead of closures. */
interface ServerParts {
  dataPlane: DataPlane
  inFlight: InFlight
}

/** The per-request view of a uWS request. A class, so no closures are made per request. */
class UwsRequest implements IncomingRequest {
  readonly method: string
  readonly path: string
  readonly query: string
  readonly headers: Record<string, string>
  readonly #head: boolean
  readonly head: boolean
  /** The client asked for the connection to close after this answer (RFC 9112 section 9.6). */
  readonly #lastOnConnection: boolean
  readonly #res: uWS.HttpResponse
  readonly #state: RequestState
  /** Read from the connection as it arrives (uWS needs the reader before the handler returns); none for GET and HEAD. */
  readonly #body: UwsBody | undefined
  #text: Promise<string> | undefined
  /** The peer's address, read once (data-plane.ts asks for it more than once a request). */
  #peer: string | undefined
  readonly #parts: ServerParts

  constructor(parts: ServerParts, res: uWS.HttpResponse, state: RequestState, method: string, path: string, query: string, headers: Record<string, string>, body: UwsBody | undefined) {
    this.#parts = parts
    this.#res = res
    this.#state = state
    this.#head = method === 'HEAD'
    this.head = this.#head
    this.#lastOnConnection = headers.connection !== undefined && headers.connection.toLowerCase() === 'close'
    this.method = routedMethod(method)
    this.path = path
    this.query = query
    this.headers = headers
    this.#body = body
  }

  peerAddress(): string {
    // uWS forbids touching a response after it was aborted.
    if (this.#state.aborted) return this.#peer ?? ''
    return (this.#peer ??= Buffer.from(this.#res.getRemoteAddressAsText()).toString())
  }

  body(): Promise<string> {
    // Made on first use: the answers the data plane has at once never ask.
    if (this.#text === undefined) {
      this.#text =
        this.#body?.text() ??
        packetParsed().then(() => {
          if (this.#state.aborted) throw aborted
          return ''
        })
      this.#text.catch(() => {})
    }
    return this.#text
  }

  bodyChunks(): AsyncIterable<Uint8Array> {
    if (this.#body !== undefined) return this.#body.chunks()
    const state = this.#state
    return (async function* () {
      await packetParsed()
      if (state.aborted) throw aborted
    })()
  }

  write(response: OutgoingResponse<ResponseBody>): void {
    // While draining, a kept-alive connection is closed after its answer, so the client opens its next one elsewhere.
    // An answer given before the body was read whole (a refused upload): the rest of the body is read and
    // dropped, so a client still sending sees the answer rather than a closed socket; past DISCARD_BYTES more
    // of it, the connection is closed instead.
    const close = this.#lastOnConnection || this.#parts.inFlight.draining || (this.#body !== undefined && !this.#body.read && !this.#body.discard(this.headers['content-length']))
    if (response.body instanceof StreamedBody) {
      // In flight until the last chunk is out: a drain waits for it like for any answer.
      void stream(this.#res, response as OutgoingResponse<StreamedBody>, this.#state, this.#head, close).finally(() => this.#parts.inFlight.end(this.#state))
      return
    }
    if (!this.#state.aborted) send(this.#res, response as OutgoingResponse<string | Uint8Array>, this.#head, close, this.#state)
    this.#parts.inFlight.end(this.#state)
  }
}

/**
 * Settles once the packet being parsed now is parsed whole. uWS closes a
 * connection when it parses a request before the one ahead of it is answered
 * (HTTP/1.1 pipelining with an answer that is not written at once), aborting
 * the one ahead. Requests of later packets never meet this (holdNextRequest
 * keeps them unread until the answer is out), but requests read together in one
 * packet do, and no application code runs between them: so a request may run
 * only after its packet is parsed, and only if it was not aborted meanwhile. The
 * client then sees the connection closed, nothing answered and nothing done,
 * never a sign-up made without an answer. Answers the data plane has at once
 * (cached, refusals) are written inside the handler, in order, as uWS answers
 * pipelined requests itself. (Microtasks run between two requests of one packet;
 * setImmediate runs after the packet.)
 */
let parsed: Promise<void> | undefined
function packetParsed(): Promise<void> {
  return (parsed ??= new Promise((resolve) =>
    setImmediate(() => {
      parsed = undefined
      resolve()
    }),
  ))
}

// req.forEach's callback, shared by all requests (the handler runs to completion before the next).
let collecting: Record<string, string> = {}
function collectHeader(name: string, value: string): void {
  collecting[name] = value
}

export function startUwsServer(dataPlane: DataPlane, host: string, port: number): Promise<RunningServer> {
  const app = uWS.App()
  const inFlight = new InFlight()
  const parts: ServerParts = { dataPlane, inFlight }
  // Realtime's socket (realtime-socket.ts), delivered through this app's own publish; a GET that is not an upgrade falls through.
  const realtime = dataPlane.realtime
  realtime.attach({ publish: (topic, data, binary) => void app.publish(topic, data, binary), subscribers: (topic) => app.numSubscribers(topic) })
  for (const route of REALTIME_SOCKET_ROUTES) app.ws(route, uwsRealtimeSocket(dataPlane, realtime))
  app.any('/*', (res, req) => {
    const method = req.getCaseSensitiveMethod().toUpperCase()
    if (inFlight.draining) {
      send(res, stoppingResponse(), method === 'HEAD', true)
      return
    }
    const state: RequestState = { aborted: false, ended: false, paused: false }
    inFlight.count++
    let body: UwsBody | undefined
    res.onAborted(() => {
      state.aborted = true
      state.onAbort?.()
      body?.aborted()
      inFlight.end(state)
    })
    const headers: Record<string, string> = (collecting = {})
    req.forEach(collectHeader)
    const hasBody = method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS'
    // The body must be subscribed to before this callback returns.
    if (hasBody) body = new UwsBody(res, state, headers['content-type'])
    const request = new UwsRequest(parts, res, state, method, req.getUrl(), req.getQuery() ?? '', headers, body)
    answerRequest(dataPlane, request, (response) => request.write(response))
    // A body is read later (UwsBody holds the next request once it has it whole).
    if (!hasBody) holdNextRequest(res, state)
  })
  return new Promise((resolve, reject) => {
    app.listen(host, port, (socket) => {
      if (!socket) {
        reject(new Error(`could not listen on ${host}:${port}`))
        return
      }
      let closed: Promise<void> | undefined
      resolve({
        port: uWS.us_socket_local_port(socket),
        close: (graceMillis = 0) =>
          (closed ??= (async () => {
            uWS.us_listen_socket_close(socket)
            inFlight.draining = true
            const settled = await inFlight.settle(graceMillis)
            // A close without grace (tests, a failed start) cuts requests on purpose.
            if (!settled && graceMillis > 0) {
              log.error('stopped before every request in flight was answered', undefined, { unanswered: inFlight.count, graceMillis })
            }
            // Realtime's sockets are told the node is going (1001), so realtime-js reconnects at once.
            realtime.closeAll(1001, 'the node is stopping')
            // Closes the kept-alive sockets too.
            app.close()
          })()),
      })
    })
  })
}
