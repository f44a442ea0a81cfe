import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import t from 'tap'
import { decodeJwt, decodeProtectedHeader } from 'jose'
import { ControlPlane } from '../../control-plane/control-plane.ts'
import { createProject, deleteProject, getProject, listAllProjects, setProjectPlan, setProjectProduct, upgradeAllProjects } from '../../control-plane/projects.ts'
import { adminUrlFor } from '../../lib/db/server-url.ts'
import { ownerUrlOf } from '../../lib/catalogue.ts'
import { migrate } from '../../lib/db/migrations.ts'
import { adminQuery, serverUrl } from '../helpers/db.ts'
import { catalogueDatabase, dropCatalogue } from '../helpers/platform.ts'

const catalogueUrl = await catalogueDatabase(t)
const controlPlane = await ControlPlane.open(catalogueUrl)
t.teardown(async () => {
  await controlPlane.close()
  await dropCatalogue(catalogueUrl)
})
const server = await serverUrl()

t.test('creating a project makes its database, roles and Supabase-shaped keys', async (t) => {
  const project = await createProject(controlPlane, { name: 'Shop', plan: 'pro' })
  t.match(project.ref, /^[a-z]{20}$/)
  t.equal(project.plan, 'pro')
  t.equal(project.authEnabled, false)
  t.equal(project.pushEnabled, false)
  t.ok(Buffer.from(project.jwtSecret, 'base64url').length >= 32, 'secret has at least 256 bits')
  for (const [key, role] of [
    [project.anonKey, 'anon'],
    [project.serviceRoleKey, 'service_role'],
  ] as const) {
    t.same(decodeProtectedHeader(key), { alg: 'HS256', typ: 'JWT' })
    const claims = decodeJwt(key)
    t.same(Object.keys(claims).sort(), ['exp', 'iat', 'iss', 'ref', 'role'])
    t.equal(claims.ref, project.ref)
    t.equal(claims.role, role)
    t.ok(claims.exp! - claims.iat! > 5 * 365 * 24 * 3600, 'long-lived like Supabase legacy keys')
  }
  const { rows: databases } = await adminQuery(server, 'select datname from pg_database where datname = $1', [project.dbName])
  t.equal(databases.length, 1)
  const { rows: roles } = await adminQuery(server, `select rolname, rolcanlogin, rolbypassrls, rolinherit from pg_roles where rolname in ('anon','authenticated','service_role', $1, $2) order by rolname`, [project.dbApiRole, project.dbOwnerRole])
  t.same(
    roles.map((r) => [r.rolname, r.rolcanlogin, r.rolbypassrls]),
    [
      ['anon', false, false],
      ['authenticated', false, false],
      [project.dbApiRole, true, false],
      [project.dbOwnerRole, true, false],
      ['service_role', false, true],
    ].sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
  )
  const listed = await listAllProjects(controlPlane)
  t.ok(listed.some((p) => p.ref === project.ref))
})

t.test('the owner role builds in public; auth functions read request.jwt.claims', async (t) => {
  const project = await createProject(controlPlane, { name: 'Owner' })
  const owner = new pg.Client({ connectionString: ownerUrlOf(project) })
  await owner.connect()
  t.teardown(() => owner.end())
  await owner.query(`create table public.notes (id serial primary key, body text)`)
  await owner.query(`create function public.twice(x int) returns int language sql as 'select x * 2'`)
  await owner.query(`alter table public.notes enable row level security`)
  await owner.query(`create policy mine on public.notes for select to authenticated using (true)`)
  const { rows: grants } = await owner.query(
    `select grantee, string_agg(privilege_type, ',' order by privilege_type) as privileges
       from information_schema.role_table_grants where table_name = 'notes' and grantee in ('anon','authenticated','service_role')
      group by grantee order by grantee`,
  )
  t.same(grants.map((g) => g.grantee), ['anon', 'authenticated', 'service_role'], 'default privileges grant the API roles, as Supabase does')
  t.match(grants[0].privileges, /DELETE,INSERT,REFERENCES,SELECT,TRIGGER,TRUNCATE,UPDATE/)
  await owner.query('begin')
  await owner.query(`select set_config('request.jwt.claims', $1, true)`, [
    JSON.stringify({ sub: '3f1e2d4c-0000-4000-8000-000000000001', role: 'authenticated', email: 'a@example.com', aal: 'aal2' }),
  ])
  const { rows } = await owner.query(`select auth.uid()::text as uid, auth.role() as role, auth.email() as email, auth.jwt() ->> 'aal' as aal`)
  await owner.query('rollback')
  t.same(rows[0], { uid: '3f1e2d4c-0000-4000-8000-000000000001', role: 'authenticated', email: 'a@example.com', aal: 'aal2' })
  await t.rejects(owner.query('create schema if not exists auth_extra; create table auth.hijack (id int)'), /permission denied/)
})

