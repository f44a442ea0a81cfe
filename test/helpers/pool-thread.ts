// A worker thread holding its own ProjectPools over a connection budget shared
// with the test's other threads, as a data-plane worker does. The test drives
// it with messages (poolThread() below) and reads what it answers.
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads'
import type pg from 'pg'
import { ProjectPools, type ProjectDatabase, type ProjectPoolOptions, type PoolStats } from '../../lib/db/project-pools.ts'

type Command =
  | { op: 'query'; db: ProjectDatabase; sql: string; times: number }
  | { op: 'hold'; db: ProjectDatabase; count: number }
  | { op: 'queryHeld'; sql: string }
  | { op: 'releaseHeld' }
  | { op: 'stats' }
  | { op: 'close' }

/** A failure as it crosses the thread: the fields a test asserts on. */
export interface Failure {
  code: string | undefined
  status: number | undefined
  message: string
}

export interface QueryOutcome {
  rows: unknown[][]
  failures: Failure[]
}

function failureOf(error: unknown): Failure {
  const e = error as { code?: string; status?: number; message?: string }
  return { code: e.code, status: e.status, message: String(e.message ?? error) }
}

if (!isMainThread && (workerData as { poolThread?: boolean } | null)?.poolThread) {
  const pools = new ProjectPools((workerData as { options: ProjectPoolOptions }).options)
  const held: pg.PoolClient[] = []
  const run = async (command: Command): Promise<unknown> => {
    switch (command.op) {
      case 'query': {
        const pool = pools.get(command.db)
        const settled = await Promise.allSettled(Array.from({ length: command.times }, () => pool.query(command.sql)))
        return {
          rows: settled.filter((s) => s.status === 'fulfilled').map((s) => (s as PromiseFulfilledResult<pg.QueryResult>).value.rows),
          failures: settled.filter((s) => s.status === 'rejected').map((s) => failureOf((s as PromiseRejectedResult).reason)),
        } satisfies QueryOutcome
      }
      case 'hold': {
        const pool = pools.get(command.db)
        for (let i = 0; i < command.count; i++) held.push(await pool.connect())
        return held.length
      }
      case 'queryHeld':
        return Promise.all(held.map(async (client) => (await client.query(command.sql)).rows))
      case 'releaseHeld':
        for (const client of held.splice(0)) client.release()
        return true
      case 'stats':
        return pools.stats()
      case 'close':
        await pools.closeAll()
        return true
    }
  }
  parentPort!.on('message', ({ id, command }: { id: number; command: Command }) => {
    run(command).then(
      (result) => parentPort!.postMessage({ id, result }),
      (error: unknown) => parentPort!.postMessage({ id, error: failureOf(error) }),
    )
  })
}

export interface PoolThread {
  query(db: ProjectDatabase, sql: string, times?: number): Promise<QueryOutcome>
  hold(db: ProjectDatabase, count: number): Promise<number>
  queryHeld(sql: string): Promise<unknown[][]>
  releaseHeld(): Promise<void>
  stats(): Promise<PoolStats>
  stop(): Promise<void>
}

/** Starts a thread with pools of these options (pass the shared `budget`). */
export function poolThread(options: ProjectPoolOptions): PoolThread {
  // tsx's --import hook does not reach a worker's entry module: register it in the thread first (as workers/push/actor-thread.ts does).
  const bootstrap = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((api) => { api.register(); return import(${JSON.stringify(import.meta.url)}) })`
  const worker = new Worker(bootstrap, { eval: true, workerData: { poolThread: true, options } })
  const pending = new Map<number, { resolve(value: unknown): void; reject(error: unknown): void }>()
  let next = 0
  worker.on('message', ({ id, result, error }: { id: number; result?: unknown; error?: Failure }) => {
    const call = pending.get(id)!
    pending.delete(id)
    if (error) call.reject(Object.assign(new Error(error.message), error))
    else call.resolve(result)
  })
  const send = <T>(command: Command): Promise<T> =>
    new Promise((resolve, reject) => {
      const id = next++
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject })
      worker.postMessage({ id, command })
    })
  return {
    query: (db, sql, times = 1) => send({ op: 'query', db, sql, times }),
    hold: (db, count) => send({ op: 'hold', db, count }),
    queryHeld: (sql) => send({ op: 'queryHeld', sql }),
    releaseHeld: () => send<boolean>({ op: 'releaseHeld' }).then(() => undefined),
    stats: () => send({ op: 'stats' }),
    async stop() {
      await send({ op: 'close' })
      await worker.terminate()
    },
  }
}
