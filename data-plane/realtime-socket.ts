// Realtime's WebSocket (`{base_url}/realtime/v1/websocket`, where realtime-js
// connects for supabase.channel()). The upgrade is first answered by the data
// plane as any request of the project (DataPlane.admitSocket: project, key,
// state, throttle); admitted, the socket opens and a RealtimeSession holds its
// conversation (realtime/session.ts). Refused, the upgrade is still accepted,
// and the socket closed at once with a close code and reason the client
// shows: a WebSocket client never shows an HTTP answer to its upgrade, but
// realtime-js (lib/normalizeChannelError.ts) turns a close into
// `socket closed: <code> (<reason>)`, which subscribe()'s callback receives
// with CHANNEL_ERROR. The code is 4000 + the answer's HTTP status (4401 for a
// wrong key, 4403 for a suspended project), the reason its code and message.
// Realtime is served on the uWebSockets.js engine (the default); on
// node:http's (BASEPLANE_HTTP_ENGINE=node) the socket is closed with 4501,
// saying so.
import crypto from 'node:crypto'
import type http from 'node:http'
import type { Duplex } from 'node:stream'
import type uWS from '@based/uws'
import type { IncomingRequest, OutgoingResponse, ResponseBody } from '../lib/http.ts'
import type { DataPlane, SocketAdmission } from './data-plane.ts'
import { decodeFrame, FrameError, PROTOCOL_VERSIONS, type ProtocolVersion } from '../workers/realtime/frames.ts'
import type { RealtimeHub, SocketLink } from './realtime/hub.ts'
import type { RealtimeSession } from './realtime/session.ts'

/** The socket's path under a project. */
export const REALTIME_SOCKET_PATH = '/realtime/v1/websocket'

/** The socket's path as uWS routes take it: the ref in a /project/<ref>/ prefix, or in the Host's first label. */
export const REALTIME_SOCKET_ROUTES = [REALTIME_SOCKET_PATH, `/project/:ref${REALTIME_SOCKET_PATH}`] as const

const SOCKET_PATH = /^(?:\/project\/[^/]+)?\/realtime\/v1\/websocket$/

/** Whether `path` (without its query) is Realtime's socket. */
export function isRealtimeSocket(path: string): boolean {
  return SOCKET_PATH.test(path)
}

/** How the socket is closed: a code and a reason of at most 123 bytes (RFC 6455 section 5.5: a control frame's payload is at most 125). */
export interface SocketClose {
  code: number
  reason: string
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
  let said = `HTTP ${response.status}`
  try {
    const body = JSON.parse(bodyText(response.body)) as { code?: unknown; message?: unknown }
    if (typeof body.code === 'string' && typeof body.message === 'string') said = `${body.code}: ${body.message}`
  } catch {
    // Not the platform's JSON: the status says it.
  }
  return { code: 4000 + response.status, reason: shortReason(said) }
}

/** node:http's engine does not serve Realtime: an admitted socket is told so. */
const NOT_ON_THIS_ENGINE: SocketClose = { code: 4501, reason: 'service_not_offered: Realtime is served on the uWebSockets.js engine, not BASEPLANE_HTTP_ENGINE=node' }

/** The close for the upgrade request as the data plane answers it (node:http's engine). */
function nodeCloseOf(dataPlane: DataPlane, request: IncomingRequest, done: (close: SocketClose) => void): void {
  void dataPlane.admitSocket(request).then((answer) => done('identity' in answer ? NOT_ON_THIS_ENGINE : closeOf(answer)))
}

/** The subprotocol to accept: the client's first (phoenix), so a client that asked for one completes the handshake. */
function chosenProtocol(offered: string | undefined): string {
  return offered?.split(',')[0]?.trim() ?? ''
}

/** The most a client's frame may hold (Supabase's largest plan's broadcast payload is 3,000 KB). */
const MAX_FRAME_BYTES = 3 * 1024 * 1024
/** What a socket may have waiting to be sent before further frames to it are dropped (a slow consumer). */
const MAX_BUFFERED_BYTES = 1024 * 1024
/** A socket that sends nothing for this long is closed: realtime-js sends a heartbeat every 25 s. */
const IDLE_SECONDS = 60

/** A socket's state in uWS: its version, then its session, or the close that refuses it. */
interface SocketData {
  vsn: ProtocolVersion
  admission?: SocketAdmission
  close?: SocketClose
  session?: RealtimeSession
  gone?: boolean
}

function versionOf(query: string): ProtocolVersion | undefined {
  const asked = new URLSearchParams(query).get('vsn') ?? '1.0.0'
  return (PROTOCOL_VERSIONS as readonly string[]).includes(asked) ? (asked as ProtocolVersion) : undefined
}

const BAD_VERSION: SocketClose = { code: 4400, reason: 'bad_request: vsn must be 1.0.0 or 2.0.0' }

