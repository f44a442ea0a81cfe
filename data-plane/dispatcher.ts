// Hands requests to the concerns' worker threads. Each concern has its own
// threads, so a slow concern (bcrypt in auth, a big GraphQL plan) never stalls
// the others; each thread is a one-thread Piscina pool (a shard), and a
// project's requests for a concern go to one shard while the project is active
// (fair-share.ts), so its connections are opened once per concern, not once
// per thread. Workers answer with plain data.
import fs from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Piscina } from 'piscina'
import type { Plan } from '../lib/catalogue.ts'
import { BaseplaneError } from '../lib/errors.ts'
import { log } from '../lib/log.ts'
import { PLAN_LIMITS } from '../lib/plans.ts'
import type { Concern, ServiceRequest, ServiceResponse, WorkerOptions } from '../lib/service.ts'
import { FairShare, type FairShareStats, type Limits } from './fair-share.ts'

// Compiled (dist/) the workers are .js files beside this one; from source
// (tests and benchmarks, under tsx) they are .ts files, which the threads load
// through tsx as the process does.
const fromSource = import.meta.url.endsWith('.ts')
const workerFile = (concern: Concern) => new URL(`../workers/${concern}/worker.${fromSource ? 'ts' : 'js'}`, import.meta.url)
const workerExecArgv = !fromSource || process.execArgv.some((arg) => arg.includes('tsx')) ? process.execArgv : [...process.execArgv, '--import', 'tsx']

export interface DispatcherOptions {
  /** Log level of the worker threads (they read it from their environment). */
  logLevel: string
  threads: Record<Concern, number>
  tasksPerThread: number
  /** How long an idle project keeps its thread (the idle connection time: its connections live that long). */
  stickyMillis: number
  worker: WorkerOptions
}

interface ConcernPool {
  shards: Piscina[]
  share: FairShare
}

/**
 * A project may run at most half of a thread's task slots at once, whatever
 * its plan says, so a neighbour placed on the same thread always finds a slot.
 */
function limitsFor(tasksPerThread: number): Record<Plan, Limits> {
  const ceiling = Math.max(1, Math.floor(tasksPerThread / 2))
  const limits = {} as Record<Plan, Limits>
  for (const plan of Object.keys(PLAN_LIMITS) as Plan[]) {
    const { concurrentRequests, queuedRequests } = PLAN_LIMITS[plan]
    limits[plan] = Object.freeze({ concurrentRequests: Math.min(concurrentRequests, ceiling), queuedRequests })
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
      if (!fs.existsSync(fileURLToPath(file))) continue
      const threads = options.threads[concern]
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
            concurrentTasksPerWorker: options.tasksPerThread,
            // Piscina's default ('sync') parks an idle thread in Atomics.wait,
            // which stops its timers: idle connections would never close and a
            // thread could not free connections another thread waits for.
            atomics: 'disabled',
            execArgv: workerExecArgv,
            env: { ...process.env, BASEPLANE_LOG_LEVEL: options.logLevel },
            workerData: options.worker,
          }),
      )
      const share = new FairShare({ shards: threads, slotsPerShard: options.tasksPerThread, stickyMillis: options.stickyMillis })
      this.#pools.set(concern, { shards, share })
    }
  }

  /** The per-plan limits actually applied (the plan's, capped at half a thread). */
  limitsOf(plan: Plan): Limits {
    return this.#limits[plan]
  }

  async run(request: ServiceRequest): Promise<ServiceResponse> {
    const pool = this.#pools.get(request.concern)
    if (pool === undefined) {
      throw new BaseplaneError('service_unavailable', `The ${request.concern} service is not available on this node`, 503)
    }
    return pool.share.run(request.project.ref, this.#limits[request.project.plan], async (shard) => {
      try {
        return (await pool.shards[shard]!.run(request)) as ServiceResponse
      } catch (error) {
        log.error('worker task failed', error, { concern: request.concern, ref: request.project.ref })
        throw BaseplaneError.fromData({ code: 'unexpected_failure', message: 'Unexpected failure, please check server logs for more information', status: 500 })
      }
    })
  }

  /** Busy slots and placed projects per shard, per concern (tests and the benchmark). */
  stats(): Partial<Record<Concern, FairShareStats>> {
    const stats: Partial<Record<Concern, FairShareStats>> = {}
    for (const [concern, pool] of this.#pools) stats[concern] = pool.share.stats()
    return stats
  }

  async close(): Promise<void> {
    const pools = [...this.#pools.values()]
    this.#pools.clear()
    for (const pool of pools) pool.share.close()
    await Promise.all(pools.flatMap((pool) => pool.shards.map((shard) => shard.destroy())))
  }
}
