// The sending leases of one actor host (one node), in the catalogue's
// baseplane.push_leases: one row per push-enabled project, held by one node
// until it expires by the catalogue's clock. Every `scanMs` the node takes, in
// one statement, the leases it wants that are free (lapsed or never held);
// every `renewMs` it extends, in one statement, those it holds. A lease the
// renewal does not return, or a renewal that fails, is lost at once: its
// actor stops. Holding a lease needs no connection to the project's database,
// so nodes that do not send for a project keep none open to it.
//
// Locally a lease counts as held until `leaseMs` (less a margin) after the
// renewal that extended it was *sent*, on the monotonic clock: the database
// set the expiry later than that, so the local deadline is never after the
// real one, whatever the two wall clocks say. The monotonic clock keeps
// running while the process is stopped (SIGSTOP) or starved, so a holder that
// wakes after its lease lapsed knows it before it sends another request.
import crypto from 'node:crypto'
import os from 'node:os'
import { performance } from 'node:perf_hooks'
import type pg from 'pg'
import { leaseHeld } from './held.ts'
import { releaseLease } from './release.ts'
import { renewLeases } from './renew.ts'
import { takeLeases, type TakenLease } from './take.ts'

export interface LeaseTiming {
  /** How long a lease lasts after each renewal (default 10 s). */
  leaseMs: number
  /** How often the holder renews (default 3 s): a few renewals may fail before it lapses. */
  renewMs: number
  /** How often a node looks for free leases to take (default 2 s). */
  scanMs: number
}

/**
 * A frozen or partitioned holder is replaced within leaseMs + scanMs (12 s by
 * default): its last renewal was before it froze, so its lease lapses within
 * leaseMs, and another node's next scan takes it.
 */
export const LEASE_DEFAULTS: LeaseTiming = { leaseMs: 10000, renewMs: 3000, scanMs: 2000 }

/**
 * The statements on one lease table (push's by default; Realtime's change
 * readers keep theirs in baseplane.realtime_leases with the same columns).
 */
export interface LeaseStore {
  take(catalogue: pg.Pool, refs: string[], holder: string, leaseMs: number): Promise<TakenLease[]>
  renew(catalogue: pg.Pool, refs: string[], holder: string, leaseMs: number): Promise<TakenLease[]>
  release(catalogue: pg.Pool, ref: string, holder: string, generation: string): Promise<void>
  held(catalogue: pg.Pool, ref: string, holder: string, generation: string): Promise<boolean>
}

const PUSH_LEASES: LeaseStore = { take: takeLeases, renew: renewLeases, release: releaseLease, held: leaseHeld }

export interface LeaseEvents {
  /** This node now holds `ref`'s lease, as `generation`. */
  taken(ref: string, generation: string): void
  /** This node no longer holds it (taken by another node, lapsed, or the renewal failed). */
  lost(ref: string, generation: string, why: string): void
}

interface Held {
  generation: string
  /** performance.now() after which the lease may have lapsed. */
  validUntil: number
}

/** A node id: unique per host, its distinctive part first (application_name keeps 63 bytes). */
export function newNodeId(): string {
  return `${process.pid}.${crypto.randomBytes(4).toString('hex')}@${os.hostname()}`
}

export class LeaseKeeper {
  readonly node: string
  readonly timing: LeaseTiming
  readonly #catalogue: pg.Pool
  readonly #events: LeaseEvents
  readonly #store: LeaseStore
  readonly #wanted = new Set<string>()
  readonly #held = new Map<string, Held>()
  /** Kept below leaseMs for the difference in clock rates and the time the answer took. */
  readonly #margin: number
  #scanTimer: NodeJS.Timeout | undefined
  #renewTimer: NodeJS.Timeout | undefined
  #scanning: Promise<void> | undefined
  #renewing: Promise<void> | undefined
  #scanSoon = false
  #stopped = false

  /**
   * `catalogue`: a pool of its own whose queries time out (query_timeout about
   * renewMs), so a catalogue that hangs fails the renewal instead of holding it.
   */
  constructor(catalogue: pg.Pool, node: string, timing: LeaseTiming, events: LeaseEvents, store: LeaseStore = PUSH_LEASES) {
    this.#catalogue = catalogue
    this.#store = store
    this.node = node
    this.timing = timing
    this.#events = events
    this.#margin = Math.min(500, timing.leaseMs / 10)
  }

