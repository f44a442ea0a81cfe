// What both HTTP engines (uws-server.ts, node-server.ts) share: the running
// server's face, and how a parsed request is answered, so the two differ only in
// how they read and write bytes.
import { platformErrors } from '../lib/errors.ts'
import { log } from '../lib/log.ts'
import type { IncomingRequest, OutgoingResponse, ResponseBody } from '../lib/http.ts'
import { platformErrorResponse } from '../lib/http/errors.ts'
import type { DataPlane } from './data-plane.ts'

/**
 * Largest request line plus headers either engine reads: node:http's default
 * (16 KiB). uWS's own default is 4 KiB, which a signed-in user's access token with
 * some metadata outgrows; it reads this variable when its library loads. Larger
 * requests are refused by the server itself with 431 before any of our code runs.
 */
export const MAX_HEADER_BYTES = 16 * 1024

export interface RunningServer {
  port: number
  /**
   * Stops listening, waits up to `graceMillis` (default 0) for the requests in
   * flight to be answered, then closes every connection. Requests that arrive on
   * kept-alive connections meanwhile are refused with 503 and the connection closed.
   */
  close(graceMillis?: number): Promise<void>
}

export type StartServer = (dataPlane: DataPlane, host: string, port: number) => Promise<RunningServer>

/**
 * HEAD is GET without the body (RFC 9110 section 9.3.2): the engines route it as
 * GET, so every GET route answers it, and write the headers only.
 */
export function routedMethod(method: string): string {
  return method === 'HEAD' ? 'GET' : method
}

/** The answer the server writes while it stops: 503, Retry-After, and the connection closed. */
export function stoppingResponse(): OutgoingResponse {
  return platformErrorResponse(platformErrors.stopping())
}

/**
 * Hands the request to the data plane and calls `write` once with its answer.
 * handle() answers its own failures; what escapes it is a bug, logged, and the
 * request still ends.
 */
export function answerRequest(dataPlane: DataPlane, request: IncomingRequest, write: (response: OutgoingResponse<ResponseBody>) => void): void {
  let answer: OutgoingResponse<ResponseBody> | Promise<OutgoingResponse<ResponseBody>>
  try {
    answer = dataPlane.handle(request)
  } catch (error) {
    log.error('request handler threw', error, { path: request.path })
    answer = platformErrorResponse(platformErrors.internal())
  }
  if (answer instanceof Promise) {
    answer.then(write, (error: unknown) => {
      log.error('request failed', error, { path: request.path })
      write(platformErrorResponse(platformErrors.internal()))
    })
  } else {
    write(answer)
  }
}
