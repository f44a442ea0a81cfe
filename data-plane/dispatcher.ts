// One Piscina pool per concern, so a slow concern (bcrypt in auth, a big
// GraphQL plan) never stalls the others. Workers answer with plain data.
import fs from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Piscina } from 'piscina'
import { BaseplaneError } from '../lib/errors.ts'
import { log } from '../lib/log.ts'
import type { Concern, ServiceRequest, ServiceResponse, WorkerOptions } from '../lib/service.ts'

const workerFile = (concern: Concern) => new URL(`../workers/${concern}/worker.ts`, import.meta.url)

// Workers load TypeScript through tsx, whether the process was started with
// `--import tsx` or registered it programmatically (bin/baseplane.mjs).
const workerExecArgv = process.execArgv.some((arg) => arg.includes('tsx')) ? process.execArgv : [...process.execArgv, '--import', 'tsx']

export interface DispatcherOptions {
  /** Log level of the worker threads (they read it from their environment). */
  logLevel: string
  threads: Record<Concern, number>
  tasksPerThread: number
  worker: WorkerOptions
}

export class Dispatcher {
  readonly #pools = new Map<Concern, Piscina>()

  constructor(options: DispatcherOptions) {
    const totalThreads = Object.values(options.threads).reduce((a, b) => a + b, 0)
    for (const concern of Object.keys(options.threads) as Concern[]) {
      const file = workerFile(concern)
      if (!fs.existsSync(fileURLToPath(file))) continue
      const threads = options.threads[concern]
      this.#pools.set(
        concern,
        new Piscina({
          filename: file.href,
          minThreads: threads,
          maxThreads: threads,
          idleTimeout: 60000,
          // Tasks mostly wait on PostgreSQL; one thread interleaves several.
          concurrentTasksPerWorker: options.tasksPerThread,
          execArgv: workerExecArgv,
          env: { ...process.env, BASEPLANE_LOG_LEVEL: options.logLevel },
          // The node's connection bound is shared out across every worker thread.
          workerData: {
            ...options.worker,
            maxProjectConnections: Math.max(1, Math.floor(options.worker.maxProjectConnections / totalThreads)),
          } satisfies WorkerOptions,
        }),
      )
    }
  }

  async run(request: ServiceRequest): Promise<ServiceResponse> {
    const pool = this.#pools.get(request.concern)
    if (pool === undefined) {
      throw new BaseplaneError('service_unavailable', `The ${request.concern} service is not available on this node`, 503)
    }
    try {
      return (await pool.run(request)) as ServiceResponse
    } catch (error) {
      log.error('worker task failed', error, { concern: request.concern, ref: request.project.ref })
      throw BaseplaneError.fromData({ code: 'unexpected_failure', message: 'Unexpected failure, please check server logs for more information', status: 500 })
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.#pools.values()].map((pool) => pool.destroy()))
    this.#pools.clear()
  }
}
