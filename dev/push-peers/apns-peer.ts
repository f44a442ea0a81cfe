// An HTTP/2 server that behaves like the APNs provider API (reference push.md
// sections 1 and 8): checks the provider JWT (ES256, kid, iss, iat age), the
// topic and the headers; answers Apple's documented reasons; 410 carries a
// timestamp in ms; advertises one stream per connection until it has seen a
// valid token, then `maxStreams`.
import crypto from 'node:crypto'
import http2 from 'node:http2'
import { closableHttp2 } from './h2c.ts'
import type { AddressInfo } from 'node:net'
import { verifyJws } from './keys.ts'

export interface ApnsPeerOptions {
  teamId: string
  keyId: string
  publicKey: crypto.KeyObject
  topic: string
  maxStreams?: number
  latencyMs?: number
}

export interface ApnsDelivery {
  token: string
  apnsId: string
  topic: string
  pushType: string
  priority: string
  expiration: string
  collapseId: string | undefined
  payload: Record<string, unknown>
  at: number
}

export interface CannedAnswer {
  status: number
  reason: string
  retryAfter?: number
  timestamp?: number
}

export interface ApnsPeer {
  url: string
  delivered: ApnsDelivery[]
  /** Every request's status and reason, in order of answer. */
  answers: { token: string; status: number; reason?: string }[]
  /** Answers to give a token, one per request, before it is accepted. */
  script: Map<string, CannedAnswer[]>
  /** Tokens seen so far answer ExpiredProviderToken from now on (a fresh JWT is accepted). */
  expireSeenTokens(): void
  /** JWT strings seen (distinct). */
  jwtsSeen(): Set<string>
  /** Most streams ever open at once on one connection, and times a client exceeded the advertised limit. */
  stats: { maxConcurrent: number; overLimit: number; connections: number; requests: number }
  setLatency(ms: number): void
  close(): Promise<void>
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const PUSH_TYPES = new Set(['alert', 'background', 'location', 'voip', 'complication', 'fileprovider', 'mdm', 'liveactivity', 'pushtotalk'])

export async function startApnsPeer(options: ApnsPeerOptions): Promise<ApnsPeer> {
  const maxStreams = options.maxStreams ?? 1000
  let latency = options.latencyMs ?? 0
  const delivered: ApnsDelivery[] = []
  const answers: ApnsPeer['answers'] = []
  const script = new Map<string, CannedAnswer[]>()
  const expired = new Set<string>()
  const seen = new Set<string>()
  const stats = { maxConcurrent: 0, overLimit: 0, connections: 0, requests: 0 }
  const state = new WeakMap<http2.ServerHttp2Session, { validated: boolean; open: number; limit: number }>()

  const server = http2.createServer({ settings: { maxConcurrentStreams: 1 }, maxSessionMemory: 64 })
  const closeServer = closableHttp2(server)
  server.on('session', (session) => {
    stats.connections++
    state.set(session, { validated: false, open: 0, limit: 1 })
  })

  // A token is verified once, then remembered (as APNs expects one token to be reused for up to an hour).
  const verified = new Map<string, string | undefined>()
  function checkToken(header: string | undefined): string | undefined {
    if (!header) return 'MissingProviderToken'
    const jwt = header.replace(/^bearer /i, '')
    seen.add(jwt)
    if (expired.has(jwt)) return 'ExpiredProviderToken'
    if (!verified.has(jwt)) verified.set(jwt, verifyToken(jwt))
    const problem = verified.get(jwt)
    if (problem) return problem
    const iat = JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()).iat as number
    if (Date.now() / 1000 - iat > 3600) return 'ExpiredProviderToken'
    return undefined
  }

  function verifyToken(jwt: string): string | undefined {
    const result = verifyJws(jwt, options.publicKey, 'ES256')
    if (!result.ok) return 'InvalidProviderToken'
    if (result.header.kid !== options.keyId || result.payload.iss !== options.teamId) return 'InvalidProviderToken'
    if (typeof result.payload.iat !== 'number') return 'InvalidProviderToken'
    return undefined
  }

