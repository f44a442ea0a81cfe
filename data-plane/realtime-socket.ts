// Realtime's WebSocket (`{base_url}/realtime/v1/websocket`, where realtime-js
// connects for supabase.channel()) until Realtime is served. Over plain HTTP
// the path answers 404 service_not_offered (unserved.ts), but a WebSocket
// client never shows an HTTP answer to its upgrade: realtime-js reports only
// `CHANNEL_ERROR` with "channel error: transport failure". So the upgrade is
// accepted and the socket closed at once, with a close code and reason the
// client does show: realtime-js (lib/normalizeChannelError.ts) turns the
// close event into `socket closed: <code> (<reason>)`, which subscribe()'s
// callback receives with CHANNEL_ERROR. The upgrade is first answered by the
// data plane as any request (project, key, state, throttle), so the close
// says what that answer says: 4000 + its HTTP status (4404 for
// service_not_offered, 4401 for a wrong key, 4403 for a suspended project),
// its code and message as the reason. Both HTTP engines use this module
// (uws-server.ts as a uWS WebSocket route, node-server.ts on node:http's
// 'upgrade' event). When Realtime lands, its concern takes the path instead.
import crypto from 'node:crypto'
import type http from 'node:http'
import type { Duplex } from 'node:stream'
import type uWS from '@based/uws'
import type { IncomingRequest, OutgoingResponse, ResponseBody } from '../lib/http.ts'
import type { DataPlane } from './data-plane.ts'
import { answerRequest } from './http-server.ts'

/** The socket's path as uWS routes take it: the ref in a /project/<ref>/ prefix, or in the Host's first label. */
export const REALTIME_SOCKET_ROUTES = ['/realtime/v1/websocket', '/project/:ref/realtime/v1/websocket'] as const

const SOCKET_PATH = /^(?:\/project\/[^/]+)?\/realtime\/v1\/websocket$/

/** Whether `path` (without its query) is Realtime's socket. */
export function isRealtimeSocket(path: string): boolean {
  return SOCKET_PATH.test(path)
}

/** How the socket is closed: a code and a reason of at most 123 bytes (RFC 6455 section 5.5: a control frame's payload is at most 125). */
export interface SocketClose {
  code: number
  reason: string
  /** Set once uWS closed the socket (the client left first): it may not be touched after. */
  gone?: boolean
}

const MAX_REASON_BYTES = 123

/** `text` in at most 123 bytes: whole, else its first clause (up to "; "), else cut with "...". */
export function shortReason(text: string): string {
  if (Buffer.byteLength(text) <= MAX_REASON_BYTES) return text
  const clause = text.split('; ')[0]!
  if (Buffer.byteLength(clause) <= MAX_REASON_BYTES) return clause
  let cut = clause
  while (Buffer.byteLength(cut) > MAX_REASON_BYTES - 3) cut = cut.slice(0, -1)
  return `${cut}...`
}

function bodyText(body: ResponseBody): string {
  if (typeof body === 'string') return body
  return body instanceof Uint8Array ? Buffer.from(body).toString() : ''
}

/** The close that says what the data plane answered the upgrade request with (its refusal's code and message). */
export function closeOf(response: OutgoingResponse<ResponseBody>): SocketClose {
  // Nothing serves the path yet: an answer that is not a refusal is not one to open a socket on.
  if (response.status < 400) return { code: 1011, reason: 'Realtime is not served at this path' }
  let said = `HTTP ${response.status}`
  try {
    const body = JSON.parse(bodyText(response.body)) as { code?: unknown; message?: unknown }
    if (typeof body.code === 'string' && typeof body.message === 'string') said = `${body.code}: ${body.message}`
  } catch {
    // Not the platform's JSON: the status says it.
  }
  return { code: 4000 + response.status, reason: shortReason(said) }
}

/** Answers the upgrade request as any request of the data plane, and calls `done` with the close that says what was answered. */
export function refusalOf(dataPlane: DataPlane, request: IncomingRequest, done: (close: SocketClose) => void): void {
  answerRequest(dataPlane, request, (response) => done(closeOf(response)))
}

/** The subprotocol to accept: the client's first (phoenix), so a client that asked for one completes the handshake. */
function chosenProtocol(offered: string | undefined): string {
  return offered?.split(',')[0]?.trim() ?? ''
}

