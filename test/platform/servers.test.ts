// More database servers (issue 11): a second real PostgreSQL added through
// the admin API and the CLI, new projects placed by room, each served from
// its own server, bad servers refused with what is wrong, and a project's
// database dropped where it lives.
import pg from 'pg'
import t from 'tap'
import { ControlPlane } from '../../control-plane/control-plane.ts'
import { createProject, deleteProject } from '../../control-plane/projects.ts'
import { listDatabaseServers } from '../../control-plane/server-admin.ts'
import type { serverView } from '../../control-plane/views.ts'
import { ownerUrlOf, type ProjectRecord } from '../../lib/catalogue.ts'
import { freePort, startTemporary } from '../../lib/db/embedded.ts'
import { adminQuery, withDatabase } from '../helpers/db.ts'
import { runCli } from '../helpers/cli.ts'
import { request, type ErrorBody } from '../helpers/http.ts'
import { startTestPlatform } from '../helpers/platform.ts'

type ServerBody = ReturnType<typeof serverView>

const platform = await startTestPlatform(t)
const second = await startTemporary()
t.teardown(() => second.stop())
const admin = `${platform.origin}/platform/v1`
const adminAuth = { authorization: `Bearer ${platform.config.adminToken}` }
const secondAddress = `127.0.0.1:${new URL(second.url).port}`
const secondMasked = second.url.replace(/:[^:@/]+@/, ':***@')
const defaultMasked = platform.catalogueUrl.replace(/:[^:@/]+@/, ':***@')
const defaultBudget = platform.config.maxProjectConnections

function masked(url: string): string {
  return url.replace(/:[^:@/]+@/, ':***@')
}

const baseplane = (args: string[]) => runCli(args, { DATABASE_URL: platform.catalogueUrl, PORT: '8123' })

/** What the server leaves the platform when no budget is given: its reserved_connections, else max - superuser reserved - 10. */
async function computedBudget(url: string): Promise<number> {
  const { rows } = await adminQuery<{ max: string; superuser: string; reserved: string | null }>(
    url,
    `select current_setting('max_connections') as max, current_setting('superuser_reserved_connections') as superuser,
            current_setting('reserved_connections', true) as reserved`,
  )
  const settings = rows[0]!
  return Number(settings.reserved ?? 0) > 0 ? Number(settings.reserved) : Number(settings.max) - Number(settings.superuser) - 10
}

/** Served over HTTP, and by which server: a row the project's owner wrote with that server's port. */
async function servedFrom(project: ProjectRecord, anonKey: string): Promise<{ health: number; port: unknown }> {
  const owner = new pg.Client({ connectionString: ownerUrlOf(project) })
  await owner.connect()
  await owner.query('create table public.place (id int primary key default 1, port int not null default inet_server_port())')
  await owner.query('insert into public.place default values')
  await owner.end()
  const base = `${platform.origin}/project/${project.ref}`
  const health = await request(`${base}/health`, { headers: { apikey: anonKey } })
  const graphql = await request<{ data: { placeCollection: { edges: Array<{ node: { port: number } }> } } }>(`${base}/graphql/v1`, {
    headers: { apikey: anonKey },
    body: { query: '{ placeCollection { edges { node { port } } } }' },
  })
  return { health: health.status, port: graphql.json.data?.placeCollection.edges[0]?.node.port ?? graphql.json }
}

