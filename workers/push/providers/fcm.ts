// FCM HTTP v1 over HTTP/2 (reference: push.md section 2): POST
// /v1/projects/<project>/messages:send with an OAuth access token of the
// project's service account. Errors read from the FcmError detail first,
// then error.status, as firebase-admin does.
import { Http2Pool } from './http2-pool.ts'
import { createTokenSource, TokenError, type ServiceAccount, type TokenSource } from './fcm-token.ts'
import { retryAfterMs, secondsLeft, unansweredOutcome, type Delivery, type Outcome, type PushProvider } from './provider.ts'

export const FCM_URL = 'https://fcm.googleapis.com'

export interface FcmConfig {
  url: string
  tokenUrl?: string
  account: ServiceAccount
  maxSessions?: number
}

const STOP_CODES = new Set(['THIRD_PARTY_AUTH_ERROR', 'PERMISSION_DENIED', 'UNAUTHENTICATED'])
const RETRY_CODES = new Set(['QUOTA_EXCEEDED', 'UNAVAILABLE', 'INTERNAL', 'RESOURCE_EXHAUSTED'])

/** FCM data values must be strings; other JSON values travel as their JSON text. */
export function fcmData(data: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [key, value] of Object.entries(data)) out[key] = typeof value === 'string' ? value : JSON.stringify(value)
  return out
}

export function fcmMessage(delivery: Delivery): Record<string, unknown> {
  const notification: Record<string, string> = {}
  if (delivery.title !== null) notification.title = delivery.title
  if (delivery.body !== null) notification.body = delivery.body
  const hasNotification = Object.keys(notification).length > 0
  const ttl = secondsLeft(delivery)
  const android: Record<string, unknown> = { priority: delivery.priority === 'high' ? 'HIGH' : 'NORMAL', ttl: `${ttl}s` }
  if (delivery.collapseKey !== null) android.collapse_key = delivery.collapseKey
  const apnsHeaders: Record<string, string> = {
    // Data-only messages to iOS must use priority 5.
    'apns-priority': hasNotification && delivery.priority === 'high' ? '10' : '5',
  }
  if (delivery.collapseKey !== null) apnsHeaders['apns-collapse-id'] = delivery.collapseKey
  // iOS hands a data-only message to a backgrounded app only as a background
  // push: content-available in aps and apns-push-type background (push.md 1.2).
  if (!hasNotification) apnsHeaders['apns-push-type'] = 'background'
  const apns = hasNotification ? { headers: apnsHeaders } : { headers: apnsHeaders, payload: { aps: { 'content-available': 1 } } }
  return {
    token: delivery.token,
    ...(hasNotification ? { notification } : {}),
    data: fcmData(delivery.data),
    android,
    apns,
  }
}

interface FcmErrorBody {
  error?: { code?: number; message?: string; status?: string; details?: { '@type'?: string; errorCode?: string }[] }
}

export class FcmProvider implements PushProvider {
  readonly platform = 'fcm' as const
  readonly #pool: Http2Pool
  readonly #tokens: TokenSource
  readonly #path: string

  constructor(config: FcmConfig) {
    this.#pool = new Http2Pool(config.url, { maxSessions: config.maxSessions ?? 4 })
    this.#tokens = createTokenSource(config.account, config.tokenUrl)
    this.#path = `/v1/projects/${encodeURIComponent(config.account.project_id)}/messages:send`
  }

  async send(delivery: Delivery, cancelled?: () => boolean): Promise<Outcome> {
    const body = JSON.stringify({ message: fcmMessage(delivery) })
    let answer = await this.#post(body, false, cancelled)
    // An access token refused once is renewed once before the key is blamed.
    if (answer.kind === 'stop' && answer.httpStatus === 401) answer = await this.#post(body, true, cancelled)
    return answer
  }

  async #post(body: string, freshToken: boolean, cancelled?: () => boolean): Promise<Outcome> {
    let token: string
    try {
      token = await this.#tokens.getToken(freshToken)
    } catch (err) {
      if (err instanceof TokenError && err.refused) return { kind: 'stop', httpStatus: null, reason: `FCM: service account refused by the token endpoint (${err.message})` }
      return { kind: 'retry', httpStatus: null, reason: `FCM: token endpoint unreachable (${(err as Error).message})` }
    }
    let response
    try {
      response = await this.#pool.request(
        { ':method': 'POST', ':path': this.#path, authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body,
        cancelled,
      )
    } catch (err) {
      return unansweredOutcome(err, 'FCM')
    }
    const status = response.status
    if (status === 200) {
      let name: string | null = null
      try {
        name = (JSON.parse(response.body) as { name?: string }).name ?? null
      } catch {
        // A 200 without a JSON body still means accepted.
      }
      return { kind: 'sent', httpStatus: 200, providerId: name }
    }
    let code = `HTTP ${status}`
    try {
      const parsed = JSON.parse(response.body) as FcmErrorBody
      const detail = parsed.error?.details?.find((d) => d['@type']?.endsWith('google.firebase.fcm.v1.FcmError') && d.errorCode)
      code = detail?.errorCode ?? parsed.error?.status ?? code
    } catch {
      // Not JSON: keep the status.
    }
    const reason = `FCM: ${code}`
    if (code === 'UNREGISTERED') return { kind: 'failed', httpStatus: status, reason, gone: { at: null } }
    if (STOP_CODES.has(code) || status === 401 || status === 403) return { kind: 'stop', httpStatus: status, reason }
    if (RETRY_CODES.has(code) || status === 429 || status >= 500) {
      const after = retryAfterMs(response.headers['retry-after'])
      // QUOTA_EXCEEDED: wait at least a minute (FCM's guidance).
      const floor = code === 'QUOTA_EXCEEDED' || status === 429 ? 60000 : 0
      return { kind: 'retry', httpStatus: status, reason, retryAfterMs: Math.max(after ?? 0, floor) || undefined }
    }
    return { kind: 'failed', httpStatus: status, reason }
  }

  close(): Promise<void> {
    return this.#pool.close()
  }
}
