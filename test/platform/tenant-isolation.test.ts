// Tenants kept out of the platform and of each other's connections (issue 11):
// the platform's databases refuse project roles, the change channel believes
// only change numbers the catalogue issued, the platform's schema names are
// reserved in every project database, and role connection limits follow the plan.
import pg from 'pg'
import t from 'tap'
import { ownerUrlOf, type ProjectRecord } from '../../lib/catalogue.ts'
import { planLimits } from '../../lib/plans.ts'
import { ensureClusterRoles } from '../../control-plane/project-database.ts'
import { adminQuery, connectClient, withDatabase } from '../helpers/db.ts'
import { request, type ErrorBody } from '../helpers/http.ts'
import { startTestPlatform, type TestProject } from '../helpers/platform.ts'
import { getProject, rotateProjectKeys, setProjectPlan, setProjectProduct, upgradeAllProjects } from '../../control-plane/projects.ts'

const platform = await startTestPlatform(t)
const controlPlane = platform.platform.controlPlane
const admin = `${platform.origin}/platform/v1`
const adminAuth = { authorization: `Bearer ${platform.config.adminToken}` }
const catalogueDb = new URL(platform.catalogueUrl).pathname.slice(1)
const a = await platform.createProject({ name: 'A' })

function ownerInto(project: ProjectRecord, database: string): string {
  return withDatabase(ownerUrlOf(project), database)
}

/** Connects as `url` and reports the refusal: message and detail, or "connected". */
async function attempt(url: string): Promise<string> {
  try {
    const client = await connectClient(url)
    await client.end()
    return 'connected'
  } catch (error) {
    return `${(error as Error).message} / ${(error as { detail?: string }).detail}`
  }
}

const refusal = (database: string) => `permission denied for database "${database}" / User does not have CONNECT privilege.`

async function typename(project: TestProject, key = project.anonKey) {
  const reply = await request<unknown>(`${project.baseUrl}/graphql/v1`, { headers: { apikey: key }, body: { query: '{ __typename }' } })
  return { status: reply.status, body: reply.json }
}

t.test('a project owner cannot connect to postgres, template1 or the catalogue; its own database still works', async (t) => {
  for (const database of ['postgres', 'template1', catalogueDb]) t.equal(await attempt(ownerInto(a.record, database)), refusal(database), database)
  t.equal(await attempt(ownerUrlOf(a.record)), 'connected')

  // An install from before: PostgreSQL's default grants, closed again by the start-up upgrade.
  await adminQuery(platform.catalogueUrl, 'grant connect on database postgres, template1 to public')
  t.equal(await attempt(ownerInto(a.record, 'postgres')), 'connected', 'open as PostgreSQL leaves it')
  await upgradeAllProjects(controlPlane)
  for (const database of ['postgres', 'template1']) t.equal(await attempt(ownerInto(a.record, database)), refusal(database), `${database} closed again`)

  // CREATE DATABASE copies template1 without CONNECT on it.
  const later = await platform.createProject({ name: 'made after the revoke' })
  t.same(await typename(later), { status: 200, body: { data: { __typename: 'Query' } } })
  t.equal(await attempt(ownerUrlOf(later.record)), 'connected')
})

t.test('projects created at once by several processes: the cluster SQL runs one at a time', async (t) => {
  // PostgreSQL's defaults again, so every run has catalogue rows to rewrite:
  // without the lock two of these fail with "tuple concurrently updated".
  await adminQuery(platform.catalogueUrl, 'grant connect on database postgres, template1 to public')
  const runs = await Promise.allSettled(Array.from({ length: 8 }, () => ensureClusterRoles(platform.catalogueUrl)))
  t.same(runs.filter((run) => run.status === 'rejected').map((run) => String((run as PromiseRejectedResult).reason)), [])
  for (const database of ['postgres', 'template1']) t.equal(await attempt(ownerInto(a.record, database)), refusal(database), `${database} closed`)
})