t.test('bad servers are refused with what is wrong, and nothing is recorded', async (t) => {
  await adminQuery(second.url, `create role plain login password 'plain' createdb createrole`)
  const plainUrl = withDatabase(second.url, 'postgres').replace(/\/\/[^@]+@/, '//plain:plain@')
  const wrongPassword = second.url.replace(/:[^:@/]+@/, ':wrong@')
  const nobody = await freePort()
  const cases: Array<[unknown, string]> = [
    [{}, '"url" is required'],
    [{ url: 42 }, '"url" must be a string'],
    [{ url: 'http://example.test/db' }, 'The database server URL must look like postgres://user:password@host:5432/postgres'],
    [{ url: 'not a url' }, 'The database server URL must look like postgres://user:password@host:5432/postgres'],
    [{ url: `postgres://postgres:x@127.0.0.1:${nobody}/postgres` }, `Could not connect to database server 127.0.0.1:${nobody}: connect ECONNREFUSED 127.0.0.1:${nobody}`],
    [{ url: wrongPassword }, `Could not connect to database server ${secondAddress}: password authentication failed for user "postgres"`],
    [{ url: plainUrl }, `Role "plain" on database server ${secondAddress} is not a superuser: Baseplane creates databases, roles and event triggers there, which needs one`],
    [{ url: second.url, id: 'Bad Id' }, 'Invalid server id "Bad Id": 1 to 40 lowercase letters, digits, "-" or "_", and not "default"'],
    [{ url: second.url, id: 'default' }, 'Invalid server id "default": 1 to 40 lowercase letters, digits, "-" or "_", and not "default"'],
    [{ url: second.url, id: 'x'.repeat(41) }, `Invalid server id "${'x'.repeat(41)}": 1 to 40 lowercase letters, digits, "-" or "_", and not "default"`],
    [{ url: second.url, connections: 0 }, 'The connection budget must be a whole number from 1 to 100000, got 0'],
    [{ url: second.url, connections: 2.5 }, 'The connection budget must be a whole number from 1 to 100000, got 2.5'],
    [{ url: second.url, connections: '12' }, 'The connection budget must be a whole number from 1 to 100000, got "12"'],
    [{ url: second.url, connections: 100001 }, 'The connection budget must be a whole number from 1 to 100000, got 100001'],
    [{ url: platform.catalogueUrl }, `Database server ${new URL(platform.catalogueUrl).hostname}:${new URL(platform.catalogueUrl).port} is the default server (the catalogue's own): it needs no row`],
  ]
  for (const [body, message] of cases) {
    const reply = await request<ErrorBody>(`${admin}/servers`, { headers: adminAuth, body: body as object })
    t.same({ status: reply.status, body: reply.json }, { status: 400, body: { code: 'invalid_argument', message } }, JSON.stringify(body))
    t.notMatch(reply.text, /wrong@|:x@|plain:plain/, 'no password in the answer')
  }
  const cli = await baseplane(['servers', 'add', second.url, '--connections', 'many'])
  t.same(cli, { code: 1, stdout: '', stderr: 'baseplane: The connection budget must be a whole number from 1 to 100000, got "many"\n' })
  const usage = await baseplane(['servers', 'add'])
  t.same(usage, { code: 2, stdout: '', stderr: 'baseplane: missing URL (usage: baseplane servers add URL [--id ID] [--connections N])\n' })
  const listed = await request<ServerBody[]>(`${admin}/servers`, { headers: adminAuth })
  t.equal(listed.json.length, 1)
  t.match(listed.json[0], { id: 'default', url: defaultMasked, connection_budget: defaultBudget, projects: 0, used: 0, room: defaultBudget, draining: false, state: 'up', connections_in_use: Number })
})

