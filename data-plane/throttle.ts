// Per-project, per-source-address throttle. Services report failed attempts
// (Auth: 4xx answers from sign-in, sign-up, recovery, OTP, verification);
// once an address passes the threshold inside the window, every service of
// that project refuses it until the block ends. State is per data-plane
// process and bounded in size.
import { LRUCache } from 'lru-cache'

export interface ThrottleSettings {
  maxFailures: number
  windowSeconds: number
  blockSeconds: number
}

interface Entry {
  windowStart: number
  failures: number
  blockedUntil: number
}

export class Throttle {
  readonly #entries = new LRUCache<string, Entry>({ max: 200000 })
  /** Per project, the latest end of any block, so unaffected projects skip the per-address lookup. */
  readonly #latestBlock = new Map<string, number>()
  readonly #settings: ThrottleSettings
  readonly #now: () => number

  constructor(settings: ThrottleSettings, now: () => number = Date.now) {
    this.#settings = settings
    this.#now = now
  }

  /** Whether any address of `ref` may currently be refused (cheap; checked on every request). */
  watching(ref: string): boolean {
    const until = this.#latestBlock.get(ref)
    if (until === undefined) return false
    if (until > this.#now()) return true
    this.#latestBlock.delete(ref)
    return false
  }

  /** Seconds until `address` may try again on project `ref`; 0 when it is not refused. */
  retryAfter(ref: string, address: string): number {
    const entry = this.#entries.get(`${ref}\0${address}`)
    if (entry === undefined) return 0
    const left = entry.blockedUntil - this.#now()
    return left > 0 ? Math.ceil(left / 1000) : 0
  }

  recordFailure(ref: string, address: string): void {
    const key = `${ref}\0${address}`
    const now = this.#now()
    let entry = this.#entries.get(key)
    if (entry === undefined || now - entry.windowStart > this.#settings.windowSeconds * 1000) {
      entry = { windowStart: now, failures: 0, blockedUntil: entry?.blockedUntil ?? 0 }
      this.#entries.set(key, entry)
    }
    entry.failures += 1
    if (entry.failures >= this.#settings.maxFailures) {
      entry.blockedUntil = now + this.#settings.blockSeconds * 1000
      this.#latestBlock.set(ref, Math.max(this.#latestBlock.get(ref) ?? 0, entry.blockedUntil))
      entry.failures = 0
      entry.windowStart = now
    }
  }

  /** Forgets every address of `ref` (used by tests and by an operator's reset). */
  reset(ref: string): void {
    this.#latestBlock.delete(ref)
    for (const key of this.#entries.keys()) if (key.startsWith(`${ref}\0`)) this.#entries.delete(key)
  }
}
