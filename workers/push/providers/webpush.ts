// Web Push (RFC 8030) with VAPID (RFC 8292) and aes128gcm payloads (RFC 8291).
// web-push builds each request (encryption, VAPID header); it is sent over a
// pooled HTTP/2 session per push-service origin instead of https.request.
import crypto from 'node:crypto'
import http from 'node:http'
import { LRUCache } from 'lru-cache'
import webpush from 'web-push'
import { fetchBounded } from '../../../lib/bounded-body.ts'
import { Http1OnlyError, Http2Pool, TransportError, type Http2Response } from './http2-pool.ts'
import { retryAfterMs, secondsLeft, unansweredOutcome, type Delivery, type Outcome, type PushProvider } from './provider.ts'

/** 4096-byte records: 86 header bytes + 3993 + 1 delimiter + 16 tag (RFC 8291 arithmetic). */
const MAX_PLAINTEXT = 3993

export interface VapidKeys {
  publicKey: string
  privateKey: string
  subject: string
}

/** What the service worker receives in `event.data.json()`. */
export function webPayload(delivery: Delivery): string {
  return JSON.stringify({ id: delivery.messageId, title: delivery.title, body: delivery.body, data: delivery.data })
}

/** Topic: at most 32 URL-safe base64 characters; other collapse keys are hashed down to that. */
export function webTopic(collapseKey: string): string {
  if (/^[A-Za-z0-9_-]{1,32}$/.test(collapseKey)) return collapseKey
  return crypto.createHash('sha256').update(collapseKey).digest('base64url').slice(0, 32)
}

function statusText(status: number): string {
  return `${status} ${http.STATUS_CODES[status] ?? ''}`.trim()
}

/** The HTTP/1.1 fallback's bound on one request, as the HTTP/2 pool's (http2-pool.ts). */
const HTTP1_TIMEOUT_MS = 10000

async function sendHttp1(endpoint: string, headers: Record<string, string>, body: Buffer): Promise<Http2Response> {
  const plain: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) if (!name.startsWith(':') && name !== 'content-length') plain[name] = value
  try {
    // Not followed, as over HTTP/2: a 3xx is the push service's answer. Only the status and
    // headers decide (RFC 8030 5), so the body is dropped unread (lib/bounded-body.ts).
    const answer = await fetchBounded(endpoint, { method: 'POST', headers: plain, body: new Uint8Array(body), redirect: 'manual' }, { maxBytes: 0, timeoutMs: HTTP1_TIMEOUT_MS })
    await answer.discard()
    const responseHeaders: Record<string, string> = {}
    answer.headers.forEach((value, name) => {
      responseHeaders[name] = value
    })
    return { status: answer.status, headers: responseHeaders, body: '' }
  } catch (err) {
    throw new TransportError((err as Error).message)
  }
}

export class WebPushProvider implements PushProvider {
  readonly platform = 'web' as const
  readonly #vapid: VapidKeys
  readonly #pools = new LRUCache<string, Http2Pool>({ max: 256, dispose: (pool) => void pool.close() })

  constructor(vapid: VapidKeys) {
    this.#vapid = vapid
  }

  #pool(origin: string): Http2Pool {
    let pool = this.#pools.get(origin)
    if (pool === undefined) {
      pool = new Http2Pool(origin, { maxSessions: 2 })
      this.#pools.set(origin, pool)
    }
    return pool
  }

  async send(delivery: Delivery, cancelled?: () => boolean): Promise<Outcome> {
    const payload = webPayload(delivery)
    if (Buffer.byteLength(payload) > MAX_PLAINTEXT) {
      return { kind: 'failed', httpStatus: null, reason: `Web Push: payload too large (${Buffer.byteLength(payload)} bytes, limit ${MAX_PLAINTEXT})` }
    }
    let details
    try {
      details = webpush.generateRequestDetails({ endpoint: delivery.token, keys: { p256dh: delivery.p256dh ?? '', auth: delivery.auth ?? '' } }, payload, {
        vapidDetails: this.#vapid,
        TTL: secondsLeft(delivery),
        urgency: delivery.priority === 'high' ? 'high' : 'normal',
        ...(delivery.collapseKey !== null ? { topic: webTopic(delivery.collapseKey) } : {}),
      })
    } catch (err) {
      return { kind: 'failed', httpStatus: null, reason: `Web Push: invalid subscription (${(err as Error).message})` }
    }
    const url = new URL(details.endpoint)
    const headers: Record<string, string> = { ':method': 'POST', ':path': `${url.pathname}${url.search}` }
    for (const [name, value] of Object.entries(details.headers)) headers[name.toLowerCase()] = String(value)
    let response
    try {
      const pool = this.#pool(url.origin)
      try {
        response = await pool.request(headers, details.body ?? Buffer.alloc(0), cancelled)
      } catch (err) {
        if (!(err instanceof Http1OnlyError)) throw err
        // A push service without HTTP/2: the same request over HTTP/1.1 (fetch keeps connections alive).
        response = await sendHttp1(details.endpoint, headers, details.body ?? Buffer.alloc(0))
      }
    } catch (err) {
      return unansweredOutcome(err, 'Web Push')
    }
    const status = response.status
    if (status >= 200 && status < 300) {
      const location = response.headers.location
      return { kind: 'sent', httpStatus: status, providerId: typeof location === 'string' ? location : null }
    }
    const reason = `Web Push: ${statusText(status)}`
    // 404 and 410: the subscription is expired or gone.
    if (status === 404 || status === 410) return { kind: 'failed', httpStatus: status, reason, gone: { at: null } }
    if (status === 429 || status >= 500) {
      return { kind: 'retry', httpStatus: status, reason, retryAfterMs: retryAfterMs(response.headers['retry-after']) }
    }
    return { kind: 'failed', httpStatus: status, reason }
  }

  async close(): Promise<void> {
    const pools = [...this.#pools.values()]
    this.#pools.clear()
    await Promise.all(pools.map((p) => p.close()))
  }
}
