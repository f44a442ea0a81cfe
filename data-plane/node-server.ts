// The data plane behind node:http instead of uWebSockets.js: served when the
// operator asks for it (BASEPLANE_HTTP_ENGINE=node, where no native uWS build
// loads) and measured as the peer by `npm run bench:dataplane`. node:http
// answers pipelined requests in order itself.
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { platformErrors } from '../lib/errors.ts'
import { log } from '../lib/log.ts'
import type { IncomingRequest, OutgoingResponse, ResponseBody } from '../lib/http.ts'
import type { DataPlane } from './data-plane.ts'
import { MAX_BODY_BYTES } from '../lib/http/body.ts'
import { answerRequest, MAX_HEADER_BYTES, routedMethod, stoppingResponse, type RunningServer } from './http-server.ts'

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_BODY_BYTES) reject(platformErrors.bodyTooLarge(MAX_BODY_BYTES))
      else chunks.push(chunk)
    })
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    req.on('error', reject)
    req.on('aborted', () => reject(new Error('the connection closed before the request was read')))
  })
}

const noBody = Promise.resolve('')

function write(res: http.ServerResponse, response: OutgoingResponse<ResponseBody>, closeConnection: boolean): void {
  if (res.destroyed) return
  const headers: Record<string, string> = { ...response.headers }
  // node:http leaves a HEAD answer's body out itself; its length is the GET answer's.
  headers['content-length'] = String(typeof response.body === 'string' ? Buffer.byteLength(response.body) : response.body.byteLength)
  if (closeConnection) headers.connection = 'close'
  res.writeHead(response.status, headers)
  res.end(response.body)
}

export function startNodeServer(dataPlane: DataPlane, host: string, port: number): Promise<RunningServer> {
  let draining = false
  let inFlight = 0
  let idle: (() => void) | undefined
  const server = http.createServer({ maxHeaderSize: MAX_HEADER_BYTES }, (req, res) => {
    if (draining) {
      write(res, stoppingResponse(), true)
      return
    }
    inFlight++
    const url = req.url ?? '/'
    const mark = url.indexOf('?')
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers[name] = value
    const method = routedMethod(req.method ?? 'GET')
    const body = method === 'GET' || method === 'OPTIONS' ? noBody : readBody(req)
    body.catch(() => {})
    const request: IncomingRequest = {
      method,
      path: mark === -1 ? url : url.slice(0, mark),
      query: mark === -1 ? '' : url.slice(mark + 1),
      headers,
      peerAddress: () => req.socket.remoteAddress ?? '',
      body: () => body,
    }
    answerRequest(dataPlane, request, (response) => {
      write(res, response, draining)
      if (--inFlight === 0) idle?.()
    })
  })
  server.keepAliveTimeout = 10000
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      let closed: Promise<void> | undefined
      resolve({
        port: (server.address() as AddressInfo).port,
        close: (graceMillis = 0) =>
          (closed ??= new Promise<void>((done) => {
            draining = true
            const cut = () => {
              // A close without grace (tests, a failed start) cuts requests on purpose.
              if (inFlight > 0 && graceMillis > 0) log.error('stopped before every request in flight was answered', undefined, { unanswered: inFlight, graceMillis })
              server.closeAllConnections()
            }
            // The timer stays as the backstop for a connection that lingers after the last answer.
            const timer = setTimeout(cut, graceMillis)
            // Answers written while draining close their connection; the rest are idle once the last answer is out.
            idle = () => setImmediate(() => server.closeIdleConnections())
            server.close(() => {
              clearTimeout(timer)
              done()
            })
            server.closeIdleConnections()
            if (inFlight === 0) idle()
          })),
      })
    })
  })
}
