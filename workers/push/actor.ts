// The sending actor of one project. Only the holder of the project's sending
// lease runs one (actor-host.ts, lib/leases/lease-keeper.ts). It claims due queue rows in
// batches, each batch in its own transaction (the row locks are the claim),
// sends every row through its platform's provider with at most `concurrency`
// in flight, and settles the batch in that transaction: settled rows leave the
// queue, one delivery_log row per attempt. NOTIFY wakes it; a timer wakes it
// for retries and later sends.
//
// The lease is checked by the catalogue's clock before each batch is claimed,
// and by its local deadline before each request goes out: a holder that wakes
// after losing it sends nothing more, and hands its unsent rows back. Its open
// batches' transactions end on the server (idle_in_transaction_session_timeout,
// set by the host to the lease length) unless the actor touches them, which it
// does only while it holds the lease; so the claims of a frozen holder end
// about when its lease does, and the next holder claims those rows again.
import type pg from 'pg'
import { syncPushSettings, type PushSettings } from './install.ts'
import { acknowledge, type Ack } from './queue/acknowledge.ts'
import { batchTally, commitDeliveries, countDelivery } from './delivery-tally.ts'
import { beginBatch, claimDeliveries, type ClaimCursor, type ClaimedRow } from './queue/claim.ts'
import { deactivateDevices, type Gone } from './queue/deactivate-devices.ts'
import { loadCredentials } from './queue/load-credentials.ts'
import { nextDue } from './queue/next-due.ts'
import { stopProvider } from './queue/stop-provider.ts'
import { decideRetry } from './retry-policy.ts'
import type { ApnsTokens } from './providers/apns-token.ts'
import type { Outcome, Platform, PushProvider } from './providers/provider.ts'
import { providerFor, PROVIDERS, type PushEndpoints } from './providers/registry.ts'

export interface ActorOptions {
  ref: string
  /** The plan, and the deliveries cap the fan-out trigger enforces (install.ts), as of a catalogue version. */
  settings: PushSettings
  concurrency: number
  /** A pool on the project's database as the data plane's login role, for this actor alone. */
  pool: pg.Pool
  endpoints: PushEndpoints
  tokens: ApnsTokens
  batchSize?: number
  pollIntervalMs?: number
  retryDelayScale?: number
  /** The sending lease (default: always held, for callers that run one actor alone). */
  lease?: ActorLease
  onError?: (message: string, err: unknown) => void
}

export interface ActorLease {
  /** Still held by the local deadline (cheap: asked before every request). */
  valid(): boolean
  /** Still held by the catalogue's clock (one round trip: asked before every claim). */
  verify(): Promise<boolean>
  /** How often open batches' transactions are touched while the lease is valid. */
  touchMs: number
}

const ALWAYS_HELD: ActorLease = { valid: () => true, verify: async () => true, touchMs: 0 }

/** The actor found its lease lost before a claim: it stops, and the host lets the project go. */
export class LeaseLostError extends Error {
  constructor() {
    super('the sending lease is no longer held')
    this.name = 'LeaseLostError'
  }
}

interface AckDetails {
  httpStatus?: number | null
  reason?: string | null
  providerId?: string | null
  runAt?: Date | null
  counts?: boolean
  gone?: { at: Date | null }
}

/** The outcome of one row as the batch settles it: one object of one shape per delivery (thousands a second). */
/** Why a row of a provider whose keys the project never stored fails, and how to add them. */
const MISSING_KEYS: Partial<Record<Platform, string>> = {
  apns: 'no APNs key stored for this project: add one with PUT /push/v1/credentials/apns or baseplane push credentials set REF apns',
  fcm: 'no FCM service account stored for this project: add one with PUT /push/v1/credentials/fcm or baseplane push credentials set REF fcm',
}

function ack(row: ClaimedRow, disposition: Ack['disposition'], log: Ack['log'], d: AckDetails): Ack {
  return {
    queueId: row.queueId,
    deviceId: row.deviceId,
    disposition,
    log,
    httpStatus: d.httpStatus ?? null,
    reason: d.reason ?? null,
    providerId: d.providerId ?? null,
    runAt: d.runAt ?? null,
    counts: d.counts ?? true,
    gone: d.gone,
  }
}

