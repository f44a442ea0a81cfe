// Hands requests to the concerns' worker threads. Each concern has its own
// threads, so a slow concern (bcrypt in auth, a big GraphQL plan) never stalls
// the others; each thread is a one-thread Piscina pool (a shard), and a
// project's requests for a concern go to one shard while the project is active
// (fair-share.ts), so its connections are opened once per concern, not once
// per thread. Workers answer with plain data.
import fs from 'node:fs'
import type { Worker } from 'node:worker_threads'
import { fileURLToPath } from 'node:url'
import { Piscina } from 'piscina'
import type { Plan } from '../lib/catalogue.ts'
import { ConfigError, platformErrors } from '../lib/errors.ts'
import { log } from '../lib/log.ts'
import { PLAN_LIMITS } from '../lib/plans.ts'
import { threadExecArgv, threadModule } from '../lib/thread-module.ts'
import { WORKER_SECTIONS, type Concern, type ServiceRequest, type ServiceResponse, type ThreadOptions, type WorkerOptions } from '../lib/service.ts'
import { serviceIndexOf, type ProjectFigures } from '../lib/metrics/project-figures.ts'
import type { WorkerSnapshot } from '../lib/metrics/worker-snapshot.ts'
import { FairShare, type FairShareObserver, type FairShareStats, type Limits } from './fair-share.ts'

const workerFile = (concern: Concern) => threadModule(`../workers/${concern}/worker`, import.meta.url)
// The scrape-time snapshot task (lib/metrics/worker-snapshot.ts), run on each thread beside its concern's module.
const snapshotFile = threadModule('../lib/metrics/worker-snapshot', import.meta.url).href

export interface DispatcherOptions {
  /** Log level of the worker threads (they read it from their environment). */
  logLevel: string
  threads: Record<Concern, number>
  tasksPerThread: number
  /** How long an idle project keeps its thread (the idle connection time: its connections live that long). */
  stickyMillis: number
  worker: WorkerOptions
  /** Told of fair-share refusals and queue waits, by project and concern. */
  figures?: ProjectFigures
}

/** One worker thread's snapshot, as the metrics read it. */
export interface ThreadReport {
  concern: Concern
  /** Index of the thread among its concern's threads. */
  thread: number
  snapshot: WorkerSnapshot
}

interface ConcernPool {
  shards: Piscina[]
  /** Threads of each shard that have started and not exited (Piscina's workerCreate and workerDestroy). */
  running: number[]
  share: FairShare
  limits: Record<Plan, Limits>
}

/**
 * Storage's tasks are transfers: a task holds its slot while the client sends
 * or takes the bytes, waiting on the network, not the thread. So its threads
 * interleave many more of them, and a project may run several times its plan's
 * requests at once there (within half a thread's slots, as for any concern):
 * a few slow uploads of one project must not fill the thread its neighbours share.
 */
export const STORAGE_TASKS_PER_THREAD = 128
const STORAGE_TRANSFERS_PER_REQUEST_SLOT = 4

/** What `concern`'s threads are given of `options`: the common options and the concern's own sections, no other's. */
export function threadOptionsOf(concern: Concern, options: WorkerOptions): ThreadOptions {
  const given: ThreadOptions = { ...options }
  for (const other of Object.keys(WORKER_SECTIONS) as Concern[]) {
    if (other === concern) continue
    for (const section of WORKER_SECTIONS[other]) if (!(WORKER_SECTIONS[concern] as readonly string[]).includes(section)) delete given[section]
  }
  return given
}

/**
 * A project may run at most half of a thread's task slots at once, whatever
 * its plan says, so a neighbour placed on the same thread always finds a slot.
 */
function limitsFor(tasksPerThread: number, factor = 1): Record<Plan, Limits> {
  const ceiling = Math.max(1, Math.floor(tasksPerThread / 2))
  const limits = {} as Record<Plan, Limits>
  for (const plan of Object.keys(PLAN_LIMITS) as Plan[]) {
    const { concurrentRequests, queuedRequests } = PLAN_LIMITS[plan]
    limits[plan] = Object.freeze({ concurrentRequests: Math.min(concurrentRequests * factor, ceiling), queuedRequests })
  }
  return limits
}

export class Dispatcher {
  readonly #pools = new Map<Concern, ConcernPool>()
  readonly #limits: Record<Plan, Limits>