t.test('forged change notifications neither poison nor slow the control plane', async (t) => {
  const catalogue = await connectClient(platform.catalogueUrl)
  t.teardown(() => catalogue.end())
  const { rows } = await catalogue.query<{ change: string }>('select baseplane.last_change() as change')
  const issued = Number(rows[0]!.change)
  const forged = [
    'x:1e308',
    `${a.ref}:1e308`,
    `${a.ref}:${issued + 1000}`,
    `${a.ref}:99999999999999999999`,
    `${a.ref}:-1`,
    `${a.ref}:0`,
    `${a.ref}:01`,
    `${a.ref}:1.5`,
    `${a.ref}: 1`,
    `${a.ref}:1:2`,
    `${a.ref.toUpperCase()}:1`,
    `ab:1`,
    `${a.ref}`,
    ':1',
    '',
    `${a.ref}:1`.padEnd(7000, 'x'),
  ]
  for (const payload of forged) await catalogue.query(`select pg_notify('baseplane_change', $1)`, [payload])
  // Well-formed and already issued: believed, and harmless (a cache miss).
  await catalogue.query(`select pg_notify('baseplane_change', $1)`, [`${a.ref}:1`])

  // Poisoned, every write would wait out the 5 s settle timeout for an
  // acknowledgement that never comes. A write normally takes tens of
  // milliseconds; 4 s leaves room for a loaded 2-core machine and still
  // tells the two apart.
  for (const write of [() => rotateProjectKeys(controlPlane, a.ref), () => setProjectPlan(controlPlane, a.ref, 'plus'), () => setProjectPlan(controlPlane, a.ref, 'free')]) {
    const started = Date.now()
    await write()
    const took = Date.now() - started
    t.ok(took < 4000, `a control-plane write returned in ${took} ms`)
  }
  const rotated = await getProject(controlPlane, a.ref)
  t.same(await typename(a, rotated.anonKey), { status: 200, body: { data: { __typename: 'Query' } } }, 'the new key works on the next request')
  t.same(await typename(a, a.anonKey), {
    status: 401,
    body: { code: 'invalid_api_key', message: 'Invalid API key', hint: "Send this project's anon or service_role key in the apikey header." },
  }, 'the old key is refused on the next request')
  const nodes = await catalogue.query<{ seen: string; last: string }>('select seen_change::text as seen, baseplane.last_change()::text as last from baseplane.nodes')
  t.same(nodes.rows.map((row) => row.seen), nodes.rows.map((row) => row.last), 'every process acknowledged exactly what was issued')
})

t.test('schemas auth, push and graphql are the platform\'s in a new project', async (t) => {
  const project = await platform.createProject({ name: 'reserved' })
  const owner = await connectClient(ownerUrlOf(project.record))
  t.teardown(() => owner.end())
  const { rows } = await owner.query<{ name: string; owner: string; create: boolean }>(
    `select nspname as name, pg_get_userbyid(nspowner) as owner, has_schema_privilege(current_user, oid, 'create') as create
       from pg_namespace where nspname in ('auth', 'push', 'graphql') order by nspname`,
  )
  const platformRole = decodeURIComponent(new URL(platform.catalogueUrl).username)
  t.same(rows, ['auth', 'graphql', 'push'].map((name) => ({ name, owner: platformRole, create: false })))
  for (const name of ['auth', 'push', 'graphql']) {
    await t.rejects(owner.query(`create schema ${name}`), { message: `schema "${name}" already exists` })
    await t.rejects(owner.query(`create table ${name}.mine (id int)`), { message: `permission denied for schema ${name}` })
    await t.rejects(owner.query(`drop schema ${name} cascade`), { message: `must be owner of schema ${name}` })
  }
  const enabled = await setProjectProduct(controlPlane, project.ref, 'push', true)
  t.equal(enabled.pushEnabled, true, 'push installs into the reserved schema')
  const vapid = await request<{ public_key: string }>(`${project.baseUrl}/push/v1/vapid`, { headers: { apikey: project.anonKey } })
  t.equal(vapid.status, 200)
  t.match(vapid.json.public_key, /^[A-Za-z0-9_-]{80,}$/)
})

