// Project connection pools and the per-server connection budget, against a
// real PostgreSQL: two worker threads share one budget as a data plane's
// threads do; what the server sees is read from pg_stat_activity.
import crypto from 'node:crypto'
import net from 'node:net'
import t, { type Test } from 'tap'
import { apiDatabaseOf, type ProjectRecord } from '../../lib/catalogue.ts'
import { ConnectionBudget, createConnectionBudget } from '../../lib/db/connection-budget.ts'
import { ProjectPools, type ProjectDatabase, type ProjectPoolOptions } from '../../lib/db/project-pools.ts'
import { withRequestTransaction } from '../../lib/db/request-transaction.ts'
import { DEFAULT_ROLE_TIMEOUTS } from '../../lib/plans.ts'
import { ControlPlane } from '../../control-plane/control-plane.ts'
import { createProject } from '../../control-plane/projects.ts'
import { adminQuery, serverUrl } from '../helpers/db.ts'
import { catalogueDatabase, dropCatalogue } from '../helpers/platform.ts'
import { poolThread, type PoolThread } from '../helpers/pool-thread.ts'

const catalogueUrl = await catalogueDatabase(t)
const controlPlane = await ControlPlane.open(catalogueUrl)
t.teardown(async () => {
  await controlPlane.close()
  await dropCatalogue(catalogueUrl)
})
const admin = await serverUrl()
const projects: ProjectRecord[] = []
for (let n = 0; n < 3; n++) projects.push(await createProject(controlPlane, { name: `budget ${n}` }))
const [p1, p2, p3] = projects.map((p) => apiDatabaseOf(p)) as [ProjectDatabase, ProjectDatabase, ProjectDatabase]

/** Each test names its connections, so pg_stat_activity shows only its own. */
const appName = () => `bp-test-${crypto.randomBytes(4).toString('hex')}`

async function connectionsOf(application: string, database?: string): Promise<number> {
  const { rows } = await adminQuery<{ n: number }>(
    admin,
    `select count(*)::int as n from pg_stat_activity where application_name = $1 and ($2::text is null or datname = $2)`,
    [application, database ?? null],
  )
  return rows[0]!.n
}