  constructor(options: DispatcherOptions) {
    this.#limits = limitsFor(options.tasksPerThread)
    for (const concern of Object.keys(options.threads) as Concern[]) {
      const file = workerFile(concern)
      // A build that lacks a concern's worker is broken: refuse to start rather than answer 503 for ever.
      if (!fs.existsSync(fileURLToPath(file))) throw new ConfigError(`The ${concern} worker is missing (${fileURLToPath(file)}): run npm run build`)
      const threads = options.threads[concern]
      const storage = concern === 'storage'
      const tasks = storage ? Math.max(options.tasksPerThread, STORAGE_TASKS_PER_THREAD) : options.tasksPerThread
      const shards = Array.from(
        { length: threads },
        () =>
          new Piscina({
            filename: file.href,
            minThreads: 1,
            maxThreads: 1,
            idleTimeout: Infinity,
            // Tasks mostly wait on PostgreSQL; one thread interleaves several.
            // The fair share never gives a shard more than this many at once.
            concurrentTasksPerWorker: tasks,
            // Piscina's default ('sync') parks an idle thread in Atomics.wait,
            // which stops its timers: idle connections would never close and a
            // thread could not free connections another thread waits for.
            atomics: 'disabled',
            // Piscina's own run and wait histograms: nothing reads them, and they cost every task a record.
            recordTiming: false,
            execArgv: threadExecArgv,
            env: { ...process.env, BASEPLANE_LOG_LEVEL: options.logLevel },
            workerData: threadOptionsOf(concern, options.worker),
          }),
      )
      // A thread that fails outside a task (an error no task awaited) is replaced by Piscina; it must never end the process.
      for (const shard of shards) shard.on('error', (error: unknown) => log.error('a worker thread failed outside a task', error, { concern }))
      const running = shards.map(() => 0)
      shards.forEach((shard, index) => {
        // workerCreate comes once the thread has loaded its module; a thread that exits is destroyed.
        shard.on('workerCreate', () => (running[index] = running[index]! + 1))
        shard.on('workerDestroy', () => (running[index] = Math.max(0, running[index]! - 1)))
      })
      const figures = options.figures
      const service = serviceIndexOf(concern)
      const observer: FairShareObserver | undefined = figures && {
        refused: (ref) => figures.refused(ref, service),
        waited: (ref, millis) => figures.waited(ref, service, millis),
      }
      const share = new FairShare({ shards: threads, slotsPerShard: tasks, stickyMillis: options.stickyMillis, observer })
      this.#pools.set(concern, { shards, running, share, limits: storage ? limitsFor(tasks, STORAGE_TRANSFERS_PER_REQUEST_SLOT) : this.#limits })
    }
  }

  /** The per-plan limits actually applied (the plan's, capped at half a thread). */
  limitsOf(plan: Plan): Limits {
    return this.#limits[plan]
  }

  async run(request: ServiceRequest): Promise<ServiceResponse> {
    const pool = this.#pools.get(request.concern)
    if (pool === undefined) throw platformErrors.serviceNotOnNode(request.concern)
    return pool.share.run(request.project.ref, pool.limits[request.project.plan], async (shard) => {
      try {
        // A streamed body's ports move to the thread with the task (lib/port-stream.ts).
        const ports = request.bodyPort === undefined && request.replyPort === undefined ? undefined : [request.bodyPort, request.replyPort].filter((port) => port !== undefined)
        return (await pool.shards[shard]!.run(request, ports && { transferList: ports })) as ServiceResponse
      } catch (error) {
        log.error('worker task failed', error, { concern: request.concern, ref: request.project.ref })
        throw platformErrors.internal()
      }
    })
  }

  /**
   * Whether every concern's every shard has a running thread (/ready).
   * Piscina replaces a thread that exits; until the new one has loaded its
   * module, the shard has none. (One that fails while loading is not replaced
   * again: the shard stays down, and /ready with it.)
   */
  threadsUp(): boolean {
    if (this.#pools.size === 0) return false
    for (const pool of this.#pools.values()) if (pool.running.some((count) => count < 1)) return false
    return true
  }

  /** The threads of `concern`'s shards, as Piscina has them now (the tests end one to see /ready follow). */
  threadsOf(concern: Concern): readonly Worker[] {
    return this.#pools.get(concern)?.shards.flatMap((shard) => shard.threads) ?? []
  }

  /** Busy slots and placed projects per shard, per concern (tests and the benchmark). */
  stats(): Partial<Record<Concern, FairShareStats>> {
    const stats: Partial<Record<Concern, FairShareStats>> = {}
    for (const [concern, pool] of this.#pools) stats[concern] = pool.share.stats()
    return stats
  }

  /**
   * Every thread's snapshot (its connections, busy time, tallies), asked for
   * at scrape time. A thread that has not answered within `timeoutMillis` (all
   * its slots held by long statements) is left out of this scrape; its task
   * still runs later, harmlessly (aborting it would end the thread).
   */
  async snapshots(timeoutMillis: number): Promise<ThreadReport[]> {
    const asked: Array<Promise<ThreadReport | undefined>> = []
    for (const [concern, pool] of this.#pools) {
      pool.shards.forEach((shard, thread) => {
        let timer: NodeJS.Timeout | undefined
        const late = new Promise<undefined>((resolve) => {
          timer = setTimeout(() => resolve(undefined), timeoutMillis)
        })
        const answer = (shard.run(null, { filename: snapshotFile }) as Promise<WorkerSnapshot>).then(
          (snapshot) => ({ concern, thread, snapshot }),
          (error: unknown) => {
            log.error('worker snapshot failed', error, { concern, thread })
            return undefined
          },
        )
        asked.push(Promise.race([answer, late]).finally(() => clearTimeout(timer)))
      })
    }
    return (await Promise.all(asked)).filter((report): report is ThreadReport => report !== undefined)
  }

  async close(): Promise<void> {
    const pools = [...this.#pools.values()]
    this.#pools.clear()
    for (const pool of pools) pool.share.close()
    await Promise.all(pools.flatMap((pool) => pool.shards.map((shard) => shard.destroy())))
  }
}
