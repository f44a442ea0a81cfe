// APNs provider API over HTTP/2 with token authentication (reference: push.md
// section 1). One pool of sessions per project and environment, because APNs
// refuses tokens of several teams on one connection.
import { Http2Pool } from './http2-pool.ts'
import type { ApnsTokens } from './apns-token.ts'
import { secondsLeft, retryAfterMs, unansweredOutcome, type Delivery, type Outcome, type PushProvider } from './provider.ts'

export const APNS_PRODUCTION = 'https://api.push.apple.com'
export const APNS_SANDBOX = 'https://api.sandbox.push.apple.com'
const MAX_PAYLOAD = 4096

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

export function apnsPayload(delivery: Delivery): { json: string; pushType: 'alert' | 'background' } {
  const { aps: _ignored, ...custom } = delivery.data
  const alert: Record<string, string> = {}
  if (delivery.title !== null) alert.title = delivery.title
  if (delivery.body !== null) alert.body = delivery.body
  const hasAlert = Object.keys(alert).length > 0
  const aps: Record<string, unknown> = hasAlert ? { alert } : { 'content-available': 1 }
  return { json: JSON.stringify({ ...custom, aps }), pushType: hasAlert ? 'alert' : 'background' }
}

export class ApnsProvider implements PushProvider {
  readonly platform = 'apns' as const
  readonly #config: ApnsConfig
  readonly #pool: Http2Pool

  constructor(config: ApnsConfig) {
    this.#config = config
    this.#pool = new Http2Pool(config.url, { maxSessions: config.maxSessions ?? 4 })
  }

  async send(delivery: Delivery, cancelled?: () => boolean): Promise<Outcome> {
    const { json, pushType } = apnsPayload(delivery)
    if (Buffer.byteLength(json) > MAX_PAYLOAD) {
      return { kind: 'failed', httpStatus: null, reason: `APNs: PayloadTooLarge (${Buffer.byteLength(json)} bytes, limit ${MAX_PAYLOAD})` }
    }
    const { teamId, keyId, p8, tokens } = this.#config
    let token
    try {
      token = await tokens.get(teamId, keyId, p8)
    } catch {
      return { kind: 'stop', httpStatus: null, reason: 'APNs: the stored key cannot sign a provider token' }
    }
    let answer = await this.#post(delivery, json, pushType, token.jwt, cancelled)
    if (answer.kind === 'retry' && answer.reason === 'APNs: ExpiredProviderToken') {
      // One retry with a fresh token (generation-guarded), as Apple asks.
      token = await tokens.refresh(teamId, keyId, p8, token.generation)
      answer = await this.#post(delivery, json, pushType, token.jwt, cancelled)
    }
    return answer
  }

  async #post(delivery: Delivery, json: string, pushType: string, jwt: string, cancelled?: () => boolean): Promise<Outcome> {
    const headers: Record<string, string> = {
      ':method': 'POST',
      ':path': `/3/device/${delivery.token}`,
      authorization: `bearer ${jwt}`,
      'apns-topic': this.#config.topic,
      'apns-push-type': pushType,
      // Background pushes must use priority 5.
      'apns-priority': pushType === 'background' || delivery.priority === 'normal' ? '5' : '10',
      'apns-expiration': delivery.ttl === 0 ? '0' : String(Math.floor(Date.now() / 1000) + secondsLeft(delivery)),
      'apns-id': delivery.apnsId,
      'content-type': 'application/json',
    }
    if (delivery.collapseKey !== null) headers['apns-collapse-id'] = delivery.collapseKey
    let response
    try {
      response = await this.#pool.request(headers, json, cancelled)
    } catch (err) {
      return unansweredOutcome(err, 'APNs')
    }
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
    if (reason === 'ExpiredProviderToken') return { kind: 'retry', httpStatus: status, reason: text }
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

  close(): Promise<void> {
    return this.#pool.close()
  }
}
