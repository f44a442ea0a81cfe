// bench:realtime's inserter for the Postgres Changes case (a process of its
// own, started by realtime-changes.ts): plain `pg` inserts, one row a
// statement (its own transaction), paced by the clock at a fixed rate into
// the table a phase names, each row carrying its sequence number, its team
// and the time it was sent (`sent_at`, microseconds on the machine's
// monotonic clock, which the subscribers read alike: realtime-wire.ts). Row
// `seq` belongs to team `seq % teams` and is posted by one of its members in
// turn.
import pg from 'pg'
import { childArg, fromParent, tellParent } from './realtime-process.ts'
import { nowMicros } from './realtime-wire.ts'

export interface InserterArg {
  /** The project's database, as its owner. */
  url: string
  teams: number
  /** The users' ids, user i a member of team i % teams. */
  users: string[]
  bodyBytes: number
}

export interface InsertPhase {
  type: 'phase'
  table: string
  rate: number
  seconds: number
  /** The first row's sequence number (the parent numbers the rows, so the subscribers know what to count). */
  fromSeq: number
}

export interface InsertResult {
  type: 'phase'
  /** The last row's sequence number. */
  lastSeq: number
  sent: number
  failed: number
  /** From the first send to the last insert's answer. */
  seconds: number
  /** The insert statements' round trips (send to answer), milliseconds. */
  p50Ms: number
  p99Ms: number
}

/** Statements in flight at most: enough for the rate whatever PostgreSQL's jitter (a queued one waits for a free connection, its sent_at already set). */
const CONNECTIONS = 4

const { url, teams, users, bodyBytes } = childArg<InserterArg>()
const pool = new pg.Pool({ connectionString: url, max: CONNECTIONS, application_name: 'bench-realtime-inserter' })
pool.on('error', () => {})
// The connections opened before the first phase: none of it is timed.
await Promise.all(Array.from({ length: CONNECTIONS }, () => pool.connect())).then((clients) => clients.forEach((client) => client.release()))
const members = users.length / teams
const body = 'x'.repeat(bodyBytes)
tellParent({ type: 'ready' })

function insert(table: string, seq: number, trips: number[]): Promise<boolean> {
  const team = seq % teams
  const owner = users[(Math.floor(seq / teams) % members) * teams + team]!
  const sentAt = nowMicros()
  return pool
    .query({
      name: `bench_insert_${table}`,
      text: `insert into public.${table} (team, owner, body, sent_at, seq) values ($1, $2, $3, $4, $5)`,
      values: [team, owner, body, Math.round(sentAt), seq],
    })
    .then(
      () => (trips.push((nowMicros() - sentAt) / 1000), true),
      () => false,
    )
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? NaN

fromParent<InsertPhase>('phase', async ({ table, rate, seconds, fromSeq }) => {
  const trips: number[] = []
  const pending: Promise<boolean>[] = []
  const start = performance.now()
  const end = start + seconds * 1000
  let next = fromSeq
  await new Promise<void>((resolve) => {
    // Catching up on every tick what the clock says is due keeps the rate whatever the timer's jitter.
    const timer = setInterval(() => {
      const now = performance.now()
      const due = fromSeq + Math.floor(((Math.min(now, end) - start) / 1000) * rate)
      while (next < due) pending.push(insert(table, next++, trips))
      if (now >= end) {
        clearInterval(timer)
        resolve()
      }
    }, 1)
  })
  const done = await Promise.all(pending)
  trips.sort((a, b) => a - b)
  const result: InsertResult = {
    type: 'phase',
    lastSeq: next - 1,
    sent: done.length,
    failed: done.filter((ok) => !ok).length,
    seconds: (performance.now() - start) / 1000,
    p50Ms: quantile(trips, 0.5),
    p99Ms: quantile(trips, 0.99),
  }
  tellParent(result)
})

fromParent('stop', async () => {
  await pool.end().catch(() => {})
  process.exit(0)
})
