// Fair shares of one concern's worker threads between projects (issue 11).
//
// A concern runs on a few single-thread shards, each with a fixed number of
// task slots. A project sticks to one shard while it is active, so its
// database connections live in one thread instead of one pool per thread
// (the actor way). Within a shard, a project runs at most its plan's
// `concurrentRequests` at once; more wait in its own bounded queue, and when
// a slot frees the next project in round-robin order gets it. A busy or slow
// project therefore waits behind itself, never in front of its neighbours,
// and a project whose queue is full is refused at once (503 with Retry-After)
// instead of holding memory and sockets.
import { performance } from 'node:perf_hooks'
import { platformErrors } from '../lib/errors.ts'
import type { PlanLimits } from '../lib/plans.ts'

export type Limits = Pick<PlanLimits, 'concurrentRequests' | 'queuedRequests'>

/** Seconds a refused client is told to wait: about one slow request's worth. */
export const RETRY_AFTER_SECONDS = 1

interface Waiter {
  start: () => void
  /** performance.now() when it joined the queue. */
  since: number
}

/** Told of each refusal and each wait (the metrics); called on the main thread, in the request's path. */
export interface FairShareObserver {
  refused(ref: string): void
  waited(ref: string, millis: number): void
}

interface ProjectShare {
  readonly ref: string
  readonly shard: Shard
  limits: Limits
  inFlight: number
  readonly waiting: Waiter[]
  /** Whether it sits in its shard's ready ring (it has waiters and may be under its limit). */
  ready: boolean
  lastUsed: number
}

interface Shard {
  readonly index: number
  free: number
  /** Projects with waiting requests, served in turn. */
  readonly ring: ProjectShare[]
  /** Projects assigned here (active or recently active). */
  assigned: number
}

export interface FairShareOptions {
  shards: number
  slotsPerShard: number
  /**
   * How long an idle project keeps its shard. Its pooled connections close
   * after the idle connection time, so keeping the shard that long keeps
   * them reused; after it, the project may be placed anew.
   */
  stickyMillis: number
  now?: () => number
  observer?: FairShareObserver
}

export interface FairShareStats {
  /** Busy task slots per shard. */
  busy: number[]
  /** Projects placed on each shard. */
  projects: number[]
  waiting: number
}

export class FairShare {
  readonly #shards: Shard[]
  readonly #slots: number
  readonly #projects = new Map<string, ProjectShare>()
  readonly #stickyMillis: number
  readonly #now: () => number
  readonly #observer: FairShareObserver | undefined
  #sweep: NodeJS.Timeout | undefined

  constructor(options: FairShareOptions) {
    if (options.shards < 1 || options.slotsPerShard < 1) throw new RangeError('a fair share needs at least one shard and one slot')
    this.#slots = options.slotsPerShard
    this.#shards = Array.from({ length: options.shards }, (_, index) => ({ index, free: options.slotsPerShard, ring: [], assigned: 0 }))
    this.#stickyMillis = options.stickyMillis
    this.#now = options.now ?? Date.now
    this.#observer = options.observer
    this.#sweep = setInterval(() => this.sweep(), Math.max(1000, options.stickyMillis))
    this.#sweep.unref()
  }

  /**
   * Runs `work` on the project's shard once the project may, and returns its
   * result; throws `service_unavailable` at once when the project's queue is full.
   */
  run<T>(ref: string, limits: Limits, work: (shard: number) => Promise<T>): Promise<T> {
    const share = this.#shareOf(ref, limits)
    share.lastUsed = this.#now()
    if (share.inFlight < share.limits.concurrentRequests && share.shard.free > 0 && share.waiting.length === 0) {
      return this.#start(share, work)
    }
    if (share.waiting.length >= share.limits.queuedRequests) {
      this.#observer?.refused(ref)
      return Promise.reject(platformErrors.overloaded(RETRY_AFTER_SECONDS))
    }
    return new Promise<T>((resolve, reject) => {
      const waiter: Waiter = {
        since: this.#observer ? performance.now() : 0,
        start: () => {
          this.#observer?.waited(ref, performance.now() - waiter.since)
          this.#start(share, work).then(resolve, reject)
        },
      }
      share.waiting.push(waiter)
      this.#markReady(share)
      this.#schedule(share.shard)
    })
  }

  /** The shard a project's requests go to now (placing it if it has none). */
  shardOf(ref: string, limits: Limits): number {
    return this.#shareOf(ref, limits).shard.index
  }

  stats(): FairShareStats {
    let waiting = 0
    for (const share of this.#projects.values()) waiting += share.waiting.length
    return { busy: this.#shards.map((s) => this.#slots - s.free), projects: this.#shards.map((s) => s.assigned), waiting }
  }

  /** Forgets projects idle for longer than the sticky time, so they can be placed on the least busy shard again. */
  sweep(): void {
    const cutoff = this.#now() - this.#stickyMillis
    for (const [ref, share] of this.#projects) {
      if (share.inFlight === 0 && share.waiting.length === 0 && share.lastUsed < cutoff) {
        this.#projects.delete(ref)
        share.shard.assigned -= 1
      }
    }
  }

  close(): void {
    clearInterval(this.#sweep)
    this.#sweep = undefined
  }

  #shareOf(ref: string, limits: Limits): ProjectShare {
    let share = this.#projects.get(ref)
    if (share === undefined) {
      share = { ref, shard: this.#leastBusy(), limits, inFlight: 0, waiting: [], ready: false, lastUsed: 0 }
      share.shard.assigned += 1
      this.#projects.set(ref, share)
    } else if (share.limits !== limits) {
      // A plan change applies on the next request; requests already running finish.
      share.limits = limits
    }
    return share
  }

  /** The shard with the most free slots; among equals, the one with the fewest projects. */
  #leastBusy(): Shard {
    let best = this.#shards[0]!
    for (const shard of this.#shards) {
      if (shard.free > best.free || (shard.free === best.free && shard.assigned < best.assigned)) best = shard
    }
    return best
  }

  #start<T>(share: ProjectShare, work: (shard: number) => Promise<T>): Promise<T> {
    share.inFlight += 1
    share.shard.free -= 1
    let running: Promise<T>
    try {
      running = work(share.shard.index)
    } catch (error) {
      running = Promise.reject(error)
    }
    return running.finally(() => this.#finish(share))
  }

  #finish(share: ProjectShare): void {
    share.inFlight -= 1
    share.shard.free += 1
    share.lastUsed = this.#now()
    if (share.waiting.length > 0) this.#markReady(share)
    this.#schedule(share.shard)
  }

  #markReady(share: ProjectShare): void {
    if (share.ready) return
    share.ready = true
    share.shard.ring.push(share)
  }

  /** Hands free slots to waiting projects in turn; a project at its limit leaves the ring until one of its requests ends. */
  #schedule(shard: Shard): void {
    const ring = shard.ring
    while (shard.free > 0 && ring.length > 0) {
      const share = ring.shift()!
      if (share.inFlight >= share.limits.concurrentRequests || share.waiting.length === 0) {
        share.ready = false
        continue
      }
      const next = share.waiting.shift()!
      if (share.waiting.length > 0) ring.push(share)
      else share.ready = false
      next.start()
    }
  }
}
