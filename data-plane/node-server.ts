// The same data plane behind node:http instead of uWebSockets.js. Not used in
// production: it is the peer `npm run bench:dataplane` measures against.
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { platformErrors } from '../lib/errors.ts'
import type { IncomingRequest, OutgoingResponse, ResponseBody } from '../lib/http.ts'
import type { DataPlane } from './data-plane.ts'
import { MAX_BODY_BYTES } from '../lib/http/body.ts'
import { platformErrorResponse } from '../lib/http/errors.ts'
import type { RunningServer } from './uws-server.ts'

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
  })
}

export function startNodeServer(dataPlane: DataPlane, host: string, port: number): Promise<RunningServer> {
  const server = http.createServer((req, res) => {
    const url = req.url ?? '/'
    const mark = url.indexOf('?')
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers[name] = value
    const body = req.method === 'GET' || req.method === 'HEAD' ? Promise.resolve('') : readBody(req)
    body.catch(() => {})
    const request: IncomingRequest = {
      method: req.method ?? 'GET',
      path: mark === -1 ? url : url.slice(0, mark),
      query: mark === -1 ? '' : url.slice(mark + 1),
      headers,
      peerAddress: () => req.socket.remoteAddress ?? '',
      body: () => body,
    }
    const write = (response: OutgoingResponse<ResponseBody>) => {
      res.writeHead(response.status, response.headers)
      res.end(response.body)
    }
    const answer = dataPlane.handle(request)
    if (answer instanceof Promise) answer.then(write, () => write(platformErrorResponse(platformErrors.internal())))
    else write(answer)
  })
  server.keepAliveTimeout = 10000
  return new Promise((resolve) => {
    server.listen(port, host, () => {
      resolve({
        port: (server.address() as AddressInfo).port,
        close: (graceMillis = 0) =>
          new Promise<void>((done) => {
            // close() waits for the requests in flight; after the grace, whatever is left is cut.
            const cut = setTimeout(() => server.closeAllConnections(), graceMillis)
            server.close(() => {
              clearTimeout(cut)
              done()
            })
            server.closeIdleConnections()
          }),
      })
    })
  })
}