function linkOf(ws: uWS.WebSocket<SocketData>, vsn: ProtocolVersion): SocketLink {
  const live = () => ws.getUserData().gone !== true
  return {
    vsn,
    // Writes outside uWS's own callbacks (a join answered after its token is checked) are corked, as uWS asks.
    send: (frame) => void (live() && ws.cork(() => ws.send(frame.data, frame.binary))),
    subscribe: (topic) => void (live() && ws.subscribe(topic)),
    unsubscribe: (topic) => void (live() && ws.unsubscribe(topic)),
    publish: (topic, frame) => void (live() && ws.cork(() => ws.publish(topic, frame.data, frame.binary))),
    end: (code, reason) => void (live() && ws.cork(() => ws.end(code, shortReason(reason)))),
  }
}

/** The uWS WebSocket route: the upgrade answered by the data plane, then a session, or a close saying why not. */
export function uwsRealtimeSocket(dataPlane: DataPlane, hub: RealtimeHub): uWS.WebSocketBehavior<SocketData> {
  return {
    maxPayloadLength: MAX_FRAME_BYTES,
    maxBackpressure: MAX_BUFFERED_BYTES,
    idleTimeout: IDLE_SECONDS,
    upgrade: (res, req, context) => {
      const headers: Record<string, string> = {}
      req.forEach((name, value) => (headers[name] = value))
      const peer = Buffer.from(res.getRemoteAddressAsText()).toString()
      const query = req.getQuery() ?? ''
      let aborted = false
      res.onAborted(() => (aborted = true))
      const request: IncomingRequest = { method: 'GET', path: req.getUrl(), query, headers, peerAddress: () => peer, body: () => Promise.resolve('') }
      const upgrade = (data: SocketData) => {
        if (aborted) return
        res.cork(() => res.upgrade(data, headers['sec-websocket-key'] ?? '', chosenProtocol(headers['sec-websocket-protocol']), headers['sec-websocket-extensions'] ?? '', context))
      }
      const vsn = versionOf(query)
      if (vsn === undefined) return upgrade({ vsn: '1.0.0', close: BAD_VERSION })
      void dataPlane.admitSocket(request).then((answer) => upgrade('identity' in answer ? { vsn, admission: answer } : { vsn, close: closeOf(answer) }))
    },
    open: (ws) => {
      const data = ws.getUserData()
      if (data.admission) {
        data.session = hub.open({ project: data.admission.project, keyIdentity: data.admission.identity, link: linkOf(ws, data.vsn) })
        return
      }
      // Closed on the next turn, not inside the handshake's cork: closed there, uWS holds back the FIN after the
      // client's own close frame until its close timeout (seconds), and the client reports the close only then.
      setImmediate(() => {
        if (!data.gone) ws.end(data.close!.code, data.close!.reason)
      })
    },
    message: (ws, message, isBinary) => {
      const data = ws.getUserData()
      if (!data.session) return
      let decoded
      try {
        decoded = decodeFrame(data.vsn, message, isBinary)
      } catch (error) {
        if (!(error instanceof FrameError)) throw error
        ws.end(1007, shortReason(error.message))
        return
      }
      data.session.receive(decoded)
    },
    close: (ws) => {
      const data = ws.getUserData()
      data.gone = true
      if (data.session) hub.closed(data.session)
    },
  }
}

/** RFC 6455 section 1.3: the key's answer. */
const HANDSHAKE_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11'

const CLOSE_OPCODE = 0x8

/** The opcode and whole length of the client frame at the start of `bytes` (masked, RFC 6455 section 5.2), or undefined while it is incomplete. */
function clientFrameAt(bytes: Buffer): { opcode: number; length: number } | undefined {
  if (bytes.length < 2) return undefined
  const opcode = bytes[0]! & 0x0f
  const masked = (bytes[1]! & 0x80) !== 0
  let size = bytes[1]! & 0x7f
  let header = 2
  if (size === 126) {
    if (bytes.length < 4) return undefined
    size = bytes.readUInt16BE(2)
    header = 4
  } else if (size === 127) {
    if (bytes.length < 10) return undefined
    size = Number(bytes.readBigUInt64BE(2))
    header = 10
  }
  const length = header + (masked ? 4 : 0) + size
  return bytes.length < length ? undefined : { opcode, length }
}

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
  nodeCloseOf(dataPlane, request, (close) => {
    if (socket.destroyed) return
    const accept = crypto.createHash('sha1').update(key + HANDSHAKE_GUID).digest('base64')
    const protocol = chosenProtocol(request.headers['sec-websocket-protocol'])
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\nsec-websocket-accept: ${accept}\r\n${protocol ? `sec-websocket-protocol: ${protocol}\r\n` : ''}\r\n`)
    socket.write(closeFrame(close))
    const cut = setTimeout(() => socket.destroy(), 1000)
    // Ended once the client's close frame arrives: a message it sent before reading ours (its join) is not the answer,
    // and ending on it would meet the close frame it sends next with a reset, which the client reports as a failure.
    let pending = Buffer.alloc(0)
    const onData = (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk])
      for (;;) {
        const frame = clientFrameAt(pending)
        if (frame === undefined) return
        if (frame.opcode === CLOSE_OPCODE) {
          clearTimeout(cut)
          socket.off('data', onData)
          socket.end()
          return
        }
        pending = pending.subarray(frame.length)
      }
    }
    socket.on('data', onData)
    socket.once('close', () => clearTimeout(cut))
  })
}