interface Batch {
  client: pg.PoolClient
  rows: ClaimedRow[]
  /** Index of the next row to send; rows before it are in flight or answered. */
  next: number
  /** Rows not yet answered (sent or not): the batch settles at zero. */
  pending: number
  acks: Ack[]
  gone: Gone[]
  /** Logged rows by provider and outcome, counted for the metrics once the batch commits. */
  logged: Uint32Array
  /** Its outcomes are being written: no more touches on its connection. */
  settling: boolean
}

interface Slot {
  provider: PushProvider
  /** The version of the keys it was built from (ProviderKeys.version). */
  version: string
  stopped: boolean
  /** Asked just before a request goes out: the slot was stopped or replaced meanwhile (one function per slot, not per row). */
  withdrawn: () => boolean
}

export class PushActor {
  readonly ref: string
  #settings: PushSettings
  #concurrency: number
  readonly #pool: pg.Pool
  readonly #options: ActorOptions
  readonly #batch: number
  readonly #poll: number
  #slots: Partial<Record<Platform, Slot>> = {}
  /** Platforms whose keys the project never stored (or removed): their rows fail at once, saying which keys to add. */
  #missing: Platform[] = []
  #inFlight = 0
  /**
   * Batches with rows claimed but not yet sent, oldest first. The actor reads
   * one batch ahead of its sending window, so the window stays full while the
   * next claim is on its way (without it, every claim emptied the window).
   */
  readonly #queued: Batch[] = []
  /** Rows in #queued not yet sent. */
  #buffered = 0
  /** Batches claimed and not yet settled (each holds a connection and its rows' locks). */
  #openBatches = 0
  /** Where the last full claim ended; reset whenever rows behind it may be due again. */
  #cursor: ClaimCursor | undefined
  #stopping = false
  #reload = true
  #drained = false
  #signal: (() => void) | undefined
  #woken = false
  #loop: Promise<void> | undefined
  #idle: (() => void)[] = []
  #failed: ((err: unknown) => void) | undefined
  readonly #lease: ActorLease
  /** Batches claimed and not yet settling, whose transactions the touch keeps open. */
  readonly #open = new Set<Batch>()
  #touch: NodeJS.Timeout | undefined

  constructor(options: ActorOptions) {
    this.ref = options.ref
    this.#options = options
    this.#settings = options.settings
    this.#concurrency = options.concurrency
    this.#pool = options.pool
    this.#batch = options.batchSize ?? 500
    this.#poll = options.pollIntervalMs ?? 30000
    this.#lease = options.lease ?? ALWAYS_HELD
  }

  get inFlight(): number {
    return this.#inFlight
  }

