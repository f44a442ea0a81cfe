// Per-project, per-source-address throttle. Services report failed attempts
// (Auth: 4xx answers from sign-in, sign-up, recovery, OTP, verification);
// once an address passes the threshold inside the window, every service of
// that project refuses it until the block ends.
//
// An attempt is counted before it is checked (begin(), then the attempt is
// settled: kept as a failure, or released when it did not fail), so attempts
// checked at the same time cannot all slip under the limit: once the count
// (failures plus attempts in flight) reaches maxFailures, further attempts are
// refused with 429 until one is released or the block ends. The first attempt
// of an address this process knows nothing of is admitted on the local count
// alone (so an ordinary sign-in costs the catalogue nothing); any attempt
// while the address has a count is written to the catalogue before it is
// checked, and the shared total decides. Across processes, at most
// ATTEMPT_OVERSHOOT_PER_PROCESS attempts per process beyond maxFailures are
// checked in a window: the one admitted on the local count. (While the
// catalogue fails or is slower than RESERVE_WAIT_MS, each process decides
// alone, as below.) A failure that brings the count to maxFailures blocks the
// address; the count then holds other processes' attempts in flight as last
// learned (never this process's own), so a block may come that many early.
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
import { addFailures, blocksSince, forgetProject, releaseAttempts, sweepExpired, type FailureBatch, type ReleaseBatch, type SharedCount } from './throttle-store.ts'

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
/** How long an attempt waits for its count to reach the catalogue before the local count decides. */
const RESERVE_WAIT_MS = 1000
/** A refusal while the limit is taken by attempts in flight (not a block) asks the client to wait this long. */
const IN_FLIGHT_RETRY_SECONDS = 1
/**
 * Attempts beyond maxFailures that one process may let be checked per address and window when
 * processes race (the attempt it admits on its local count before it knows the shared one).
 */
export const ATTEMPT_OVERSHOOT_PER_PROCESS = 1

/** An attempt counted by begin(): settle it once with whether it failed. */
export interface Attempt {
  settle(failed: boolean): void
}

interface Entry {
  ref: string
  address: string
  windowStart: number
  /** The shared total as this process knows it (failures and attempts in flight): the last write's total plus changes since. */
  count: number
  /** Change to the count not yet written to the catalogue (negative when more attempts were released than counted). */
  pending: number
  /** Failures settled here and not yet written (a write that carries one may find the limit reached, and blocks). */
  failed: number
  /** Attempts begun here and not settled yet. */
  inFlight: number
  /** The write carrying this entry, while one is out: one at a time, so no change is sent twice. */
  writing: Promise<unknown> | undefined
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

  /** A failure of an attempt that was not counted by begin(). */
  recordFailure(ref: string, address: string): void {
    const entry = this.#entryOf(ref, address)
    entry.count += 1
    if (shareable(address)) entry.pending += 1
    this.#failed(entry)
  }

  /**
   * Counts an attempt before it is checked. Resolves to the attempt, to settle
   * with its outcome, or to the seconds the address must wait (refused).
   */
  async begin(ref: string, address: string): Promise<Attempt | number> {
    const entry = this.#entryOf(ref, address)
    const refused = this.#refusal(entry, this.#settings.maxFailures)
    if (refused > 0) return refused
    // Something counts already (failures, or attempts in flight anywhere): the shared count decides.
    const hot = entry.count > 0
    const shared = shareable(address)
    entry.count += 1
    entry.inFlight += 1
    if (shared) {
      entry.pending += 1
      this.#dirty.add(keyOf(ref, address))
    }
    let settled = false
    const attempt: Attempt = {
      settle: (failed) => {
        if (settled) return
        settled = true
        this.#settle(entry, failed)
      },
    }
    const catalogue = this.#catalogue
    if (hot && shared && catalogue !== undefined && !this.#closing) {
      await this.#writeNow(catalogue, entry)
      // Over only past the limit: the count includes this attempt.
      const over = this.#refusal(entry, this.#settings.maxFailures + 1)
      if (over > 0) {
        attempt.settle(false)
        return over
      }
    }
    return attempt
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

  /** The entry of (ref, address), made or started again when its window is over. */
  #entryOf(ref: string, address: string): Entry {
    const key = keyOf(ref, address)
    const now = this.#now()
    let entry = this.#entries.get(key)
    if (entry === undefined) {
      entry = { ref, address, windowStart: now, count: 0, pending: 0, failed: 0, inFlight: 0, writing: undefined, unannounced: 0, blockedUntil: 0 }
      this.#entries.set(key, entry)
    } else if (now - entry.windowStart > this.#settings.windowSeconds * 1000) {
      entry.windowStart = now
      // Attempts still in flight stay counted: they are settled later.
      entry.count = entry.inFlight
    }
    return entry
  }