  server.on('stream', (stream, headers) => {
    const session = stream.session as http2.ServerHttp2Session
    const s = state.get(session)!
    s.open++
    stats.requests++
    stats.maxConcurrent = Math.max(stats.maxConcurrent, s.open)
    if (s.open > s.limit) stats.overLimit++
    stream.on('close', () => s.open--)
    stream.on('error', () => {})
    const chunks: Buffer[] = []
    stream.on('data', (c: Buffer) => chunks.push(c))
    stream.on('end', () => {
      const path = String(headers[':path'])
      const token = path.startsWith('/3/device/') ? path.slice('/3/device/'.length) : ''
      const apnsId = (headers['apns-id'] as string | undefined) ?? crypto.randomUUID()
      const answer = (status: number, reason?: string, extra: Record<string, unknown> = {}, retryAfter?: number) => {
        answers.push({ token, status, reason })
        const send = () => {
          if (stream.destroyed) return
          const h: http2.OutgoingHttpHeaders = { ':status': status, 'apns-id': apnsId }
          if (retryAfter !== undefined) h['retry-after'] = String(retryAfter)
          if (reason) {
            h['content-type'] = 'application/json'
            stream.respond(h)
            stream.end(JSON.stringify({ reason, ...extra }))
          } else {
            stream.respond(h, { endStream: true })
          }
        }
        if (latency > 0) setTimeout(send, latency)
        else send()
      }
      if (headers[':method'] !== 'POST') return answer(405, 'MethodNotAllowed')
      if (!path.startsWith('/3/device/')) return answer(404, 'BadPath')
      if (!token) return answer(400, 'MissingDeviceToken')
      const tokenProblem = checkToken(headers.authorization as string | undefined)
      if (tokenProblem) return answer(403, tokenProblem)
      if (!s.validated) {
        // A valid token: lift the one-stream limit (Apple's documented behaviour).
        s.validated = true
        s.limit = maxStreams
        session.settings({ maxConcurrentStreams: maxStreams })
      }
      const topic = headers['apns-topic'] as string | undefined
      if (!topic) return answer(400, 'MissingTopic')
      if (topic !== options.topic) return answer(400, 'BadTopic')
      if (headers['apns-id'] !== undefined && !UUID.test(String(headers['apns-id']))) return answer(400, 'BadMessageId')
      const pushType = String(headers['apns-push-type'] ?? 'alert')
      if (!PUSH_TYPES.has(pushType)) return answer(400, 'InvalidPushType')
      const priority = String(headers['apns-priority'] ?? '10')
      if (!['10', '5', '1'].includes(priority)) return answer(400, 'BadPriority')
      if (pushType === 'background' && priority !== '5') return answer(400, 'BadPriority')
      const expiration = String(headers['apns-expiration'] ?? '0')
      if (!/^\d+$/.test(expiration)) return answer(400, 'BadExpirationDate')
      const collapseId = headers['apns-collapse-id'] as string | undefined
      if (collapseId !== undefined && Buffer.byteLength(collapseId) > 64) return answer(400, 'BadCollapseId')
      const body = Buffer.concat(chunks)
      if (body.length === 0) return answer(400, 'PayloadEmpty')
      if (body.length > 4096) return answer(413, 'PayloadTooLarge')
      let payload: Record<string, unknown>
      try {
        payload = JSON.parse(body.toString())
        if (typeof payload.aps !== 'object') return answer(400, 'PayloadEmpty')
      } catch {
        return answer(400, 'PayloadEmpty')
      }
      const canned = script.get(token)?.shift()
      if (canned) return answer(canned.status, canned.reason, canned.timestamp !== undefined ? { timestamp: canned.timestamp } : {}, canned.retryAfter)
      if (token.startsWith('dead')) return answer(410, 'Unregistered', { timestamp: Date.now() })
      if (token.startsWith('bad0')) return answer(400, 'BadDeviceToken')
      delivered.push({ token, apnsId, topic, pushType, priority, expiration, collapseId, payload, at: Date.now() })
      answer(200)
    })
  })

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    delivered,
    answers,
    script,
    stats,
    expireSeenTokens: () => {
      for (const jwt of seen) expired.add(jwt)
    },
    jwtsSeen: () => new Set(seen),
    setLatency: (ms) => {
      latency = ms
    },
    close: closeServer,
  }
}
