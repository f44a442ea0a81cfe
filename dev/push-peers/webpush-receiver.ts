// A Web Push service stand-in (HTTP/2, h2c): hands out subscriptions, checks
// each request's VAPID header (RFC 8292: ES256, aud = origin, exp within 24 h,
// sub mailto:/https:) and decrypts its aes128gcm body (RFC 8291 over RFC 8188)
// with the subscription's own keys, written here independently of web-push.
import crypto from 'node:crypto'
import http from 'node:http'
import http2 from 'node:http2'
import { closableHttp2 } from './h2c.ts'
import type { AddressInfo } from 'node:net'
import { verifyJws } from './keys.ts'

export interface Subscription {
  endpoint: string
  keys: { p256dh: string; auth: string }
}

export interface WebPushReceived {
  path: string
  payload: unknown
  ttl: string | undefined
  urgency: string | undefined
  topic: string | undefined
  vapidPublicKey: string
  subject: string
}

export interface WebPushReceiver {
  origin: string
  subscribe(): Subscription
  received: WebPushReceived[]
  /** Failures with reasons (bad VAPID, undecryptable body), for assertions. */
  rejected: string[]
  /** Canned statuses per subscription path, consumed in order. */
  script: Map<string, { status: number; retryAfter?: number }[]>
  close(): Promise<void>
}

function hmac(key: Buffer, data: Buffer): Buffer {
  return crypto.createHmac('sha256', key).update(data).digest()
}

/** RFC 8291 section 3.4 key schedule, then one RFC 8188 record. */
export function decryptAes128gcm(body: Buffer, ua: crypto.ECDH, authSecret: Buffer): Buffer {
  const salt = body.subarray(0, 16)
  const rs = body.readUInt32BE(16)
  const idlen = body[20]!
  const asPublic = body.subarray(21, 21 + idlen)
  const record = body.subarray(21 + idlen)
  if (idlen !== 65) throw new Error(`keyid length ${idlen}, expected 65`)
  if (record.length > rs) throw new Error('more than one record')
  const uaPublic = ua.getPublicKey()
  const ecdhSecret = ua.computeSecret(asPublic)
  const prkKey = hmac(authSecret, ecdhSecret)
  const ikm = hmac(prkKey, Buffer.concat([Buffer.from('WebPush: info\0'), uaPublic, asPublic, Buffer.from([1])]))
  const prk = hmac(salt, ikm)
  const cek = hmac(prk, Buffer.from('Content-Encoding: aes128gcm\0\x01')).subarray(0, 16)
  const nonce = hmac(prk, Buffer.from('Content-Encoding: nonce\0\x01')).subarray(0, 12)
  const decipher = crypto.createDecipheriv('aes-128-gcm', cek, nonce)
  decipher.setAuthTag(record.subarray(record.length - 16))
  const plain = Buffer.concat([decipher.update(record.subarray(0, record.length - 16)), decipher.final()])
  // Strip padding: the last record ends with delimiter 0x02 followed by zeros.
  let end = plain.length - 1
  while (end >= 0 && plain[end] === 0) end--
  if (plain[end] !== 2) throw new Error('bad padding delimiter')
  return plain.subarray(0, end)
}

/** `http1`: an HTTP/1.1-only push service (the sender must fall back from HTTP/2). */
export async function startWebPushReceiver(options: { http1?: boolean } = {}): Promise<WebPushReceiver> {
  const subscriptions = new Map<string, { ua: crypto.ECDH; auth: Buffer }>()
  const received: WebPushReceived[] = []
  const rejected: string[] = []
  const script = new Map<string, { status: number; retryAfter?: number }[]>()
  let origin = ''

  function handle(path: string, headers: Record<string, string | string[] | undefined>, body: Buffer): { status: number; headers: Record<string, string> } {
    const refuse = (status: number, why: string) => {
      rejected.push(why)
      return { status, headers: {} }
    }
    const sub = subscriptions.get(path)
    if (!sub) return refuse(404, `unknown subscription ${path}`)
    const canned = script.get(path)?.shift()
    if (canned) return { status: canned.status, headers: canned.retryAfter !== undefined ? { 'retry-after': String(canned.retryAfter) } : {} }
    if (headers['content-encoding'] !== 'aes128gcm') return refuse(400, 'content-encoding is not aes128gcm')
    if (headers.ttl === undefined) return refuse(400, 'TTL header missing')
    const vapid = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(String(headers.authorization ?? ''))
    if (!vapid) return refuse(401, 'no vapid authorization')
    const publicKey = Buffer.from(vapid[2]!, 'base64url')
    const jwk = { kty: 'EC', crv: 'P-256', x: publicKey.subarray(1, 33).toString('base64url'), y: publicKey.subarray(33, 65).toString('base64url') }
    const verified = verifyJws(vapid[1]!, crypto.createPublicKey({ key: jwk, format: 'jwk' }), 'ES256')
    if (!verified.ok) return refuse(403, `vapid ${verified.why}`)
    const claims = verified.payload
    if (claims.aud !== origin) return refuse(403, `vapid aud ${String(claims.aud)} is not ${origin}`)
    if (typeof claims.exp !== 'number' || claims.exp - Date.now() / 1000 > 86400) return refuse(403, 'vapid exp more than 24 h ahead')
    if (typeof claims.sub !== 'string' || !/^(mailto:|https:)/.test(claims.sub)) return refuse(403, 'vapid sub')
    let plain: Buffer
    try {
      plain = decryptAes128gcm(body, sub.ua, sub.auth)
    } catch (err) {
      return refuse(400, `decrypt: ${(err as Error).message}`)
    }
    received.push({
      path,
      payload: JSON.parse(plain.toString()),
      ttl: headers.ttl as string,
      urgency: headers.urgency as string | undefined,
      topic: headers.topic as string | undefined,
      vapidPublicKey: vapid[2]!,
      subject: claims.sub,
    })
    return { status: 201, headers: { location: `${origin}/m/${crypto.randomBytes(6).toString('hex')}` } }
  }

  let close: () => Promise<void>
  if (options.http1) {
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        const answer = handle(req.url ?? '/', req.headers, Buffer.concat(chunks))
        res.writeHead(answer.status, answer.headers)
        res.end()
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    close = () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  } else {
    const server = http2.createServer()
    const closeServer = closableHttp2(server)
    server.on('stream', (stream, headers) => {
      stream.on('error', () => {})
      const chunks: Buffer[] = []
      stream.on('data', (c: Buffer) => chunks.push(c))
      stream.on('end', () => {
        const answer = handle(String(headers[':path']), headers, Buffer.concat(chunks))
        stream.respond({ ':status': answer.status, ...answer.headers }, { endStream: true })
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    close = closeServer
  }
  return {
    origin,
    received,
    rejected,
    script,
    subscribe() {
      const ua = crypto.createECDH('prime256v1')
      ua.generateKeys()
      const auth = crypto.randomBytes(16)
      const path = `/push/${crypto.randomBytes(8).toString('hex')}`
      subscriptions.set(path, { ua, auth })
      return { endpoint: `${origin}${path}`, keys: { p256dh: ua.getPublicKey('base64url'), auth: auth.toString('base64url') } }
    },
    close: () => close(),
  }
}
