// Per-project, per-source-address throttle. Services report failed attempts
// (Auth: 4xx answers from sign-in, sign-up, recovery, OTP, verification);
// once an address passes the threshold inside the window, every service of
// that project refuses it until the block ends.
//
// The counts are shared by every data-plane process of the catalogue, so a
// load balancer in front of N processes does not give an address N times the
// attempts. The request path stays synchronous: it reads this process's view,
// in which an address's count is the shared total returned by the last write
// plus this process's failures since, so one process alone still blocks at
// exactly maxFailures. A timer writes the failures in one batch, learns the
// totals (and the blocks they reach), and polls for blocks other processes
// set. Polling rather than LISTEN: the timer runs anyway for the writes, it
// holds no connection of its own, and a dropped listener would need the same
// poll to catch up. While the catalogue fails, the view keeps counting here
// and the writes are retried on the next tick.
import { LRUCache } from 'lru-cache'
import type pg from 'pg'
import { log } from '../lib/log.ts'
import { addFailures, blocksSince, forgetProject, sweepExpired, type FailureBatch } from './throttle-store.ts'

export interface ThrottleSettings {
  maxFailures: number
  windowSeconds: number
  blockSeconds: number
}

/** How often failures are written and other processes' blocks read. */
const SYNC_MS = 200
/** Blocks are read again this far back: a write that began before the last look may commit after it. */
const POLL_OVERLAP_MS = 5000
const SWEEP_MS = 60_000
/** While the catalogue fails, its error is logged at most this often. */
const ERROR_LOG_MS = 30_000
/** Closing waits at most this long for the last write (a hung catalogue must not hold up a stop). */
const CLOSE_WRITE_MS = 2000
/** Rows per statement, so a flood of addresses is written in bounded statements. */
const BATCH_ROWS = 1000

interface Entry {
  ref: string
  address: string
  windowStart: number
  /** The shared total as this process knows it: the last write's total plus failures since. */
  count: number
  /** Failures not yet written to the catalogue. */
  pending: number
  /** Blocks decided here and not yet written. */
  unannounced: number
  blockedUntil: number
}

const keyOf = (ref: string, address: string) => `${ref}\0${address}`
/**
 * Real addresses are short printable ASCII. Anything else (a proxy's odd header) is counted by this
 * process only, so no value can fail a whole batch (the index's size limit, NUL, encodings).
 */
const shareable = (address: string) => /^[\x21-\x7e]{1,255}$/.test(address)

export class Throttle {
  /** Keys with failures or blocks not yet written. */
  readonly #dirty = new Set<string>()
  readonly #entries = new LRUCache<string, Entry>({ max: 200000, dispose: (_entry, key) => this.#dirty.delete(key) })
  /** Per project, the latest end of any block, so unaffected projects skip the per-address lookup. */
  readonly #latestBlock = new Map<string, number>()
  /** Projects reset here whose rows are still to be deleted from the catalogue. */
  readonly #forgotten = new Set<string>()
  readonly #settings: ThrottleSettings
  /** Set by start(); until then (unit tests) the counts are this process's only. */
  #catalogue: pg.Pool | undefined
  readonly #now: () => number
  #timer: NodeJS.Timeout | undefined
  #running: Promise<void> | undefined
  #closing: Promise<void> | undefined
  /** The catalogue's time of the last look for blocks. */
  #lookedAt: Date | undefined
  #sweptAt = 0
  #failingSince: number | undefined
  #errorLoggedAt = 0

  constructor(settings: ThrottleSettings, now: () => number = Date.now) {
    this.#settings = settings
    this.#now = now
  }

  /** Shares the counts through `catalogue`: learns the blocks in force (a restarted process must not grant fresh attempts), then syncs on a timer. */
  async start(catalogue: pg.Pool): Promise<void> {
    this.#catalogue = catalogue
    await this.#sync(catalogue)
    this.#schedule(catalogue)
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
    const entry = this.#entries.get(keyOf(ref, address))
    if (entry === undefined) return 0
    const left = entry.blockedUntil - this.#now()
    return left > 0 ? Math.ceil(left / 1000) : 0
  }

  recordFailure(ref: string, address: string): void {
    const key = keyOf(ref, address)
    const now = this.#now()
    let entry = this.#entries.get(key)
    if (entry === undefined) {
      entry = { ref, address, windowStart: now, count: 0, pending: 0, unannounced: 0, blockedUntil: 0 }
      this.#entries.set(key, entry)
    } else if (now - entry.windowStart > this.#settings.windowSeconds * 1000) {
      entry.windowStart = now
      entry.count = 0
    }
    const shared = shareable(address)
    entry.count += 1
    if (shared) entry.pending += 1
    if (entry.count >= this.#settings.maxFailures) {
      this.#block(entry, now + this.#settings.blockSeconds * 1000)
      entry.count = 0
      entry.windowStart = now
      if (shared) entry.unannounced += 1
    }
    if (shared) this.#dirty.add(key)
  }