  start(): void {
    this.#scanTimer = setInterval(() => this.#scan(), this.timing.scanMs)
    this.#renewTimer = setInterval(() => this.#renew(), this.timing.renewMs)
  }

  async stop(): Promise<void> {
    this.#stopped = true
    clearInterval(this.#scanTimer)
    clearInterval(this.#renewTimer)
    await Promise.all([this.#scanning, this.#renewing])
  }

  /** The host sends for `ref` if it gets its lease: tried at once, then at every scan. */
  want(ref: string): void {
    this.#wanted.add(ref)
    if (this.#scanSoon) return
    this.#scanSoon = true
    setImmediate(() => {
      this.#scanSoon = false
      this.#scan()
    })
  }

  unwant(ref: string): void {
    this.#wanted.delete(ref)
  }

  /** Whether the lease is still held, by the local deadline: asked before every request goes out. */
  valid(ref: string, generation: string): boolean {
    const held = this.#held.get(ref)
    return held !== undefined && held.generation === generation && performance.now() < held.validUntil
  }

  /** Whether the lease is still held, by the catalogue's clock: asked before every batch is claimed. */
  async verify(ref: string, generation: string): Promise<boolean> {
    if (!this.valid(ref, generation)) return false
    return this.#store.held(this.#catalogue, ref, this.node, generation)
  }

  /** Gives the lease up (its actor has stopped), so another node can take it at once. */
  async release(ref: string, generation: string): Promise<void> {
    if (this.#held.get(ref)?.generation === generation) this.#held.delete(ref)
    await this.#store.release(this.#catalogue, ref, this.node, generation).catch(() => {})
  }

  #scan(): void {
    if (this.#stopped || this.#scanning) return
    const refs = [...this.#wanted].filter((ref) => !this.#held.has(ref))
    if (refs.length === 0) return
    const sentAt = performance.now()
    this.#scanning = this.#store.take(this.#catalogue, refs, this.node, this.timing.leaseMs)
      .then((taken) => {
        for (const lease of taken) this.#taken(lease, sentAt)
      })
      // The catalogue is away: nothing taken, the next scan tries again.
      .catch(() => {})
      .finally(() => {
        this.#scanning = undefined
      })
  }

  #taken(lease: TakenLease, sentAt: number): void {
    const validUntil = sentAt + this.timing.leaseMs - this.#margin
    // Unwanted meanwhile, stopping, or an answer that came too late to use: given back.
    if (!this.#wanted.has(lease.ref) || this.#stopped || performance.now() >= validUntil) {
      void this.#store.release(this.#catalogue, lease.ref, this.node, lease.generation).catch(() => {})
      return
    }
    this.#held.set(lease.ref, { generation: lease.generation, validUntil })
    this.#events.taken(lease.ref, lease.generation)
  }

  #renew(): void {
    if (this.#stopped || this.#renewing || this.#held.size === 0) return
    const refs = [...this.#held.keys()]
    const sentAt = performance.now()
    this.#renewing = this.#store.renew(this.#catalogue, refs, this.node, this.timing.leaseMs)
      .then(
        (renewed) => {
          const validUntil = sentAt + this.timing.leaseMs - this.#margin
          const late = performance.now() >= validUntil
          const answered = new Map(renewed.map((r) => [r.ref, r.generation]))
          for (const ref of refs) {
            const held = this.#held.get(ref)
            if (!held) continue
            if (answered.get(ref) === held.generation && !late) held.validUntil = validUntil
            else this.#lose(ref, held, late ? 'renewed too late' : 'taken by another node or lapsed')
          }
        },
        (err: unknown) => {
          // Held by the catalogue perhaps, but not known to be: this node stops sending.
          const why = `renewal failed: ${err instanceof Error ? err.message : String(err)}`
          for (const ref of refs) {
            const held = this.#held.get(ref)
            if (held) this.#lose(ref, held, why)
          }
        },
      )
      .finally(() => {
        this.#renewing = undefined
      })
  }

  #lose(ref: string, held: Held, why: string): void {
    this.#held.delete(ref)
    this.#events.lost(ref, held.generation, why)
  }
}
