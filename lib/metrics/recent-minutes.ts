// The last hour of one project's figures, minute by minute, for the
// dashboard's Overview charts: requests by status class, latency percentiles,
// fair-share refusals and queue waits. A ring of 60 minutes, each slot reused
// when its minute comes round again, so a busy project costs the same memory
// every hour and an idle one only the slots it touched.

/** Status classes as counted: 2xx, 3xx, 4xx, 5xx (1xx and anything below 200 count as 2xx: none is ever answered). */
export const STATUS_CLASSES = ['2xx', '3xx', '4xx', '5xx'] as const
export type StatusClass = (typeof STATUS_CLASSES)[number]

export function statusClassOf(status: number): number {
  const index = ((status / 100) | 0) - 2
  return index < 0 ? 0 : index > 3 ? 3 : index
}

export const MINUTE_MS = 60_000
export const MINUTES = 60

/**
 * Latency buckets for the percentiles: upper bounds 0.25 ms × √2^k, k = 0..40
 * (0.25 ms to about 4 min), so an estimate is within √2 of the true value
 * whatever the scale, at 41 counters a minute.
 */
const FINE_BASE_MS = 0.25
const FINE_BUCKETS = 41
const fineBound = (k: number) => FINE_BASE_MS * Math.SQRT2 ** k

function fineBucketOf(millis: number): number {
  if (millis <= FINE_BASE_MS) return 0
  const k = Math.ceil(2 * Math.log2(millis / FINE_BASE_MS))
  return k >= FINE_BUCKETS ? FINE_BUCKETS - 1 : k
}

class Minute {
  /** The minute (since the epoch) this slot holds. */
  at = -1
  readonly requests = new Float64Array(STATUS_CLASSES.length)
  readonly latency = new Uint32Array(FINE_BUCKETS)
  refusals = 0
  queued = 0
  waitMillis = 0

  reset(at: number): void {
    this.at = at
    this.requests.fill(0)
    this.latency.fill(0)
    this.refusals = 0
    this.queued = 0
    this.waitMillis = 0
  }
}

/** One minute of a project's figures as the admin API answers them. */
export interface MinuteFigures {
  /** Start of the minute, ISO 8601. */
  start: string
  requests: Record<StatusClass, number>
  /** Percentiles of the answered requests' latency in milliseconds; null when there were none. */
  latency_ms: { p50: number; p95: number } | null
  /** Requests refused at once because the project's queue was full (503). */
  refusals: number
  /** Requests that waited in the project's queue for a free slot, and their mean wait. */
  queued: number
  queue_wait_ms: number | null
}

/** The value below which `fraction` of the counted latencies fall, interpolated geometrically inside its bucket. */
function percentile(latency: Uint32Array, total: number, fraction: number): number {
  const rank = fraction * total
  let seen = 0
  for (let k = 0; k < latency.length; k++) {
    const count = latency[k]!
    if (count === 0) continue
    if (seen + count >= rank) {
      const upper = fineBound(k)
      const lower = k === 0 ? upper / Math.SQRT2 : fineBound(k - 1)
      const within = (rank - seen) / count
      return Math.round(lower * (upper / lower) ** within * 100) / 100
    }
    seen += count
  }
  return Math.round(fineBound(latency.length - 1) * 100) / 100
}

export class RecentMinutes {
  readonly #slots: Minute[] = []

  #slot(now: number): Minute {
    const at = Math.floor(now / MINUTE_MS)
    const index = at % MINUTES
    let slot = this.#slots[index]
    if (slot === undefined) {
      slot = new Minute()
      this.#slots[index] = slot
    }
    if (slot.at !== at) slot.reset(at)
    return slot
  }

  answered(now: number, statusClass: number, millis: number): void {
    const slot = this.#slot(now)
    slot.requests[statusClass]! += 1
    slot.latency[fineBucketOf(millis)]! += 1
  }

  refused(now: number): void {
    this.#slot(now).refusals += 1
  }

  waited(now: number, millis: number): void {
    const slot = this.#slot(now)
    slot.queued += 1
    slot.waitMillis += millis
  }

  /** The 60 minutes ending with the current one, oldest first; minutes without traffic are zeros. */
  figures(now: number): MinuteFigures[] {
    const current = Math.floor(now / MINUTE_MS)
    const minutes: MinuteFigures[] = []
    for (let at = current - MINUTES + 1; at <= current; at++) {
      const slot = this.#slots[at % MINUTES]
      const held = slot !== undefined && slot.at === at
      const requests = { '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 }
      let answered = 0
      if (held) {
        STATUS_CLASSES.forEach((name, i) => {
          requests[name] = slot.requests[i]!
          answered += slot.requests[i]!
        })
      }
      minutes.push({
        start: new Date(at * MINUTE_MS).toISOString(),
        requests,
        latency_ms: held && answered > 0 ? { p50: percentile(slot.latency, answered, 0.5), p95: percentile(slot.latency, answered, 0.95) } : null,
        refusals: held ? slot.refusals : 0,
        queued: held ? slot.queued : 0,
        queue_wait_ms: held && slot.queued > 0 ? Math.round((slot.waitMillis / slot.queued) * 100) / 100 : null,
      })
    }
    return minutes
  }
}
