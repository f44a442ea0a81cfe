// Latencies of bench:realtime's deliveries: millions per phase, counted in
// buckets (10 µs up to a second, then a millisecond up to two minutes, the
// last bucket holding anything later), so that each subscriber process adds
// a delivery in O(1) and hands its parent a fixed-size array to merge,
// whatever the phase's length and however late a backlog makes deliveries.

const FINE_MICROS = 10
const FINE = 100_000 // 1 s
const COARSE_MICROS = 1000
const COARSE = 120_000 // 2 min

export interface LatencyCounts {
  buckets: Uint32Array
  count: number
}

export function emptyCounts(): LatencyCounts {
  return { buckets: new Uint32Array(FINE + COARSE), count: 0 }
}

export function addLatency(counts: LatencyCounts, micros: number): void {
  const us = Math.max(0, micros)
  const bucket = us < FINE * FINE_MICROS ? Math.floor(us / FINE_MICROS) : Math.min(FINE + Math.floor((us - FINE * FINE_MICROS) / COARSE_MICROS), FINE + COARSE - 1)
  counts.buckets[bucket]!++
  counts.count++
}

/** `from` added into `into`. */
export function mergeCounts(into: LatencyCounts, from: LatencyCounts): void {
  for (let i = 0; i < into.buckets.length; i++) into.buckets[i]! += from.buckets[i]!
  into.count += from.count
}

/** The latency (ms) below which `fraction` of the deliveries fall: the upper edge of its bucket. */
export function percentileMs(counts: LatencyCounts, fraction: number): number {
  if (counts.count === 0) return NaN
  const rank = Math.ceil(fraction * counts.count)
  let seen = 0
  for (let i = 0; i < counts.buckets.length; i++) {
    seen += counts.buckets[i]!
    if (seen >= rank) return i < FINE ? ((i + 1) * FINE_MICROS) / 1000 : (FINE * FINE_MICROS + (i - FINE + 1) * COARSE_MICROS) / 1000
  }
  return NaN
}