  /** Seconds to refuse `entry` for: its block, or a short wait while its count is at `limit`. */
  #refusal(entry: Entry, limit: number): number {
    const left = entry.blockedUntil - this.#now()
    if (left > 0) return Math.ceil(left / 1000)
    return entry.count >= limit ? IN_FLIGHT_RETRY_SECONDS : 0
  }

  #settle(entry: Entry, failed: boolean): void {
    const key = keyOf(entry.ref, entry.address)
    // Reset or evicted meanwhile: the attempt's count went with the entry.
    if (this.#entries.peek(key) !== entry) return
    entry.inFlight -= 1
    if (failed) return this.#failed(entry)
    entry.count = Math.max(0, entry.count - 1)
    if (shareable(entry.address)) {
      entry.pending -= 1
      this.#dirty.add(key)
    }
  }

  /**
   * A failure, already in the count: blocks the address when the count, less this process's
   * attempts still in flight (not failures yet), reached the limit.
   */
  #failed(entry: Entry): void {
    const shared = shareable(entry.address)
    if (shared) {
      entry.failed += 1
      this.#dirty.add(keyOf(entry.ref, entry.address))
    }
    if (entry.count - entry.inFlight >= this.#settings.maxFailures) this.#blockHere(entry)
  }

  /** A block decided by this process; the count starts again. */
  #blockHere(entry: Entry): void {
    const now = this.#now()
    this.#block(entry, now + this.#settings.blockSeconds * 1000)
    entry.count = 0
    entry.windowStart = now
    if (shareable(entry.address)) {
      entry.unannounced += 1
      this.#dirty.add(keyOf(entry.ref, entry.address))
    }
  }

  /**
   * Writes `entry`'s changes now (after any write of it already out), so the
   * shared total decides its next attempt. Gives up waiting after
   * RESERVE_WAIT_MS or on an error: the local count decides, and the timer
   * writes what is still pending.
   */
  async #writeNow(catalogue: pg.Pool, entry: Entry): Promise<void> {
    const deadline = Date.now() + RESERVE_WAIT_MS
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, RESERVE_WAIT_MS)))
    try {
      while (entry.writing !== undefined && Date.now() < deadline) await Promise.race([entry.writing.catch(() => {}), late])
      if (entry.writing !== undefined || (entry.pending === 0 && entry.unannounced === 0 && entry.failed === 0)) return
      // A failed write leaves the changes pending; the timer retries them and logs the failure.
      const write = this.#writeBatch(catalogue, [keyOf(entry.ref, entry.address)]).catch(() => {})
      await Promise.race([write, late])
    } finally {
      clearTimeout(timer)
    }
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
    for (let start = 0; start < keys.length; start += BATCH_ROWS) await this.#writeBatch(catalogue, keys.slice(start, start + BATCH_ROWS))
  }

  /** Writes the changes of `keys` (those not already being written) and takes in the shared totals. */
  async #writeBatch(catalogue: pg.Pool, keys: readonly string[]): Promise<void> {
    const sent: Array<{ key: string; entry: Entry; changes: number; failed: number; blocks: number; inFlight: number }> = []
    const batch: FailureBatch = { refs: [], addresses: [], failures: [], blocks: [] }
    const releases: ReleaseBatch = { refs: [], addresses: [], released: [] }
    for (const key of keys) {
      const entry = this.#entries.peek(key)
      if (entry === undefined || entry.writing !== undefined) continue
      if (entry.pending === 0 && entry.unannounced === 0 && entry.failed === 0) {
        // An attempt counted and released before any write: nothing to tell.
        this.#dirty.delete(key)
        continue
      }
      sent.push({ key, entry, changes: entry.pending, failed: entry.failed, blocks: entry.unannounced, inFlight: entry.inFlight })
      if (entry.pending < 0 && entry.unannounced === 0) {
        releases.refs.push(entry.ref)
        releases.addresses.push(entry.address)
        releases.released.push(-entry.pending)
      } else {
        batch.refs.push(entry.ref)
        batch.addresses.push(entry.address)
        batch.failures.push(Math.max(0, entry.pending))
        batch.blocks.push(entry.unannounced > 0)
      }
    }
    if (sent.length === 0) return
    const written = (async () => {
      const added = batch.refs.length > 0 ? await addFailures(catalogue, batch, this.#settings) : []
      const released = releases.refs.length > 0 ? await releaseAttempts(catalogue, releases, this.#settings) : []
      return [...added, ...released]
    })()
    for (const { entry } of sent) entry.writing = written
    let rows: SharedCount[]
    try {
      rows = await written
    } finally {
      for (const { entry } of sent) if (entry.writing === written) entry.writing = undefined
    }
    const totals = new Map(rows.map((row) => [keyOf(row.ref, row.address), row]))
    const now = this.#now()
    for (const { key, entry, changes, failed, blocks, inFlight } of sent) {
      // Reset or evicted while the batch was out: its answer is about an entry that is gone.
      if (this.#entries.peek(key) !== entry) continue
      entry.pending -= changes
      entry.failed -= failed
      entry.unannounced -= blocks
      if (entry.pending === 0 && entry.unannounced === 0 && entry.failed === 0) this.#dirty.delete(key)
      const total = totals.get(key)
      if (total === undefined) continue
      if (total.blockedMs > 0) this.#block(entry, now + total.blockedMs)
      // A block decided here since the batch left already reset the count.
      if (entry.unannounced === 0) {
        entry.count = total.failures + entry.pending
        entry.windowStart = now - total.windowAgeMs
        // Failures written, with other processes' counts (their failures, and their attempts in
        // flight), reached the limit; this process's own attempts in flight are not failures yet.
        if (failed > 0 && total.blockedMs === 0 && total.failures - inFlight >= this.#settings.maxFailures) this.#blockHere(entry)
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
        entry = { ref, address, windowStart: now, count: 0, pending: 0, failed: 0, inFlight: 0, writing: undefined, unannounced: 0, blockedUntil: 0 }
        this.#entries.set(key, entry)
      } else if (entry.blockedUntil <= now) {
        // The block reset the shared count; only changes not yet written remain.
        entry.count = Math.max(0, entry.pending)
        entry.windowStart = now
      }
      this.#block(entry, now + blockedMs)
    }
  }
}