t.test('a second server: added, new projects placed by room, each served from its own server, dropped where it lives', async (t) => {
  const budget = await computedBudget(second.url)
  const added = await baseplane(['servers', 'add', second.url, '--id', 'second'])
  t.same(added, { code: 0, stdout: `Added database server second (${secondMasked}), connection budget ${budget}\n`, stderr: '' })
  t.notMatch(added.stdout, new URL(second.url).password)

  const again = await request<ErrorBody>(`${admin}/servers`, { headers: adminAuth, body: { url: second.url, id: 'second' } })
  t.same(again.json, { code: 'invalid_argument', message: 'A database server with id "second" already exists' })
  const twice = await request<ErrorBody>(`${admin}/servers`, { headers: adminAuth, body: { url: second.url.replace('127.0.0.1', 'localhost'), id: 'alias' } })
  t.same(twice.json, { code: 'invalid_argument', message: `Database server localhost:${new URL(second.url).port} is already added as "second"` })

  // One more connection of budget on the default server than on the second:
  // room (the budget less what the projects' plans may use, 12 for a free
  // project) decides, and a tie goes to the default server.
  const placing = await ControlPlane.open(platform.catalogueUrl, { defaultServerBudget: budget + 1 })
  t.teardown(() => placing.close())
  const placed: ProjectRecord[] = []
  for (let i = 0; i < 5; i++) placed.push(await createProject(placing, { name: `placed ${i}` }))
  t.same(placed.map((p) => p.dbServer), ['default', 'second', 'default', 'second', 'default'])
  t.same(
    (await listDatabaseServers(placing)).map((s) => [s.id, s.connectionBudget, s.projects, s.used, s.room]),
    [['default', budget + 1, 3, 36, budget + 1 - 36], ['second', budget, 2, 24, budget - 24]],
  )
  const onSecond = placed[1]!
  t.equal(onSecond.dbServerBudget, budget, 'the record carries its server\'s budget')
  t.equal(placed[0]!.dbServerBudget, undefined, 'and none on the default server')
  t.equal(onSecond.dbPort, Number(new URL(second.url).port))

  t.same(await servedFrom(onSecond, onSecond.anonKey), { health: 200, port: Number(new URL(second.url).port) }, 'served from the second server')
  t.same(await servedFrom(placed[0]!, placed[0]!.anonKey), { health: 200, port: Number(new URL(platform.catalogueUrl).port) }, 'served from the default server')

  // The second server is closed to tenants and limits their roles, as the default is.
  const intoPostgres = await new pg.Client({ connectionString: withDatabase(ownerUrlOf(onSecond), 'postgres') }).connect().then(
    () => 'connected',
    (error: Error) => error.message,
  )
  t.equal(intoPostgres, 'permission denied for database "postgres"')
  const limits = await adminQuery<{ rolconnlimit: number }>(second.url, 'select rolconnlimit from pg_roles where rolname = $1', [onSecond.dbOwnerRole])
  t.same(limits.rows, [{ rolconnlimit: 10 }])

  const listedByCli = await baseplane(['servers', 'list'])
  t.equal(listedByCli.code, 0, listedByCli.stderr)
  // The CLI's default budget is its configuration's (BASEPLANE_MAX_PROJECT_CONNECTIONS, unset here).
  const unconfigured = await ControlPlane.open(platform.catalogueUrl)
  const cliDefault = unconfigured.defaultServerBudget
  await unconfigured.close()
  t.match(
    listedByCli.stdout,
    new RegExp(
      `^ID\\s+URL\\s+STATE\\s+BUDGET\\s+PROJECTS\\s+ROOM\\s+IN USE\\n` +
        `default\\s+${escape(masked(platform.catalogueUrl))}\\s+up\\s+${cliDefault}\\s+3\\s+${cliDefault - 36}\\s+\\d+\\n` +
        `second\\s+${escape(secondMasked)}\\s+up\\s+${budget}\\s+2\\s+${budget - 24}\\s+\\d+\\n$`,
    ),
  )
  const listedByApi = await request<ServerBody[]>(`${admin}/servers`, { headers: adminAuth })
  t.match(listedByApi.json, [
    { id: 'default', url: defaultMasked, connection_budget: defaultBudget, projects: 3, used: 36, room: defaultBudget - 36, draining: false, state: 'up' },
    { id: 'second', url: secondMasked, connection_budget: budget, projects: 2, used: 24, room: budget - 24, draining: false, state: 'up' },
  ])

  const third = await request<ServerBody>(`${admin}/servers`, { headers: adminAuth, body: { url: withDatabase(second.url, 'template1'), id: 'x', connections: 5 } })
  t.same(third.json, { code: 'invalid_argument', message: `Database server ${secondAddress} is already added as "second"` })

  for (const project of placed.filter((p) => p.dbServer === 'second')) {
    await deleteProject(placing, project.ref)
    const left = await adminQuery(second.url, `select datname from pg_database where datname = $1 union all select rolname from pg_roles where rolname in ($2, $3)`, [
      project.dbName,
      project.dbApiRole,
      project.dbOwnerRole,
    ])
    t.same(left.rows, [], `${project.ref}: database and roles dropped on the second server`)
  }
  t.same((await listDatabaseServers(placing)).map((s) => [s.id, s.projects]), [['default', 3], ['second', 0]])
})

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
