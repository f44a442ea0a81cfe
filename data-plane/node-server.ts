// The data plane behind node:http instead of uWebSockets.js: served when the
// operator asks for it (BASEPLANE_HTTP_ENGINE=node, where no native uWS build
// loads) and measured as the peer by `npm run bench:dataplane`. node:http
// answers pipelined requests in order itself.
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Duplex } from 'node:stream'
import { platformErrors } from '../lib/errors.ts'
import { log } from '../lib/log.ts'
import { StreamedBody, type IncomingRequest, type OutgoingResponse, type ResponseBody } from '../lib/http.ts'
import type { DataPlane } from './data-plane.ts'
import { bodyText, MAX_BODY_BYTES } from '../lib/http/body.ts'
import { answerRequest, MAX_HEADER_BYTES, routedMethod, stoppingResponse, type RunningServer } from './http-server.ts'
import { closeNodeSocket, isRealtimeSocket, nodeRoutesUpgrades } from './realtime-socket.ts'

/** The body as it arrives (lib/http.ts bodyChunks): node's stream is read no faster than its reader. */
async function* bodyChunks(req: http.IncomingMessage): AsyncGenerator<Uint8Array> {
  let complete = false
  req.once('end', () => (complete = true))
  for await (const chunk of req) yield chunk as Buffer
  if (!complete && !req.complete) throw new Error('the connection closed before the request was read')
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_BODY_BYTES) reject(platformErrors.bodyTooLarge(MAX_BODY_BYTES))
      else chunks.push(chunk)
    })
    req.on('end', () => resolve(bodyText(Buffer.concat(chunks), req.headers['content-type'])))
    req.on('error', reject)
    req.on('aborted', () => reject(new Error('the connection closed before the request was read')))
  })
}

const noBody = Promise.resolve('')

/** Whether the request has a body not read to its end (node marks a bodiless request complete only once it is read). */
function unreadBody(req: http.IncomingMessage): boolean {
  const declared = req.headers['content-length']
  const hasBody = req.headers['transfer-encoding'] !== undefined || (declared !== undefined && declared !== '0')
  return hasBody && !req.complete
}

/** The answer's header lines, its Set-Cookie lines each one of its own. */
function headLines(response: OutgoingResponse<ResponseBody>, closeConnection: boolean): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = { ...response.headers }
  if (response.setCookies !== undefined && response.setCookies.length > 0) headers['set-cookie'] = [...response.setCookies]
  if (closeConnection) headers.connection = 'close'
  return headers
}

/** A streamed answer (lib/http.ts StreamedBody), chunked, each chunk once the socket took the one before; see uws-server.ts. */
async function stream(res: http.ServerResponse, response: OutgoingResponse<StreamedBody>, closeConnection: boolean): Promise<void> {
  const chunks = response.body.chunks[Symbol.asyncIterator]()
  const closed = new Promise<void>((resolve) => res.once('close', resolve))
  try {
    const head = headLines(response, closeConnection)
    if (response.body.length !== undefined) head['content-length'] = String(response.body.length)
    res.writeHead(response.status, head)
    for (;;) {
      const next = await chunks.next()
      if (res.destroyed) return
      if (next.done) {
        res.end()
        return
      }
      if (!res.write(next.value)) await Promise.race([new Promise((resolve) => res.once('drain', resolve)), closed])
    }
  } catch (error) {
    log.error('a streamed answer failed partway; its connection is closed', error)
    res.destroy()
  } finally {
    await chunks.return?.().catch(() => {})
  }
}

function write(res: http.ServerResponse, response: OutgoingResponse<ResponseBody>, closeConnection: boolean): Promise<void> | undefined {
  if (res.destroyed) return undefined
  if (response.body instanceof StreamedBody) return stream(res, response as OutgoingResponse<StreamedBody>, closeConnection)
  // An answer given before the body was read whole (a refused upload) ends the connection, as uws-server.ts does.
  const headers = headLines(response, closeConnection || unreadBody(res.req))
  // node:http leaves a HEAD answer's body out itself; its length is the GET answer's.
  headers['content-length'] = String(typeof response.body === 'string' ? Buffer.byteLength(response.body) : response.body.byteLength)
  res.writeHead(response.status, headers)
  res.end(response.body)
  return undefined
}

export function startNodeServer(dataPlane: DataPlane, host: string, port: number): Promise<RunningServer> {
  let draining = false
  let inFlight = 0
  let idle: (() => void) | undefined
  // Realtime's socket is accepted and closed with a reason the client shows (realtime-socket.ts); any other upgrade is a request.
  const upgrades = { shouldUpgradeCallback: (req: http.IncomingMessage) => isRealtimeSocket((req.url ?? '/').split('?')[0]!) }
  const server = http.createServer({ maxHeaderSize: MAX_HEADER_BYTES, ...upgrades }, (req, res) => {
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
    // Read when the route asks, whole or as it arrives (node keeps it in the socket until then).
    let body: Promise<string> | undefined
    const request: IncomingRequest = {
      method,
      head: req.method === 'HEAD',
      path: mark === -1 ? url : url.slice(0, mark),
      query: mark === -1 ? '' : url.slice(mark + 1),
      headers,
      peerAddress: () => req.socket.remoteAddress ?? '',
      body: () => {
        if (body === undefined) {
          body = method === 'GET' || method === 'OPTIONS' ? noBody : readBody(req)
          body.catch(() => {})
        }
        return body
      },
      bodyChunks: () => bodyChunks(req),
    }
    answerRequest(dataPlane, request, (response) => {
      const ended = () => {
        if (--inFlight === 0) idle?.()
      }
      const streaming = write(res, response, draining)
      // A streamed answer is in flight until its last chunk is out.
      if (streaming === undefined) ended()
      else void streaming.finally(ended)
    })
  })
  if (nodeRoutesUpgrades()) server.on('upgrade', (req: http.IncomingMessage, socket: Duplex) => closeNodeSocket(dataPlane, req, socket))
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