  /** Forgets every address of `ref` here and in the catalogue (tests, an operator's reset); other processes keep blocks they already learned until they end. */
  reset(ref: string): void {
    this.#latestBlock.delete(ref)
    for (const key of this.#entries.keys()) if (key.startsWith(`${ref}\0`)) this.#entries.delete(key)
    this.#forgotten.add(ref)
  }

  /** Stops the timer and writes what is pending. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      clearTimeout(this.#timer)
      const catalogue = this.#catalogue
      if (catalogue === undefined) return
      let timer: NodeJS.Timeout | undefined
      const lastWrite = (async () => {
        await this.#running
        await this.#write(catalogue).catch((error: unknown) => log.error('the throttle could not write its last failures to the catalogue', error))
        return true
      })()
      const timedOut = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), CLOSE_WRITE_MS)))
      const written = await Promise.race([lastWrite, timedOut])
      clearTimeout(timer)
      if (!written) log.error(`the throttle stopped without its last failures: the catalogue did not answer within ${CLOSE_WRITE_MS} ms`)
    })()
    return this.#closing
  }

  #block(entry: Entry, until: number): void {
    if (until > entry.blockedUntil) entry.blockedUntil = until
    this.#latestBlock.set(entry.ref, Math.max(this.#latestBlock.get(entry.ref) ?? 0, entry.blockedUntil))
  }

  #schedule(catalogue: pg.Pool): void {
    if (this.#closing) return
    this.#timer = setTimeout(() => {
      this.#running = this.#sync(catalogue).finally(() => {
        this.#running = undefined
        this.#schedule(catalogue)
      })
    }, SYNC_MS)
    this.#timer.unref()
  }

  /** One tick: write, look for others' blocks, now and then delete expired rows. Never throws. */
  async #sync(catalogue: pg.Pool): Promise<void> {
    try {
      await this.#write(catalogue)
      await this.#learnBlocks(catalogue)
      if (Date.now() - this.#sweptAt > SWEEP_MS) {
        await sweepExpired(catalogue, this.#settings.windowSeconds)
        this.#sweptAt = Date.now()
      }
      if (this.#failingSince !== undefined) log.info('the throttle syncs with the catalogue again', { failingForMs: Date.now() - this.#failingSince })
      this.#failingSince = undefined
    } catch (error) {
      const now = Date.now()
      if (this.#failingSince === undefined || now - this.#errorLoggedAt >= ERROR_LOG_MS) {
        log.error('the throttle could not sync with the catalogue; counting in this process and retrying', error)
        this.#errorLoggedAt = now
      }
      this.#failingSince ??= now
    }
  }

  /** Deletes reset projects' rows, then writes pending failures in batches and takes in the shared totals. */
  async #write(catalogue: pg.Pool): Promise<void> {
    for (const ref of this.#forgotten) {
      await forgetProject(catalogue, ref)
      this.#forgotten.delete(ref)
    }
    // Only the keys dirty now: under a steady flood a tick must still end.
    const keys = [...this.#dirty]
    for (let start = 0; start < keys.length; start += BATCH_ROWS) {
      const sent: Array<{ key: string; entry: Entry; failures: number; blocks: number }> = []
      const batch: FailureBatch = { refs: [], addresses: [], failures: [], blocks: [] }
      for (const key of keys.slice(start, start + BATCH_ROWS)) {
        const entry = this.#entries.peek(key)
        if (entry === undefined) continue
        sent.push({ key, entry, failures: entry.pending, blocks: entry.unannounced })
        batch.refs.push(entry.ref)
        batch.addresses.push(entry.address)
        batch.failures.push(entry.pending)
        batch.blocks.push(entry.unannounced > 0)
      }
      if (sent.length === 0) continue
      const totals = new Map((await addFailures(catalogue, batch, this.#settings)).map((row) => [keyOf(row.ref, row.address), row]))
      const now = this.#now()
      for (const { key, entry, failures, blocks } of sent) {
        // Reset or evicted while the batch was out: its answer is about an entry that is gone.
        if (this.#entries.peek(key) !== entry) continue
        entry.pending -= failures
        entry.unannounced -= blocks
        if (entry.pending === 0 && entry.unannounced === 0) this.#dirty.delete(key)
        const total = totals.get(key)
        if (total === undefined) continue
        if (total.blockedMs > 0) this.#block(entry, now + total.blockedMs)
        // A block decided here since the batch left already reset the count.
        if (entry.unannounced === 0) {
          entry.count = total.failures + entry.pending
          entry.windowStart = now - total.windowAgeMs
        }
      }
    }
  }

  async #learnBlocks(catalogue: pg.Pool): Promise<void> {
    const since = this.#lookedAt && new Date(this.#lookedAt.getTime() - POLL_OVERLAP_MS)
    const { at, blocks } = await blocksSince(catalogue, since)
    this.#lookedAt = at
    const now = this.#now()
    for (const { ref, address, blockedMs } of blocks) {
      const key = keyOf(ref, address)
      let entry = this.#entries.get(key)
      if (entry === undefined) {
        entry = { ref, address, windowStart: now, count: 0, pending: 0, unannounced: 0, blockedUntil: 0 }
        this.#entries.set(key, entry)
      } else if (entry.blockedUntil <= now) {
        // The block reset the shared count; only failures not yet written remain.
        entry.count = entry.pending
        entry.windowStart = now
      }
      this.#block(entry, now + blockedMs)
    }
  }
}