/** The uWS WebSocket route: the upgrade answered by the data plane, then accepted and closed at once. */
export function uwsRealtimeSocket(dataPlane: DataPlane): uWS.WebSocketBehavior<SocketClose> {
  return {
    // Nothing is read from the client but its close frame.
    maxPayloadLength: 1024,
    upgrade: (res, req, context) => {
      const headers: Record<string, string> = {}
      req.forEach((name, value) => (headers[name] = value))
      const peer = Buffer.from(res.getRemoteAddressAsText()).toString()
      let aborted = false
      res.onAborted(() => (aborted = true))
      const request: IncomingRequest = { method: 'GET', path: req.getUrl(), query: req.getQuery() ?? '', headers, peerAddress: () => peer, body: () => Promise.resolve('') }
      refusalOf(dataPlane, request, (close) => {
        if (aborted) return
        res.cork(() => res.upgrade(close, headers['sec-websocket-key'] ?? '', chosenProtocol(headers['sec-websocket-protocol']), headers['sec-websocket-extensions'] ?? '', context))
      })
    },
    open: (ws) => {
      // Closed on the next turn, not inside the handshake's cork: closed there, uWS holds back the FIN after the
      // client's own close frame until its close timeout (seconds), and the client reports the close only then.
      setImmediate(() => {
        const close = ws.getUserData()
        if (!close.gone) ws.end(close.code, close.reason)
      })
    },
    close: (ws) => {
      ws.getUserData().gone = true
    },
  }
}

/** RFC 6455 section 1.3: the key's answer. */
const HANDSHAKE_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11'

/** A close frame from the server (unmasked, RFC 6455 section 5.5.1): the code, then the reason. */
function closeFrame({ code, reason }: SocketClose): Buffer {
  const text = Buffer.from(reason)
  return Buffer.concat([Buffer.from([0x88, 2 + text.length, code >> 8, code & 0xff]), text])
}

/**
 * Whether node:http here routes only the upgrades a callback accepts to
 * 'upgrade' (shouldUpgradeCallback: Node 22.21 and 24.9 on). Before, a
 * listener would take every upgrade (curl's `Upgrade: h2c` too), so none is
 * registered and the socket's upgrade is answered as a request, as before.
 */
export function nodeRoutesUpgrades(version = process.versions.node): boolean {
  const [major, minor] = version.split('.').map(Number) as [number, number]
  return major > 24 || (major === 24 && minor >= 9) || (major === 22 && minor >= 21)
}

/**
 * node:http's 'upgrade' of Realtime's socket (only it reaches here:
 * node-server.ts's shouldUpgradeCallback): the data plane's answer, then the
 * handshake and the close frame written by hand; the client's own close
 * frame (or a second's wait) ends the connection.
 */
export function closeNodeSocket(dataPlane: DataPlane, req: http.IncomingMessage, socket: Duplex): void {
  socket.on('error', () => {})
  const url = req.url ?? '/'
  const mark = url.indexOf('?')
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers[name] = value
  const request: IncomingRequest = {
    method: 'GET',
    path: mark === -1 ? url : url.slice(0, mark),
    query: mark === -1 ? '' : url.slice(mark + 1),
    headers,
    peerAddress: () => req.socket.remoteAddress ?? '',
    body: () => Promise.resolve(''),
  }
  const key = request.headers['sec-websocket-key']
  if (key === undefined || request.headers.upgrade?.toLowerCase() !== 'websocket') {
    socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n')
    return
  }
  refusalOf(dataPlane, request, (close) => {
    if (socket.destroyed) return
    const accept = crypto.createHash('sha1').update(key + HANDSHAKE_GUID).digest('base64')
    const protocol = chosenProtocol(request.headers['sec-websocket-protocol'])
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\nsec-websocket-accept: ${accept}\r\n${protocol ? `sec-websocket-protocol: ${protocol}\r\n` : ''}\r\n`)
    socket.write(closeFrame(close))
    const cut = setTimeout(() => socket.destroy(), 1000)
    socket.once('data', () => {
      clearTimeout(cut)
      socket.end()
    })
    socket.once('close', () => clearTimeout(cut))
  })
}
