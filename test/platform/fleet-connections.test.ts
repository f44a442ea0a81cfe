// Connections add up across the fleet (issue 24 item 1): a server's budget and
// a project role's CONNECTION LIMIT are the fleet's figures, divided among the
// live nodes; a node finding the role's limit reached waits rather than fails.
// Against a real PostgreSQL; what the server holds is read from pg_stat_activity.
import crypto from 'node:crypto'
import pg from 'pg'
import t from 'tap'
import { apiDatabaseOf, type ProjectRecord } from '../../lib/catalogue.ts'
import { ConnectionBudget, createConnectionBudget } from '../../lib/db/connection-budget.ts'
import { ProjectPools, type ProjectDatabase } from '../../lib/db/project-pools.ts'
import { concernConnections, PLAN_LIMITS } from '../../lib/plans.ts'
import { ControlPlane } from '../../control-plane/control-plane.ts'
import { adminQuery, serverUrl } from '../helpers/db.ts'
import { catalogueDatabase, dropCatalogue, startTestPlatform } from '../helpers/platform.ts'

const catalogueUrl = await catalogueDatabase(t)
const controlPlane = await ControlPlane.open(catalogueUrl)
t.teardown(async () => {
  await controlPlane.close()
  await dropCatalogue(catalogueUrl)
})
const admin = await serverUrl()
const project: ProjectRecord = await controlPlane.create({ name: 'fleet connections' })
const appName = () => `bp-test-${crypto.randomBytes(4).toString('hex')}`

async function connectionsOf(application: string): Promise<number> {
  const { rows } = await adminQuery<{ n: number }>(admin, `select count(*)::int as n from pg_stat_activity where application_name = $1`, [application])
  return rows[0]!.n
}

t.test('each node takes its share of a server budget: budget / live nodes, at least one', async (t) => {
  const budget = new ConnectionBudget(createConnectionBudget())
  const server = budget.server('example:5432')
  t.equal(budget.nodes, 1, 'alone until told otherwise')
  budget.nodes = 3
  t.equal(server.shareOf(10), 3)
  let taken = 0
  while (server.tryAcquire(10)) taken++
  t.equal(taken, 3, 'three of a budget of ten on a fleet of three')
  budget.nodes = 1
  t.ok(server.tryAcquire(10), 'a node leaving gives the others its share at once')
  budget.nodes = 100
  t.equal(server.shareOf(10), 1, 'never less than one connection')
  t.throws(() => {
    budget.nodes = 0
  }, RangeError)
})

t.test("a plan's role limit is split between its concerns, less the push sender's", async (t) => {
  t.equal(concernConnections('free', { auth: true, push: true }), Math.floor((PLAN_LIMITS.free.apiConnections - PLAN_LIMITS.free.pushActorConnections) / 3))
  t.equal(concernConnections('free', { auth: false, push: false }), PLAN_LIMITS.free.apiConnections, 'GraphQL alone has the whole role')
  for (const plan of ['free', 'plus', 'pro', 'business'] as const) {
    const limits = PLAN_LIMITS[plan]
    // One node: what the plan lets run at once, as before the fleet divided anything.
    t.ok(concernConnections(plan, { auth: true, push: true }) >= limits.concurrentRequests, `${plan}: one node keeps its concurrency`)
    // Three nodes, every concern at its share, plus the sender: within the role's limit.
    const perNode = Math.max(1, Math.floor(concernConnections(plan, { auth: true, push: true }) / 3))
    t.ok(3 * 3 * perNode + limits.pushActorConnections <= limits.apiConnections, `${plan}: three nodes stay within ${limits.apiConnections}`)
  }
})

t.test("a project's pool holds its node's share of the concern's connections, and grows when nodes leave", async (t) => {
  const application = appName()
  const buffer = createConnectionBudget()
  const budget = new ConnectionBudget(buffer)
  budget.nodes = 3
  const pools = new ProjectPools({ maxConnections: 100, poolSize: 8, idleMillis: 60000, applicationName: application, budget: buffer, acquireTimeoutMillis: 3000 })
  t.teardown(() => pools.closeAll())
  const db: ProjectDatabase = { ...apiDatabaseOf(project), poolMax: 8, fleetConnections: 6 }
  const pool = pools.get(db)
  const held = await Promise.all([pool.connect(), pool.connect()])
  const third = pool.connect()
  let thirdDone = false
  void third.then(() => (thirdDone = true))
  await new Promise((resolve) => setTimeout(resolve, 200))
  t.equal(await connectionsOf(application), 2, 'two of six on a fleet of three')
  t.notOk(thirdDone, 'the third waits for one of them')
  held[0]!.release()
  const client = await third
  t.equal(await connectionsOf(application), 2, 'and is handed the released one')
  budget.nodes = 1
  const more = await Promise.all([pools.get(db).connect(), pools.get(db).connect()])
  t.equal(await connectionsOf(application), 4, 'alone, the node may hold more')
  for (const c of [held[1]!, client, ...more]) c.release()
})

t.test("a node that finds the role's limit reached waits for a connection instead of failing", async (t) => {
  const application = appName()
  const role = project.dbApiRole
  await adminQuery(admin, `alter role ${pg.escapeIdentifier(role)} connection limit 1`)
  t.teardown(() => adminQuery(admin, `alter role ${pg.escapeIdentifier(role)} connection limit ${PLAN_LIMITS.free.apiConnections}`))
  // Another node's connection, holding the role's only slot.
  const other = new pg.Client({ host: project.dbHost, port: project.dbPort, database: project.dbName, user: role, password: project.dbApiPassword })
  await other.connect()
  const pools = new ProjectPools({ maxConnections: 100, poolSize: 4, idleMillis: 60000, applicationName: application, acquireTimeoutMillis: 4000 })
  t.teardown(() => pools.closeAll())
  const started = Date.now()
  const waiting = pools.get(apiDatabaseOf(project)).connect()
  setTimeout(() => void other.end(), 500)
  const client = await waiting
  const { rows } = await client.query<{ one: number }>('select 1 as one')
  t.same(rows, [{ one: 1 }], 'served once the other node let its connection go')
  t.ok(Date.now() - started >= 400, 'after waiting for it')
  client.release()
  await pools.closeAll()

  const holder = new pg.Client({ host: project.dbHost, port: project.dbPort, database: project.dbName, user: role, password: project.dbApiPassword })
  await holder.connect()
  t.teardown(() => holder.end())
  const quick = new ProjectPools({ maxConnections: 100, poolSize: 4, idleMillis: 60000, applicationName: application, acquireTimeoutMillis: 300 })
  t.teardown(() => quick.closeAll())
  const error = await quick.get(apiDatabaseOf(project)).connect().then(
    () => undefined,
    (e: unknown) => e as { code?: string },
  )
  t.equal(error?.code, '53300', 'past the acquire timeout, the refusal stands (the data plane answers 503)')
})

t.test('every node counts the live nodes of its catalogue and divides by them', async (t) => {
  const platform = await startTestPlatform(t)
  const other = await platform.startAnotherNode()
  const both = async () => {
    const deadline = Date.now() + 10000
    while (Date.now() < deadline) {
      if (platform.platform.fleetNodes() === 2 && other.fleetNodes() === 2) return true
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    return false
  }
  t.ok(await both(), 'both nodes see a fleet of two')
})