t.test('deleting a project drops its database and roles', async (t) => {
  const project = await createProject(controlPlane, { name: 'Doomed' })
  await deleteProject(controlPlane, project.ref)
  const { rows } = await adminQuery(server, `select 1 from pg_database where datname = $1 union all select 1 from pg_roles where rolname in ($2, $3)`, [
    project.dbName,
    project.dbApiRole,
    project.dbOwnerRole,
  ])
  t.equal(rows.length, 0)
  await t.rejects(getProject(controlPlane, project.ref), { code: 'project_not_found', status: 404 })
  await t.rejects(deleteProject(controlPlane, project.ref), { code: 'project_not_found' })
})

t.test('bad input is refused and writes nothing', async (t) => {
  const before = (await listAllProjects(controlPlane)).length
  await t.rejects(createProject(controlPlane, { name: '' }), { code: 'invalid_argument', message: 'Project name must be 1 to 200 characters' })
  await t.rejects(createProject(controlPlane, { name: 'x', plan: 'gold' }), { message: 'Unknown plan "gold": use one of free, plus, pro, business' })
  await t.rejects(createProject(controlPlane, { name: 'x', ref: 'Bad-Ref' }), { message: /Invalid ref "Bad-Ref"/ })
  const taken = await createProject(controlPlane, { name: 'first', ref: 'takenref' })
  await t.rejects(createProject(controlPlane, { name: 'second', ref: 'takenref' }), { message: 'A project with ref "takenref" already exists' })
  t.equal((await listAllProjects(controlPlane)).length, before + 1)
  t.equal((await getProject(controlPlane, 'takenref')).name, 'first', 'the failed attempt did not touch the existing project')
  await t.rejects(setProjectProduct(controlPlane, taken.ref, 'graphql', false), { message: 'GraphQL is always on for every project: it cannot be turned off (only auth and push are switched)' })
  t.match(await setProjectProduct(controlPlane, taken.ref, 'rest', true), { ref: taken.ref, authEnabled: false, pushEnabled: false }, 'enabling the Data API, always on, changes nothing')
  await t.rejects(setProjectProduct(controlPlane, taken.ref, 'sms', true), { message: 'Unknown product "sms": use one of auth, push (graphql, rest and storage are always on)' })
  await t.rejects(setProjectPlan(controlPlane, taken.ref, 'enterprise'), { code: 'invalid_argument' })
})

t.test('a failure while creating the database leaves no row, database or role behind', async (t) => {
  // A role with the project's API role name already exists, so creation fails midway.
  await adminQuery(server, `create role bp_clashref_api`)
  t.teardown(() => adminQuery(server, 'drop role if exists bp_clashref_api'))
  await t.rejects(createProject(controlPlane, { name: 'clash', ref: 'clashref' }), /already exists/)
  await t.rejects(getProject(controlPlane, 'clashref'), { code: 'project_not_found' })
  const { rows } = await adminQuery(server, `select 1 from pg_database where datname = 'bp_clashref' union all select 1 from pg_roles where rolname = 'bp_clashref_owner'`)
  t.equal(rows.length, 0)
  const { rows: kept } = await adminQuery(server, `select 1 from pg_roles where rolname = 'bp_clashref_api'`)
  t.equal(kept.length, 1, 'the role that was there before is left alone')
})

t.test('upgrades apply each new migration once, even when two processes race', async (t) => {
  const project = await createProject(controlPlane, { name: 'Upgrade' })
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'bp-sql-'))
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }))
  fs.mkdirSync(path.join(root, 'extra'))
  fs.writeFileSync(path.join(root, 'extra', '0001_counter.sql'), 'create table public.applied (n int); insert into public.applied values (1);')
  const connect = async () => {
    const client = new pg.Client({ connectionString: adminUrlFor(server, project.dbName) })
    await client.connect()
    return client
  }
  const [a, b] = await Promise.all([connect(), connect()])
  t.teardown(async () => {
    await a.end()
    await b.end()
  })
  const first = await Promise.all([migrate(a, 'extra', {}, root), migrate(b, 'extra', {}, root)])
  t.same(first.map((v) => v.length).sort(), [0, 1], 'exactly one process applied version 1')
  fs.writeFileSync(path.join(root, 'extra', '0002_more.sql'), 'insert into public.applied values (2);')
  t.same(await migrate(a, 'extra', {}, root), [2])
  t.same(await migrate(b, 'extra', {}, root), [])
  t.same((await a.query('select n from public.applied order by n')).rows, [{ n: 1 }, { n: 2 }])
  // A rolling deploy: a node of the older version (knowing migration 1 only) meets the newer database.
  const older = fs.mkdtempSync(path.join(os.tmpdir(), 'bp-sql-'))
  t.teardown(() => fs.rmSync(older, { recursive: true, force: true }))
  fs.mkdirSync(path.join(older, 'extra'))
  fs.copyFileSync(path.join(root, 'extra', '0001_counter.sql'), path.join(older, 'extra', '0001_counter.sql'))
  await t.rejects(migrate(b, 'extra', {}, older), {
    code: 'invalid_config',
    message: 'the extra database was migrated by a newer Baseplane (its migration 2; this one knows up to 1): start this node with the fleet\'s newer version',
  }, 'an older node refuses a database a newer one migrated')
  t.same(Object.fromEntries((await upgradeAllProjects(controlPlane)).applied), {}, 'projects already at the newest project SQL get nothing')
})
