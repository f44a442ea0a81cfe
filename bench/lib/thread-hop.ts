// The hop to a concern's thread (issue 41 item 3): the round trip of an empty
// task through a Piscina pool made as data-plane/dispatcher.ts makes its pools
// (one thread, several tasks at once, atomics off, no timing records), against
// the cheapest statement a request carries, `select 1` on one pg connection.
// Each is timed one at a time (its latency) and 8 at once (its rate).
import { performance } from 'node:perf_hooks'
import pg from 'pg'
import { Piscina } from 'piscina'
import { median } from './stats.ts'

export interface HopFigures {
  /** Median microseconds of one round trip, one at a time. */
  taskMicros: number
  statementMicros: number
  /** Round trips a second, 8 at once. */
  tasksPerSecond: number
  statementsPerSecond: number
}

async function timed(round: () => Promise<unknown>, count: number): Promise<number> {
  const times: number[] = []
  for (let i = 0; i < count; i++) {
    const started = performance.now()
    await round()
    times.push((performance.now() - started) * 1000)
  }
  return median(times)
}

async function rate(round: () => Promise<unknown>, seconds: number, atOnce: number): Promise<number> {
  const until = performance.now() + seconds * 1000
  let done = 0
  await Promise.all(
    Array.from({ length: atOnce }, async () => {
      while (performance.now() < until) {
        await round()
        done++
      }
    }),
  )
  return done / seconds
}

export async function measureHop(databaseUrl: string, seconds: number): Promise<HopFigures> {
  const pool = new Piscina({
    filename: new URL('./empty-task.mjs', import.meta.url).href,
    minThreads: 1,
    maxThreads: 1,
    idleTimeout: Infinity,
    concurrentTasksPerWorker: 8,
    atomics: 'disabled',
    recordTiming: false,
  })
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  const pgPool = new pg.Pool({ connectionString: databaseUrl, max: 8 })
  try {
    const task = () => pool.run(null)
    const statement = () => client.query('select 1')
    // Warm both (the thread's start, the JIT, the connection).
    await timed(task, 500)
    await timed(statement, 500)
    const taskMicros = await timed(task, 3000)
    const statementMicros = await timed(statement, 3000)
    const tasksPerSecond = await rate(task, seconds, 8)
    const statementsPerSecond = await rate(() => pgPool.query('select 1'), seconds, 8)
    return { taskMicros, statementMicros, tasksPerSecond, statementsPerSecond }
  } finally {
    await client.end()
    await pgPool.end()
    await pool.destroy()
  }
}
