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

function readBody(res: uWS.HttpResponse, state: RequestState, contentType: string | undefined): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    res.onData((chunk, isLast) => {
      // uWS reuses the chunk's memory after this callback returns: copy it.
      size += chunk.byteLength
      if (size > MAX_BODY_BYTES) {
        reject(platformErrors.bodyTooLarge(MAX_BODY_BYTES))
        return
      }
      chunks.push(Buffer.from(Buffer.from(chunk)))
      if (!isLast) return
      holdNextRequest(res, state)
      // A pipelined request may follow in this same packet and abort this one
      // (see packetParsed): the body counts as read once the packet is parsed.
      packetParsed().then(() => (state.aborted ? reject(aborted) : resolve(bodyText(Buffer.concat(chunks), contentType))))
    })
    if (state.aborted) reject(aborted)
  })
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
    res.cork(() => {
      res.writeStatus(statusLine(response.status))
      writeHeaders(res, response)
      if (head) {
        // No length is known: the client reads no body either way (see send()).
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
        res.cork(() => {
          readNextRequest(res, state)
          res.end('', closeConnection)
        })
        return
      }
      let taken = true
      res.cork(() => {
        taken = res.write(next.value)
      })
      if (!taken) {
        await new Promise<void>((resolve) => {
          wake = resolve
          res.onWritable(() => {
            resolve()
            return true
          })
        })
        wake = undefined
        if (state.aborted) return
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
  /** The client asked for the connection to close after this answer (RFC 9112 section 9.6). */
  readonly #lastOnConnection: boolean
  readonly #res: uWS.HttpResponse
  readonly #state: RequestState
  /** Read from the connection as it arrives (uWS needs the reader before the handler returns), or made on first use. */
  #body: Promise<string> | undefined
  /** The peer's address, read once (data-plane.ts asks for it more than once a request). */
  #peer: string | undefined
  readonly #parts: ServerParts

  constructor(parts: ServerParts, res: uWS.HttpResponse, state: RequestState, method: string, path: string, query: string, headers: Record<string, string>, body: Promise<string> | undefined) {
    this.#parts = parts
    this.#res = res
    this.#state = state
    this.#head = method === 'HEAD'
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
    return (this.#body ??= packetParsed().then(() => {
      if (this.#state.aborted) throw aborted
      return ''
    }))
  }

  write(response: OutgoingResponse<ResponseBody>): void {
    // While draining, a kept-alive connection is closed after its answer, so the client opens its next one elsewhere.
    const close = this.#lastOnConnection || this.#parts.inFlight.draining
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
    res.onAborted(() => {
      state.aborted = true
      state.onAbort?.()
      inFlight.end(state)
    })
    const headers: Record<string, string> = (collecting = {})
    req.forEach(collectHeader)
    const hasBody = method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS'
    // The body must be subscribed to before this callback returns.
    let body: Promise<string> | undefined
    if (hasBody) {
      body = readBody(res, state, headers['content-type'])
      body.catch(() => {})
    }
    const request = new UwsRequest(parts, res, state, method, req.getUrl(), req.getQuery() ?? '', headers, body)
    answerRequest(dataPlane, request, (response) => request.write(response))
    // A body is read whole later (readBody holds the next request then).
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
