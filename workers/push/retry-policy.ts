// When to try a delivery again, by plan (SPEC section 8): on Free a few
// retries within about five minutes; on Plus, Pro and Business on the
// provider's schedule (Retry-After, else exponential backoff) for as long as
// it asks, bounded only by the message's TTL.
import type { Plan } from '../../lib/catalogue.ts'

export const FREE_DELAYS_MS = [10_000, 60_000, 180_000]
export const FREE_WINDOW_MS = 5 * 60_000
const PAID_BASE_MS = 5_000
const PAID_CAP_MS = 60 * 60_000

export type RetryDecision = { retry: true; runAt: Date } | { retry: false; why: 'gave_up' | 'expired' }

export interface RetryInput {
  plan: Plan
  /** Attempts made so far, this one included. */
  attempt: number
  firstAttemptAt: Date
  expiresAt: Date
  retryAfterMs?: number
  now?: number
  /** Tests shrink every delay by this factor. */
  scale?: number
}

export function decideRetry(input: RetryInput): RetryDecision {
  const now = input.now ?? Date.now()
  const scale = input.scale ?? 1
  const asked = (input.retryAfterMs ?? 0) * scale
  if (input.plan === 'free') {
    const base = FREE_DELAYS_MS[input.attempt - 1]
    if (base === undefined) return { retry: false, why: 'gave_up' }
    const delay = Math.max(base * scale, asked)
    if (now + delay > input.firstAttemptAt.getTime() + FREE_WINDOW_MS * scale) return { retry: false, why: 'gave_up' }
    if (now + delay > input.expiresAt.getTime()) return { retry: false, why: 'expired' }
    return { retry: true, runAt: new Date(now + delay) }
  }
  const backoff = Math.min(PAID_BASE_MS * 2 ** Math.min(input.attempt - 1, 20), PAID_CAP_MS)
  // Equal jitter keeps many retries of one outage from arriving together.
  const jittered = (backoff / 2 + (Math.random() * backoff) / 2) * scale
  const delay = Math.max(jittered, asked)
  if (now + delay > input.expiresAt.getTime()) return { retry: false, why: 'expired' }
  return { retry: true, runAt: new Date(now + delay) }
}