t.test('an existing project whose owner made schema push: enabling push refuses and says what to do', async (t) => {
  const project = await platform.createProject({ name: 'older' })
  const projectDb = withDatabase(platform.catalogueUrl, project.record.dbName)
  // As it was before the reservation: no push schema, migration 6 not applied.
  await adminQuery(projectDb, `drop schema push; delete from baseplane.migrations where migration_set = 'project' and version = 6`)
  const owner = await connectClient(ownerUrlOf(project.record))
  t.teardown(() => owner.end())
  await owner.query('create schema push; create table push.mine (id int); insert into push.mine values (7)')
  const { applied: upgraded } = await upgradeAllProjects(controlPlane)
  t.same(upgraded.get(project.ref), [6], 'the reservation applies to existing projects and leaves the owner\'s schema')

  const refused = await request<ErrorBody>(`${admin}/projects/${project.ref}/products/push`, { method: 'PUT', headers: adminAuth })
  t.same({ status: refused.status, body: refused.json }, {
    status: 400,
    body: {
      code: 'invalid_argument',
      message:
        `Schema "push" in the database of project ${project.ref} belongs to role ${project.record.dbOwnerRole}, not to the platform, so push cannot be installed there: ` +
        'as that role, rename it (alter schema push rename to app_push) or drop it, then enable push again',
    },
  })
  t.equal((await getProject(controlPlane, project.ref)).pushEnabled, false, 'push stays off')
  const tables = await owner.query<{ name: string }>(`select table_name as name from information_schema.tables where table_schema = 'push'`)
  t.same(tables.rows, [{ name: 'mine' }], 'nothing was installed into the owner\'s schema')

  await owner.query('alter schema push rename to app_push')
  const enabled = await request<{ products: { push: boolean } }>(`${admin}/projects/${project.ref}/products/push`, { method: 'PUT', headers: adminAuth })
  t.equal(enabled.status, 200)
  t.equal(enabled.json.products.push, true)
  t.same((await owner.query('select id from app_push.mine')).rows, [{ id: 7 }], 'the owner\'s data kept under its new name')
  await t.rejects(owner.query('create table push.again (id int)'), { message: 'permission denied for schema push' })
})

t.test('connection limits by plan: the owner\'s flood stops at its limit and the API still answers', async (t) => {
  const project = await platform.createProject({ name: 'flooded' })
  const limits = planLimits('free')
  const roleLimits = async () =>
    (
      await adminQuery<{ api: number; owner: number; reserved: boolean }>(
        platform.catalogueUrl,
        `select (select rolconnlimit from pg_roles where rolname = $1) as api, (select rolconnlimit from pg_roles where rolname = $2) as owner,
                pg_has_role($1, 'pg_use_reserved_connections', 'usage') as reserved`,
        [project.record.dbApiRole, project.record.dbOwnerRole],
      )
    ).rows[0]
  t.same(await roleLimits(), { api: limits.apiConnections, owner: limits.ownerConnections, reserved: true }, 'set at creation')

  // The flood: 491 connections as the owner, ten at a time.
  const held: pg.Client[] = []
  t.teardown(() => Promise.all(held.map((client) => client.end().catch(() => {}))))
  const refusals = new Map<string, number>()
  let next = 0
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      while (next < 491) {
        next += 1
        try {
          held.push(await connectClient(ownerUrlOf(project.record)))
        } catch (error) {
          const message = (error as Error).message
          refusals.set(message, (refusals.get(message) ?? 0) + 1)
        }
      }
    }),
  )
  t.equal(held.length, limits.ownerConnections, 'the owner holds its limit and no more')
  t.same([...refusals], [[`too many connections for role "${project.record.dbOwnerRole}"`, 491 - limits.ownerConnections]])
  t.same(await typename(project), { status: 200, body: { data: { __typename: 'Query' } } }, 'the API answers while the owner holds its limit')
  t.same(await typename(a, (await getProject(controlPlane, a.ref)).anonKey), { status: 200, body: { data: { __typename: 'Query' } } }, 'and so does another project')

  await setProjectPlan(controlPlane, project.ref, 'pro')
  t.same(await roleLimits(), { api: planLimits('pro').apiConnections, owner: planLimits('pro').ownerConnections, reserved: true }, 'a plan change moves them')
  await t.rejects(setProjectPlan(controlPlane, project.ref, 'gold'), { message: 'Unknown plan "gold": use one of free, plus, pro, business' })
  await t.rejects(setProjectPlan(controlPlane, 'nosuchproject', 'pro'), { message: 'Project "nosuchproject" not found' })

  // A project from before the limits: start-up brings it to its plan.
  await adminQuery(platform.catalogueUrl, `alter role "${project.record.dbOwnerRole}" connection limit -1; alter role "${project.record.dbApiRole}" connection limit -1;
    revoke pg_use_reserved_connections from "${project.record.dbApiRole}"`)
  await upgradeAllProjects(controlPlane)
  t.same(await roleLimits(), { api: planLimits('pro').apiConnections, owner: planLimits('pro').ownerConnections, reserved: true }, 'set again at start-up')
})
