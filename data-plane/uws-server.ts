// The production HTTP server: uWebSockets.js on the main thread. It only
// parses, hands the request to DataPlane.handle, and writes the answer.
import { STATUS_CODES } from 'node:http'
import uWS from '@trufflesuite/uws-js-unofficial'
import { platformErrors } from '../lib/errors.ts'
import type { DataPlane, IncomingRequest } from './data-plane.ts'
import { errorResponse, type OutgoingResponse } from './responses.ts'

export const MAX_BODY_BYTES = 1024 * 1024

export interface RunningServer {
  port: number
  close(): Promise<void>
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

function write(res: uWS.HttpResponse, state: { aborted: boolean }, response: OutgoingResponse): void {
  if (state.aborted) return
  res.cork(() => {
    res.writeStatus(statusLine(response.status))
    for (const name in response.headers) res.writeHeader(name, response.headers[name]!)
    res.end(response.body)
  })
}

/** The per-request view of a uWS request. A class, so no closures are made per request. */
class UwsRequest implements IncomingRequest {
  readonly method: string
  readonly path: string
  readonly query: string
  readonly headers: Record<string, string>
  readonly #res: uWS.HttpResponse
  readonly #state: { aborted: boolean }
  readonly #body: Promise<string>

  constructor(res: uWS.HttpResponse, state: { aborted: boolean }, method: string, path: string, query: string, headers: Record<string, string>, body: Promise<string>) {
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
  app.any('/*', (res, req) => {
    const state = { aborted: false }
    res.onAborted(() => {
      state.aborted = true
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
    const answer = dataPlane.handle(new UwsRequest(res, state, method, req.getUrl(), req.getQuery() ?? '', headers, body))
    if (answer instanceof Promise) {
      answer.then(
        (response) => write(res, state, response),
        () => write(res, state, errorResponse(platformErrors.internal(), undefined, headers)),
      )
    } else {
      write(res, state, answer)
    }
  })
  return new Promise((resolve, reject) => {
    app.listen(host, port, (socket) => {
      if (!socket) {
        reject(new Error(`could not listen on ${host}:${port}`))
        return
      }
      resolve({
        port: uWS.us_socket_local_port(socket),
        close: async () => {
          uWS.us_listen_socket_close(socket)
          // Present in the native build though missing from its typings: closes keep-alive sockets too.
          ;(app as uWS.TemplatedApp & { close?: () => void }).close?.()
        },
      })
    })
  })
}
