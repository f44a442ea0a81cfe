// APNs provider API over HTTP/2 with token authentication (reference: push.md
// section 1). One pool of sessions per project and environment, because APNs
// refuses tokens of several teams on one connection.
import { Http2Pool, type Http2Response } from './http2-pool.ts'
import type { ApnsSigner, ApnsTokens, ProviderToken } from './apns-token.ts'
import { secondsLeft, retryAfterMs, unansweredOutcome, type Delivery, type Outcome, type PushProvider } from './provider.ts'

export const APNS_PRODUCTION = 'https://api.push.apple.com'
export const APNS_SANDBOX = 'https://api.sandbox.push.apple.com'
const MAX_PAYLOAD = 4096
const EXPIRED_PROVIDER_TOKEN = 'APNs: ExpiredProviderToken'

export interface ApnsConfig {
  url: string
  topic: string
  teamId: string
  keyId: string
  p8: string
  tokens: ApnsTokens
  maxSessions?: number
}

// Credential or configuration refusals: every message would fail alike.
const STOP_REASONS = new Set([
  'InvalidProviderToken',
  'MissingProviderToken',
  'BadTopic',
  'TopicDisallowed',
  'MissingTopic',
  'BadCertificate',
  'BadCertificateEnvironment',
  'Forbidden',
])
const RETRY_REASONS = new Set(['IdleTimeout', 'TooManyRequests', 'TooManyProviderTokenUpdates', 'InternalServerError', 'ServiceUnavailable', 'Shutdown'])

function hasKeys(data: Record<string, unknown>): boolean {
  for (const _ in data) return true
  return false
}

export function apnsPayload(delivery: Delivery): { json: string; pushType: 'alert' | 'background' } {
  const hasAlert = delivery.title !== null || delivery.body !== null
  let alert: Record<string, string> | undefined
  if (hasAlert) {
    alert = {}
    if (delivery.title !== null) alert.title = delivery.title
    if (delivery.body !== null) alert.body = delivery.body
  }
  const aps = alert !== undefined ? { alert } : { 'content-available': 1 }
  const pushType = hasAlert ? 'alert' : 'background'
  // Most messages carry no custom keys: no copy of `data` then.
  if (!hasKeys(delivery.data)) return { json: JSON.stringify({ aps }), pushType }
  const { aps: _ignored, ...custom } = delivery.data
  return { json: JSON.stringify({ ...custom, aps }), pushType }
}

export class ApnsProvider implements PushProvider {
  readonly platform = 'apns' as const
  readonly #config: ApnsConfig
  readonly #pool: Http2Pool
  readonly #signer: ApnsSigner

  constructor(config: ApnsConfig) {
    this.#config = config
    this.#pool = new Http2Pool(config.url, { maxSessions: config.maxSessions ?? 4 })
    this.#signer = config.tokens.signer(config.teamId, config.keyId, config.p8)
  }

  send(delivery: Delivery, cancelled?: () => boolean): Promise<Outcome> {
    const { json, pushType } = apnsPayload(delivery)
    // A UTF-8 character is at most three bytes per UTF-16 unit: short payloads need no count.
    const bytes = json.length * 3 <= MAX_PAYLOAD ? json.length : Buffer.byteLength(json)
    if (bytes > MAX_PAYLOAD) {
      return Promise.resolve({ kind: 'failed', httpStatus: null, reason: `APNs: PayloadTooLarge (${bytes} bytes, limit ${MAX_PAYLOAD})` })
    }
    // The usual case, a token at hand, takes no promise before the request's own.
    const token = this.#signer.ready()
    if (token !== undefined) return this.#post(delivery, json, pushType, token, cancelled)
    return this.#signer.get().then(
      (made) => this.#post(delivery, json, pushType, made, cancelled),
      (): Outcome => ({ kind: 'stop', httpStatus: null, reason: 'APNs: the stored key cannot sign a provider token' }),
    )
  }

  #post(delivery: Delivery, json: string, pushType: string, token: ProviderToken, cancelled?: () => boolean, retried = false): Promise<Outcome> {
    // Only the headers APNs reads: each one costs header validation and HPACK work per request.
    const headers: Record<string, string> = {
      ':method': 'POST',
      ':path': `/3/device/${delivery.token}`,
      authorization: token.authorization,
      'apns-topic': this.#config.topic,
      'apns-push-type': pushType,
      'apns-expiration': delivery.ttl === 0 ? '0' : String(Math.floor(Date.now() / 1000) + secondsLeft(delivery)),
      'apns-id': delivery.apnsId,
    }
    // Absent means 10; background pushes must use 5.
    if (pushType === 'background' || delivery.priority === 'normal') headers['apns-priority'] = '5'
    if (delivery.collapseKey !== null) headers['apns-collapse-id'] = delivery.collapseKey
    return this.#pool.request(headers, json, cancelled).then(
      (response) => {
        const outcome = interpret(response, delivery)
        if (retried || outcome.kind !== 'retry' || outcome.reason !== EXPIRED_PROVIDER_TOKEN) return outcome
        // One retry with a fresh token (generation-guarded, so many streams make one), as Apple asks.
        return this.#signer.refresh(token.generation).then((fresh) => this.#post(delivery, json, pushType, fresh, cancelled, true))
      },
      (err: unknown) => unansweredOutcome(err, 'APNs'),
    )
  }

  close(): Promise<void> {
    return this.#pool.close()
  }
}

/** APNs' answer as an outcome (reference: push.md, the status codes and reasons). */
function interpret(response: Http2Response, delivery: Delivery): Outcome {
  const status = response.status
  if (status === 200) {
    const id = response.headers['apns-id']
    return { kind: 'sent', httpStatus: 200, providerId: typeof id === 'string' ? id : delivery.apnsId }
  }
  let reason = `HTTP ${status}`
  let timestamp: number | undefined
  try {
    const body = JSON.parse(response.body) as { reason?: unknown; timestamp?: unknown }
    if (typeof body.reason === 'string') reason = body.reason
    if (typeof body.timestamp === 'number') timestamp = body.timestamp
  } catch {
    // A body that is not JSON keeps the status as the reason.
  }
  const text = `APNs: ${reason}`
  if (status === 410 || reason === 'Unregistered' || reason === 'ExpiredToken') {
    // The timestamp is in milliseconds.
    return { kind: 'failed', httpStatus: status, reason: text, gone: { at: timestamp !== undefined ? new Date(timestamp) : null } }
  }
  if (text === EXPIRED_PROVIDER_TOKEN) return { kind: 'retry', httpStatus: status, reason: text }
  if (STOP_REASONS.has(reason)) return { kind: 'stop', httpStatus: status, reason: text }
  // APNs fault or shutdown: the retry goes out on a new connection (Apple; node-apn does the same after a 500).
  if (status === 500 || status === 503) response.retireSession?.()
  if (RETRY_REASONS.has(reason) || status === 429 || status >= 500) {
    const after = retryAfterMs(response.headers['retry-after'])
    // Too many requests to one device: minutes, not seconds (Apple).
    const floor = reason === 'TooManyRequests' ? 60000 : undefined
    return { kind: 'retry', httpStatus: status, reason: text, retryAfterMs: Math.max(after ?? 0, floor ?? 0) || undefined }
  }
  return { kind: 'failed', httpStatus: status, reason: text }
}
