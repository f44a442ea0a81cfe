// Connections add up across the fleet (issue 24 item 1): a server's budget is
// the fleet's, divided among the live nodes; a plan's connection figure is one
// node's, and the role's CONNECTION LIMIT grows with the live nodes; a node
// finding the role's limit reached waits rather than fails.
// Against a real PostgreSQL; what the server holds is read from pg_stat_activity.
import crypto from 'node:crypto'
import pg from 'pg'
import t from 'tap'
import { apiDatabaseOf, type ProjectRecord } from '../../lib/catalogue.ts'
import { ConnectionBudget, createConnectionBudget } from '../../lib/db/connection-budget.ts'
import { ProjectPools } from '../../lib/db/project-pools.ts'
import { apiRoleLimit, PLAN_LIMITS } from '../../lib/plans.ts'
import { ControlPlane } from '../../control-plane/control-plane.ts'
import { createProject } from '../../control-plane/projects.ts'
import { adminQuery, serverUrl } from '../helpers/db.ts'
import { catalogueDatabase, dropCatalogue, startTestPlatform } from '../helpers/platform.ts'

const catalogueUrl = await catalogueDatabase(t)
const controlPlane = await ControlPlane.open(catalogueUrl)
t.teardown(async () => {
  await controlPlane.close()
  await dropCatalogue(catalogueUrl)
})
const admin = await serverUrl()
const project: ProjectRecord = await createProject(controlPlane, { name: 'fleet connections' })
const appName = () => `bp-test-${crypto.randomBytes(4).toString('hex')}`

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

t.test("a plan's figure is one node's: the role's limit grows with the live nodes, capped by the server's budget", async (t) => {
  for (const plan of ['free', 'plus', 'pro', 'business'] as const) {
    const limits = PLAN_LIMITS[plan]
    t.ok(3 * limits.concurrentRequests + limits.pushActorConnections <= limits.apiConnections, `${plan}: one node's pools and push sender fit in the plan's figure`)
  }
  t.equal(apiRoleLimit('free', 1, 2000), 20)
  t.equal(apiRoleLimit('free', 3, 2000), 60)
  t.equal(apiRoleLimit('free', 3, 50), 50, 'capped by the server budget')
  t.equal(apiRoleLimit('free', 3, 5), 20, 'never below the plan figure')
})

t.test('the control plane sizes the roles for the fleet, only those that differ', async (t) => {
  const role = project.dbApiRole
  const limitOf = async () => (await adminQuery<{ n: number }>(admin, 'select rolconnlimit as n from pg_roles where rolname = $1', [role])).rows[0]!.n
  t.equal(await limitOf(), 20, 'made for a fleet of one')
  await controlPlane.sizeRoleLimits(3)
  t.equal(await limitOf(), 60, 'three nodes: three times the plan figure')
  await controlPlane.sizeRoleLimits(1)
  t.equal(await limitOf(), 20, 'and back when they leave')
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