  /** Starts sending; `onFailure` is called if the actor dies (database lost), so the host can re-claim. */
  async start(onFailure: (err: unknown) => void): Promise<void> {
    this.#failed = onFailure
    await syncPushSettings(this.#pool, this.#settings)
    if (this.#lease.touchMs > 0) {
      this.#touch = setInterval(() => this.#touchOpenBatches(), this.#lease.touchMs)
      this.#touch.unref()
    }
    this.#loop = this.#run().catch((err) => {
      this.#stopping = true
      this.#failed?.(err)
    })
  }

  /** A NOTIFY on baseplane_push: new rows, or changed keys. */
  notify(payload: string): void {
    if (payload === 'credentials') this.#reload = true
    this.#drained = false
    this.#wake()
  }

  /** A new plan or deliveries cap (the catalogue changed the project). */
  async setPlan(settings: PushSettings, concurrency: number): Promise<void> {
    this.#settings = settings
    this.#concurrency = concurrency
    await syncPushSettings(this.#pool, settings)
    this.#pump()
    this.#wake()
  }

  async stop(): Promise<void> {
    this.#stopping = true
    this.#wake()
    await this.#loop
    this.#handBackQueued()
    if (this.#openBatches > 0) {
      await Promise.race([new Promise<void>((resolve) => this.#idle.push(resolve)), new Promise((r) => setTimeout(r, 5000))])
    }
    clearInterval(this.#touch)
    await Promise.all(Object.values(this.#slots).map((slot) => slot.provider.close()))
    this.#slots = {}
  }

  /**
   * Keeps the open batches' transactions from the server's idle timeout, while
   * the lease holds. A holder that stops (frozen, starved, cut off) stops
   * touching, and the server ends its claims.
   */
  #touchOpenBatches(): void {
    if (!this.#lease.valid()) return
    for (const batch of this.#open) if (!batch.settling) batch.client.query('select 1').catch(() => {})
  }

  #wake(): void {
    const signal = this.#signal
    this.#signal = undefined
    // A wake while the loop is busy (claiming, reading the next due time) is kept for its next wait.
    if (signal) signal()
    else this.#woken = true
  }

  #wait(ms: number): Promise<void> {
    if (this.#woken) {
      this.#woken = false
      return Promise.resolve()
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#signal = undefined
        resolve()
      }, Math.max(0, ms))
      this.#signal = () => {
        clearTimeout(timer)
        resolve()
      }
    })
  }

  /** Platforms whose rows are claimed: those that can send, and those with no keys (failed at once). A stopped one's rows are held. */
  #platforms(): Platform[] {
    return [...(Object.entries(this.#slots) as [Platform, Slot][]).filter(([, s]) => !s.stopped).map(([p]) => p), ...this.#missing]
  }

  async #run(): Promise<void> {
    while (!this.#stopping) {
      if (this.#reload) {
        this.#reload = false
        await this.#loadProviders()
      }
      let claimedNothing = false
      if (!this.#drained && this.#worthClaiming()) {
        const limit = Math.min(this.#room(), this.#batch)
        // By the catalogue's clock: a holder that slept through a takeover claims nothing.
        if (!(await this.#lease.verify())) throw new LeaseLostError()
        if (this.#stopping) break
        const claimed = await this.#claim(limit)
        if (claimed === limit) continue
        this.#drained = true
        claimedNothing = claimed === 0
      }
      if (this.#stopping) break
      if (!this.#drained) {
        // Waiting for capacity: a completion wakes the loop.
        await this.#wait(this.#poll)
        continue
      }
      const due = await nextDue(this.#pool, this.#platforms())
      let untilDue = due === null ? this.#poll : Math.min(this.#poll, due.getTime() - Date.now())
      // A due row that could not be claimed is locked by a batch still in flight: its settling wakes us.
      if (untilDue <= 0 && claimedNothing) untilDue = this.#openBatches > 0 ? this.#poll : 50
      if (untilDue > 0) await this.#wait(untilDue)
      this.#drained = false
    }
  }

  /** Rows the actor may still claim: its sending window plus one batch read ahead, less what it holds. */
  #room(): number {
    return this.#concurrency + Math.min(this.#batch, this.#concurrency) - this.#inFlight - this.#buffered
  }

  /** Room enough for a claim: nothing held at all, or room for a good part of a batch (not a claim per answer). */
  #worthClaiming(): boolean {
    const room = this.#room()
    return room > 0 && (this.#inFlight + this.#buffered === 0 || room >= Math.min(this.#batch, Math.max(1, Math.floor(this.#concurrency / 2))))
  }

  /** Opens a batch: a transaction whose row locks are the claim. Returns how many rows it took. */
  async #claim(limit: number): Promise<number> {
    const client = await this.#pool.connect()
    let rows: ClaimedRow[]
    try {
      await beginBatch(client)
      rows = await claimDeliveries(client, this.#platforms(), limit, this.#cursor)
    } catch (err) {
      await client.query('rollback').catch(() => {})
      client.release(err as Error)
      throw err
    }
    // A short claim means nothing more is due after the cursor: next time, look from the start
    // (rows handed back, or committed late with an earlier run_at, are found there).
    const last = rows.at(-1)
    this.#cursor = rows.length === limit && last ? { runAt: last.runAt, id: last.queueId } : undefined
    if (rows.length === 0) {
      await client.query('rollback').catch(() => {})
      client.release()
      return 0
    }
    this.#openBatches++
    const batch: Batch = { client, rows, next: 0, pending: rows.length, acks: [], gone: [], logged: batchTally(), settling: false }
    this.#open.add(batch)
    this.#queued.push(batch)
    this.#buffered += rows.length
    this.#pump()
    return rows.length
  }

  async #loadProviders(): Promise<void> {
    const stored = await loadCredentials(this.#pool)
    const { endpoints, tokens } = this.#options
    const next: Partial<Record<Platform, Slot>> = {}
    const old = this.#slots
    for (const entry of PROVIDERS) {
      const keys = entry.provider(stored, { endpoints, tokens })
      if (!keys) continue
      const kept = old[entry.platform]
      // Unchanged keys keep their provider (its connections and tokens).
      const slot = kept && kept.version === keys.version ? kept : this.#slot(entry.platform, keys.version, keys.open())
      slot.stopped = keys.stopped
      next[entry.platform] = slot
    }
    this.#slots = next
    this.#missing = PROVIDERS.filter((entry) => entry.storedKeys && next[entry.platform] === undefined).map((entry) => entry.platform)
    for (const [platform, slot] of Object.entries(old) as [Platform, Slot][]) {
      if (next[platform] !== slot) void slot.provider.close()
    }
  }

  #slot(platform: Platform, version: string, provider: PushProvider): Slot {
    // Also withdrawn once the lease is no longer held: a request still waiting for a stream is not sent.
    const slot: Slot = { provider, version, stopped: false, withdrawn: () => slot.stopped || this.#slots[platform] !== slot || !this.#lease.valid() }
    return slot
  }

  /** Sends queued rows while the window has room. */
  #pump(): void {
    if (this.#stopping) return
    while (this.#inFlight < this.#concurrency && this.#queued.length > 0) {
      const batch = this.#queued[0]!
      const row = batch.rows[batch.next++]!
      if (batch.next === batch.rows.length) this.#queued.shift()
      this.#buffered--
      this.#dispatch(batch, row)
    }
  }

  /** Stopping: rows claimed but never sent go back to the queue as they were, so their batches settle. */
  #handBackQueued(): void {
    for (const batch of this.#queued.splice(0)) {
      while (batch.next < batch.rows.length) {
        const row = batch.rows[batch.next++]!
        this.#buffered--
        batch.acks.push(ack(row, 'untouched', null, { counts: false }))
        if (--batch.pending === 0) void this.#settle(batch)
      }
    }
  }

  #dispatch(batch: Batch, row: ClaimedRow): void {
    this.#inFlight++
    if (!this.#lease.valid()) {
      // The lease may have passed to another node: the row goes back as it was, unsent.
      queueMicrotask(() => this.#answered(batch, row, ack(row, 'untouched', null, { counts: false })))
      return
    }
    const slot = this.#slots[row.platform]
    const usable = slot !== undefined && !slot.stopped
    const early = this.#settleUnsent(row, usable)
    if (early !== undefined || !usable) {
      // Settled without a request; answered in a microtask all the same, like every other row.
      const settled = early ?? ack(row, 'untouched', null, { counts: false })
      queueMicrotask(() => this.#answered(batch, row, settled))
      return
    }
    // One promise per delivery on this path: the request's own, classified here.
    slot.provider.send(row, slot.withdrawn).then(
      (outcome) => {
        let settled: Ack
        try {
          settled = this.#classify(row, slot, outcome)
        } catch (err) {
          settled = this.#unexpected(row, err)
        }
        this.#answered(batch, row, settled)
      },
      (err: unknown) => this.#answered(batch, row, this.#unexpected(row, err)),
    )
  }

  /** A row that needs no request: its message or device gone, its TTL over, or no keys to send it with; undefined otherwise. */
  #settleUnsent(row: ClaimedRow, usable: boolean): Ack | undefined {
    if (!row.messageFound) return ack(row, 'done', 'failed', { reason: 'message deleted before sending' })
    if (!row.deviceActive) return ack(row, 'done', 'failed', { reason: 'device deactivated or deleted before sending' })
    if (row.expiresAtMs < Date.now() && (row.attempt > 1 || !usable)) {
      return ack(row, 'done', 'expired', { reason: 'TTL passed before delivery' })
    }
    // No keys at all (none stored, none arriving: a credentials change reloads first): it would wait for its TTL, unexplained.
    if (this.#slots[row.platform] === undefined && this.#missing.includes(row.platform) && !this.#reload) {
      return ack(row, 'done', 'failed', { reason: MISSING_KEYS[row.platform] ?? `no ${row.platform} credentials stored for this project` })
    }
    // Keys missing or stopped since the claim: the caller hands the row back untried.
    return undefined
  }

  #unexpected(row: ClaimedRow, err: unknown): Ack {
    this.#options.onError?.('push delivery failed unexpectedly', err)
    return ack(row, 'again', null, { runAt: new Date(Date.now() + 1000), counts: false })
  }

  #answered(batch: Batch, row: ClaimedRow, settled: Ack): void {
    batch.acks.push(settled)
    countDelivery(batch.logged, row.platform, settled.log)
    if (settled.gone) batch.gone.push({ deviceId: settled.deviceId, reason: settled.reason ?? 'gone', at: settled.gone.at })
    // The provider answered: the slot is free for the next row, while this batch waits to settle.
    this.#inFlight--
    this.#pump()
    if (--batch.pending === 0) void this.#settle(batch)
    // Waking the loop only when it would claim: a wake per answer costs a timer and a promise each.
    else if (!this.#drained && this.#worthClaiming()) this.#wake()
  }

  /** Commits a batch's outcomes; only then do its rows count as done (and its slots free up). */
  async #settle(batch: Batch): Promise<void> {
    const { client } = batch
    batch.settling = true
    this.#open.delete(batch)
    // Rows handed back untouched keep their run_at, behind the cursor.
    if (batch.acks.some((a) => a.disposition === 'untouched')) this.#cursor = undefined
    try {
      await acknowledge(client, batch.acks)
      await deactivateDevices(client, batch.gone)
      await client.query('commit')
      client.release()
      commitDeliveries(this.ref, batch.logged)
    } catch (err) {
      // The rows stay queued (the transaction rolled back): they are sent again, at least once.
      this.#cursor = undefined
      await client.query('rollback').catch(() => {})
      client.release(err as Error)
      this.#options.onError?.('could not settle a push batch', err)
    }
    this.#openBatches--
    if (this.#openBatches === 0) for (const resolve of this.#idle.splice(0)) resolve()
    // A retry may be due before the timer the loop sleeps on; and capacity is free again.
    this.#drained = false
    this.#wake()
  }

  #classify(row: ClaimedRow, slot: Slot, outcome: Outcome): Ack {
    const httpStatus = outcome.httpStatus
    switch (outcome.kind) {
      case 'untried':
        return ack(row, 'untouched', null, { httpStatus, counts: false })
      case 'sent':
        return ack(row, 'done', 'sent', { httpStatus, providerId: outcome.providerId })
      case 'failed':
        return ack(row, 'done', 'failed', { httpStatus, reason: outcome.reason, gone: outcome.gone })
      case 'stop':
        this.#stopPlatform(row.platform, slot, outcome.reason)
        // Held, not failed: it goes out once the keys are fixed.
        return ack(row, 'again', 'held', { httpStatus, reason: outcome.reason, runAt: new Date(), counts: false })
      case 'retry': {
        const decision = decideRetry({
          plan: this.#settings.plan,
          attempt: row.attempt,
          firstAttemptAt: row.firstAttemptAtMs === null ? new Date() : new Date(row.firstAttemptAtMs),
          expiresAt: new Date(row.expiresAtMs),
          retryAfterMs: outcome.retryAfterMs,
          scale: this.#options.retryDelayScale,
        })
        if (decision.retry) return ack(row, 'again', 'retry', { httpStatus, reason: outcome.reason, runAt: decision.runAt })
        return ack(row, 'done', decision.why === 'expired' ? 'expired' : 'failed', { httpStatus, reason: outcome.reason })
      }
    }
  }

  #stopPlatform(platform: Platform, slot: Slot, reason: string): void {
    if (slot.stopped) return
    slot.stopped = true
    if (providerFor(platform)?.storedKeys) {
      stopProvider(this.#pool, platform, slot.version, reason).catch((err) => this.#options.onError?.('could not record a stopped provider', err))
    }
  }
}
