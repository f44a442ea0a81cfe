// The one seam between the actor and the three push services. A provider
// turns a claimed queue row into one HTTP/2 request and classifies the answer;
// the actor decides retries, logging and device deactivation from the class.
import { CancelledError, TransportError } from './http2-pool.ts'

export type Platform = 'apns' | 'fcm' | 'web'

/** A claimed queue row with its message and device. */
export interface Delivery {
  queueId: string
  messageId: string
  deviceId: string
  platform: Platform
  /** Attempt number of this try (1 for the first). */
  attempt: number
  apnsId: string
  /** When the message's TTL runs out, in milliseconds since the epoch. */
  expiresAtMs: number
  token: string
  p256dh: string | null
  auth: string | null
  title: string | null
  body: string | null
  data: Record<string, unknown>
  ttl: number
  collapseKey: string | null
  priority: 'high' | 'normal'
}

export type Outcome =
  /** Accepted by the provider. */
  | { kind: 'sent'; httpStatus: number; providerId: string | null }
  /** Refused for good for this delivery; `gone` when the device should be deactivated. */
  | { kind: 'failed'; httpStatus: number | null; reason: string; gone?: { at: Date | null } }
  /** Worth trying again later (provider fault, rate limit, transport error). */
  | { kind: 'retry'; httpStatus: number | null; reason: string; retryAfterMs?: number }
  /** A credential-level refusal: stop this provider for the project until its keys change. */
  | { kind: 'stop'; httpStatus: number | null; reason: string }
  /** Withdrawn before anything was sent (the provider was stopped meanwhile). */
  | { kind: 'untried'; httpStatus: null }

export interface PushProvider {
  readonly platform: Platform
  /** `cancelled` is asked just before the request goes out; true withdraws it (outcome `untried`). */
  send(delivery: Delivery, cancelled?: () => boolean): Promise<Outcome>
  close(): Promise<void>
}

/** Retry-After is seconds or an HTTP date (RFC 9110 10.2.3). */
export function retryAfterMs(value: string | string[] | undefined): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value
  if (raw === undefined || raw === '') return undefined
  if (/^\d+$/.test(raw)) return Number(raw) * 1000
  const at = Date.parse(raw)
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now())
}

/** Seconds left until the delivery expires (the TTL header of APNs, FCM and Web Push). */
export function secondsLeft(delivery: Delivery, now = Date.now()): number {
  if (delivery.ttl === 0) return 0
  return Math.max(0, Math.floor((delivery.expiresAtMs - now) / 1000))
}

/**
 * The outcome of a request that got no answer from `service` (its name in
 * reasons): withdrawn before sending, or a transport failure to retry.
 * Anything else is a bug and is thrown again.
 */
export function unansweredOutcome(err: unknown, service: string): Outcome {
  if (err instanceof CancelledError) return { kind: 'untried', httpStatus: null }
  if (err instanceof TransportError) return { kind: 'retry', httpStatus: null, reason: `${service}: connection error (${err.message})` }
  throw err
}