/** Polls until `check` holds (a connection closes a moment after the pool lets it go), for at most 5 s. */
async function eventually(check: () => Promise<boolean>): Promise<boolean> {
  const deadline = Date.now() + 5000
  while (Date.now() < deadline) {
    if (await check()) return true
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  return check()
}

function threads(t: Test, count: number, options: Omit<ProjectPoolOptions, 'budget'>): PoolThread[] {
  const budget = createConnectionBudget()
  const started = Array.from({ length: count }, () => poolThread({ ...options, budget }))
  t.teardown(() => Promise.all(started.map((thread) => thread.stop())))
  return started
}

t.test('two threads together never hold more connections to the server than its budget', async (t) => {
  const application = appName()
  const budget = createConnectionBudget()
  const options = { maxConnections: 3, poolSize: 4, idleMillis: 60000, applicationName: application, budget }
  const [a, b] = [poolThread(options), poolThread(options)]
  t.teardown(() => Promise.all([a.stop(), b.stop()]))
  const view = new ConnectionBudget(budget)
  let most = 0
  let mostCounted = 0
  let sampling = true
  const sampler = (async () => {
    while (sampling) {
      most = Math.max(most, await connectionsOf(application))
      mostCounted = Math.max(mostCounted, ...view.snapshot().map((s) => s.open))
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
  })()
  const sql = 'select pg_sleep(0.03)::text as slept'
  const outcomes = await Promise.all([a.query(p1, sql, 8), a.query(p2, sql, 8), b.query(p2, sql, 8), b.query(p3, sql, 8)])
  sampling = false
  await sampler
  t.same(outcomes.map((o) => o.failures), [[], [], [], []], 'every query answered')
  t.same(outcomes.map((o) => o.rows.length), [8, 8, 8, 8])
  t.ok(most <= 3, `at most 3 connections in pg_stat_activity (saw ${most})`)
  t.ok(most >= 2, `the budget was used (saw ${most})`)
  t.ok(mostCounted <= 3, `the shared count never passed 3 (saw ${mostCounted})`)
})

t.test('idle connections of another thread make room before anyone waits for long', async (t) => {
  const application = appName()
  const [a, b] = threads(t, 2, { maxConnections: 2, poolSize: 2, idleMillis: 60000, applicationName: application })
  t.same((await a.query(p1, 'select pg_sleep(0.05)', 2)).failures, [])
  t.equal(await connectionsOf(application), 2, 'thread A keeps two idle connections: the whole budget')
  const started = Date.now()
  const outcome = await b.query(p2, 'select 1 as one')
  const waited = Date.now() - started
  t.same(outcome, { rows: [[{ one: 1 }]], failures: [] }, 'thread B got a connection')
  // A thread checks for waiters on a 50 ms timer; 2.5 s leaves room for a loaded machine
  // and is half the 5 s after which the wait would have failed.
  t.ok(waited < 2500, `thread B waited ${waited} ms, not the full acquire timeout`)
  t.same((await a.stats()).projects[p1.ref], { open: 1, idle: 1, busy: 0, waiting: 0 }, 'thread A closed one idle connection for it')
  t.ok(await eventually(async () => (await connectionsOf(application)) === 2), 'still two connections on the server')
})

t.test('busy connections are never taken; the wait ends in database_busy', async (t) => {
  const application = appName()
  const [a, b] = threads(t, 2, { maxConnections: 2, poolSize: 2, idleMillis: 60000, applicationName: application, acquireTimeoutMillis: 300 })
  t.equal(await a.hold(p1, 2), 2, 'thread A holds two checked-out connections')
  const outcome = await b.query(p2, 'select 1 as one')
  t.same(outcome, {
    rows: [],
    failures: [{ code: 'database_busy', status: 503, message: 'No database connection became free within 300 ms' }],
  })
  t.same(await a.queryHeld('select 2 as two'), [[{ two: 2 }], [{ two: 2 }]], 'thread A\'s connections still work')
  await a.releaseHeld()
  t.same(await b.query(p2, 'select 1 as one'), { rows: [[{ one: 1 }]], failures: [] }, 'released and idle, one is closed for thread B')
})

t.test('a thread\'s own least recently used idle connection goes first', async (t) => {
  const pools = new ProjectPools({ maxConnections: 2, poolSize: 2, idleMillis: 60000, applicationName: appName() })
  t.teardown(() => pools.closeAll())
  await pools.get(p1).query('select 1')
  await pools.get(p2).query('select 1')
  await pools.get(p3).query('select 1')
  t.same(
    Object.fromEntries(Object.entries(pools.stats().projects).map(([ref, counts]) => [ref, counts.open])),
    { [p2.ref]: 1, [p3.ref]: 1 },
    'p1\'s connection, idle the longest, made room for p3 (its emptied pool is dropped)',
  )
  t.equal(pools.size, 2)
})

t.test('a pool grows with demand up to poolMax and shrinks to nothing when idle', async (t) => {
  const application = appName()
  const pools = new ProjectPools({ maxConnections: 50, poolSize: 2, idleMillis: 300, applicationName: application })
  t.teardown(() => pools.closeAll())
  const pool = pools.get({ ...p1, poolMax: 3 })
  t.same(pools.stats().projects, { [p1.ref]: { open: 0, idle: 0, busy: 0, waiting: 0 } }, 'nothing is opened before it is needed')
  await pool.query('select 1')
  t.equal(await connectionsOf(application, p1.database), 1, 'one request, one connection')
  const results = await Promise.all(Array.from({ length: 9 }, () => pool.query('select pg_sleep(0.05)')))
  t.equal(results.length, 9)
  t.equal(pool.counts.open, 3, 'nine at once grew the pool to its poolMax of 3, no further')
  t.ok(await eventually(async () => (await connectionsOf(application, p1.database)) === 0), 'after the idle time the project holds no connection')
  t.same(pools.stats(), { projects: {}, servers: {} })
  t.equal(pools.size, 0, 'the empty pool is dropped too')
  t.same((await pools.get(p1).query('select 1 as one')).rows, [{ one: 1 }], 'and made again on next use')
})

t.test('waiters for a full pool are served in order, and their wait is bounded', async (t) => {
  const pools = new ProjectPools({ maxConnections: 10, poolSize: 1, idleMillis: 60000, applicationName: appName(), acquireTimeoutMillis: 300 })
  t.teardown(() => pools.closeAll())
  const pool = pools.get(p1)
  const first = await pool.connect()
  const order: number[] = []
  const waiting = [1, 2, 3].map((n) => pool.connect().then((client) => (order.push(n), client.release())))
  first.release()
  await Promise.all(waiting)
  t.same(order, [1, 2, 3])
  const held = await pool.connect()
  await t.rejects(pool.connect(), { code: 'database_busy', status: 503, message: 'No database connection became free within 300 ms' })
  held.release()
})

t.test('a connection released with an error, or ended while idle, is never handed out again', async (t) => {
  const application = appName()
  const pools = new ProjectPools({ maxConnections: 10, poolSize: 2, idleMillis: 60000, applicationName: application })
  t.teardown(() => pools.closeAll())
  const pool = pools.get(p1)
  const client = await pool.connect()
  client.release(new Error('the caller saw it break'))
  t.equal(pool.counts.open, 0, 'discarded at once')
  t.ok(await eventually(async () => (await connectionsOf(application)) === 0), 'and closed on the server')
  await pool.query('select 1')
  await adminQuery(admin, `select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1`, [application])
  t.ok(await eventually(async () => pool.counts.open === 0), 'the idle connection the server ended is dropped')
  t.same((await pool.query('select 1 as one')).rows, [{ one: 1 }])
  const again = await pool.connect()
  again.release()
  t.throws(() => again.release(), { message: 'Release called on client which has already been released to the pool.' })
})

/**
 * A TCP proxy in front of PostgreSQL that can go silent the way a NAT or a
 * firewall forgets an idle flow: nothing reaches the client until it writes,
 * and then its connection is reset.
 */
async function silentProxy(t: Test): Promise<{ port: number; accepted(): number; forget(): void }> {
  const target = new URL(admin)
  const sockets = new Set<net.Socket>()
  let accepted = 0
  const server = net.createServer((client) => {
    accepted++
    const upstream = net.connect(Number(target.port || 5432), target.hostname)
    const pair = { client, upstream, forgotten: false }
    const forward = (from: net.Socket, to: net.Socket) =>
      from.on('data', (chunk: Buffer) => {
        if (pair.forgotten) {
          if (from === client) client.resetAndDestroy()
          return
        }
        to.write(chunk)
      })
    forward(client, upstream)
    forward(upstream, client)
    client.on('error', () => upstream.destroy())
    upstream.on('error', () => client.destroy())
    client.on('close', () => upstream.destroy())
    upstream.on('close', () => {
      if (!pair.forgotten) client.destroy()
    })
    sockets.add(client)
    ;(client as net.Socket & { forget?: () => void }).forget = () => {
      pair.forgotten = true
      upstream.destroy()
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => {
    for (const socket of sockets) socket.destroy()
    server.close()
  })
  return {
    port: (server.address() as net.AddressInfo).port,
    accepted: () => accepted,
    forget: () => {
      for (const socket of sockets) (socket as net.Socket & { forget?: () => void }).forget?.()
    },
  }
}

t.test('a stale idle connection is replaced once, for single statements and transactions alike', async (t) => {
  const proxy = await silentProxy(t)
  const pools = new ProjectPools({ maxConnections: 10, poolSize: 2, idleMillis: 60000, applicationName: appName() })
  t.teardown(() => pools.closeAll())
  const pool = pools.get({ ...p1, host: '127.0.0.1', port: proxy.port })
  t.same((await pool.query('select 1 as one')).rows, [{ one: 1 }])
  t.equal(proxy.accepted(), 1)
  proxy.forget()
  t.same((await pool.query('select 2 as two')).rows, [{ two: 2 }], 'answered, not an error')
  t.equal(proxy.accepted(), 2, 'on a new connection')
  proxy.forget()
  const identity = { role: 'anon' as const, claims: { role: 'anon' } }
  const role = await withRequestTransaction(pool, identity, DEFAULT_ROLE_TIMEOUTS, async (client) => (await client.query('select current_user as role')).rows[0])
  t.same(role, { role: 'anon' }, 'the transaction ran on a new connection')
  t.equal(proxy.accepted(), 3)
  t.equal(pool.counts.open, 1, 'the dead connections are gone from the pool')
})

t.test('a fresh connection that fails is not retried: the database is unreachable', async (t) => {
  const closed = net.createServer()
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
  const port = (closed.address() as net.AddressInfo).port
  await new Promise((resolve) => closed.close(resolve))
  const pools = new ProjectPools({ maxConnections: 10, poolSize: 2, idleMillis: 60000, applicationName: appName() })
  t.teardown(() => pools.closeAll())
  const pool = pools.get({ ...p1, host: '127.0.0.1', port })
  await t.rejects(pool.query('select 1'), { code: 'ECONNREFUSED' })
  t.equal(pool.counts.open, 0)
})
