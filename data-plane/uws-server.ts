// The production HTTP server: uWebSockets.js on the main thread. It only
// parses, hands the request to DataPlane.handle, and writes the answer.
import { STATUS_CODES } from 'node:http'
import uWS from '@trufflesuite/uws-js-unofficial'
import { platformErrors } from '../lib/errors.ts'
import { log } from '../lib/log.ts'
import type { IncomingRequest, OutgoingResponse, ResponseBody } from '../lib/http.ts'
import type { DataPlane } from './data-plane.ts'
import { MAX_BODY_BYTES } from '../lib/http/body.ts'
import { platformErrorResponse } from '../lib/http/errors.ts'


export interface RunningServer {
  port: number
  /**
   * Stops listening, waits up to `graceMillis` (default 0) for the requests in
   * flight to be answered, then closes every connection. Requests that arrive on
   * kept-alive connections meanwhile are refused with 503 and the connection closed.
   */
  close(graceMillis?: number): Promise<void>
}

const statusLines = new Map<number, string>()
function statusLine(status: number): string {
  let line = statusLines.get(status)
  if (line === undefined) {
    line = `${status} ${STATUS_CODES[status] ?? 'Unknown'}`
    statusLines.set(status, line)
  }
  return line
}

function readBody(res: uWS.HttpResponse, state: { aborted: boolean }): Promise<string> {
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
      if (isLast) resolve(Buffer.concat(chunks).toString('utf8'))
    })
    if (state.aborted) reject(new Error('aborted'))
  })
}

/** A request's life, for the drain: answered or aborted ends it once. */
interface RequestState {
  aborted: boolean
  ended: boolean
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

function send(res: uWS.HttpResponse, response: OutgoingResponse<ResponseBody>, closeConnection: boolean): void {
  res.cork(() => {
    res.writeStatus(statusLine(response.status))
    for (const name in response.headers) res.writeHeader(name, response.headers[name]!)
    res.end(response.body, closeConnection)
  })
}

function write(res: uWS.HttpResponse, state: RequestState, response: OutgoingResponse<ResponseBody>, inFlight: InFlight): void {
  // While draining, a kept-alive connection is closed after its answer, so the client opens its next one elsewhere.
  if (!state.aborted) send(res, response, inFlight.draining)
  inFlight.end(state)
}

/** The per-request view of a uWS request. A class, so no closures are made per request. */
class UwsRequest implements IncomingRequest {
  readonly method: string
  readonly path: string
  readonly query: string
  readonly headers: Record<string, string>
  readonly #res: uWS.HttpResponse
  readonly #state: RequestState
  readonly #body: Promise<string>

  constructor(res: uWS.HttpResponse, state: RequestState, method: string, path: string, query: string, headers: Record<string, string>, body: Promise<string>) {
    this.#res = res
    this.#state = state
    this.method = method
    this.path = path
    this.query = query
    this.headers = headers
    this.#body = body
  }

  peerAddress(): string {
    // uWS forbids touching a response after it was aborted.
    return this.#state.aborted ? '' : Buffer.from(this.#res.getRemoteAddressAsText()).toString()
  }

  body(): Promise<string> {
    return this.#body
  }
}

// req.forEach's callback, shared by all requests (the handler runs to completion before the next).
let collecting: Record<string, string> = {}
function collectHeader(name: string, value: string): void {
  collecting[name] = value
}

const noBody = Promise.resolve('')

export function startUwsServer(dataPlane: DataPlane, host: string, port: number): Promise<RunningServer> {
  const app = uWS.App()
  const inFlight = new InFlight()
  app.any('/*', (res, req) => {
    if (inFlight.draining) {
      send(res, platformErrorResponse(platformErrors.stopping()), true)
      return
    }
    const state: RequestState = { aborted: false, ended: false }
    inFlight.count++
    res.onAborted(() => {
      state.aborted = true
      inFlight.end(state)
    })
    const headers: Record<string, string> = (collecting = {})
    req.forEach(collectHeader)
    const method = req.getCaseSensitiveMethod().toUpperCase()
    const hasBody = method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS'
    // The body must be subscribed to before this callback returns.
    let body = noBody
    if (hasBody) {
      body = readBody(res, state)
      body.catch(() => {})
    }
    let answer: OutgoingResponse<ResponseBody> | Promise<OutgoingResponse<ResponseBody>>
    try {
      answer = dataPlane.handle(new UwsRequest(res, state, method, req.getUrl(), req.getQuery() ?? '', headers, body))
    } catch (error) {
      // handle() answers its own failures; this is a bug, and the request must still end.
      log.error('request handler threw', error, { path: req.getUrl() })
      answer = platformErrorResponse(platformErrors.internal())
    }
    if (answer instanceof Promise) {
      answer.then(
        (response) => write(res, state, response, inFlight),
        (error: unknown) => {
          log.error('request failed', error)
          write(res, state, platformErrorResponse(platformErrors.internal()), inFlight)
        },
      )
    } else {
      write(res, state, answer, inFlight)
    }
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
            // Present in the native build though missing from its typings: closes keep-alive sockets too.
            ;(app as uWS.TemplatedApp & { close?: () => void }).close?.()
          })()),
      })
    })
  })
}
