// A project database that fails, through HTTP: connections the server ended
// while idle are replaced without the caller noticing; a database that cannot
// be reached answers 503 with Retry-After, and a statement that runs out of
// time a timeout, each in its service's own shape (the data API's PostgREST's).
import pg, { escapeIdentifier } from 'pg'
import t from 'tap'
import { ownerUrlOf } from '../../lib/catalogue.ts'
import { signJwt } from '../../lib/jwt.ts'
import { adminQuery, serverUrl } from '../helpers/db.ts'
import { request, type Reply } from '../helpers/http.ts'
import { startTestPlatform } from '../helpers/platform.ts'

const platform = await startTestPlatform(t)
const project = await platform.createProject({ name: 'failing', auth: true, push: true })
const database = project.record.dbName
const admin = await serverUrl()

const owner = new pg.Client({ connectionString: ownerUrlOf(project.record) })
await owner.connect()
await owner.query(`create function public.slow() returns integer language sql stable as $$ select 1 from pg_sleep(30) $$;
  create table public.notes (id int primary key, body text); insert into public.notes values (1, 'kept'); grant select on public.notes to anon`)
await owner.end()
// The API roles' per-request timeouts (lib/plans.ts defaults) end `slow` and the
// waits on the locks below; this database default ends them sooner wherever no
// per-request value is set.
await adminQuery(admin, `alter database ${escapeIdentifier(database)} set statement_timeout = '1s'`)

const anon = { apikey: project.anonKey }
const userToken = signJwt(project.record.jwtSecret, {
  sub: '00000000-0000-4000-8000-00000000000a',
  role: 'authenticated',
  aud: 'authenticated',
  exp: Math.floor(Date.now() / 1000) + 600,
})
const user = { apikey: project.anonKey, authorization: `Bearer ${userToken}` }
const service = { apikey: project.serviceRoleKey, authorization: `Bearer ${project.serviceRoleKey}` }
const graphql = (query: string) => request(`${project.baseUrl}/graphql/v1`, { method: 'POST', headers: anon, body: { query } })
const authUsers = (headers: Record<string, string> = {}) => request(`${project.baseUrl}/auth/v1/admin/users`, { headers: { ...service, ...headers } })
const devices = () => request(`${project.baseUrl}/push/v1/devices`, { headers: user })
const notes = () => request(`${project.baseUrl}/rest/v1/notes?select=id,body`, { headers: anon })

const answer = (reply: Reply) => ({ status: reply.status, body: reply.json })
const ended = (reply: Reply) => ({
  status: reply.status,
  retryAfter: reply.headers['retry-after'],
  code: reply.headers['x-sb-error-code'],
  body: reply.json,
})

/** Ends the data plane's connections to the project's database, as an operator or a restart would. */
async function terminateWorkers(): Promise<number> {
  const { rows } = await adminQuery<{ n: number }>(
    admin,
    `select count(pg_terminate_backend(pid))::int as n from pg_stat_activity where datname = $1 and application_name = 'baseplane-worker'`,
    [database],
  )
  return rows[0]!.n
}

t.test('connections ended while idle are replaced: the next request of each service succeeds', async (t) => {
  const warm = await Promise.all([graphql('{ __typename }'), authUsers(), devices(), notes()])
  t.same(warm.map((r) => r.status), [200, 200, 200, 200], 'each service has a pooled connection')
  t.ok((await terminateWorkers()) >= 4, 'the server ended them while idle')
  const after = await Promise.all([graphql('{ __typename }'), authUsers(), devices(), notes()])
  t.same(answer(after[0]!), { status: 200, body: { data: { __typename: 'Query' } } })
  t.same(answer(after[1]!), { status: 200, body: { users: [], aud: 'authenticated' } })
  t.same(answer(after[2]!), { status: 200, body: [] })
  t.same(answer(after[3]!), { status: 200, body: [{ id: 1, body: 'kept' }] })
})

t.test('a database that refuses connections: 503 with Retry-After in each service\'s shape, then back', async (t) => {
  await adminQuery(admin, `alter database ${escapeIdentifier(database)} allow_connections false`)
  t.teardown(() => adminQuery(admin, `alter database ${escapeIdentifier(database)} allow_connections true`))
  await terminateWorkers()

  t.same(ended(await graphql('{ __typename }')), {
    status: 503,
    retryAfter: '2',
    code: 'database_unavailable',
    body: { errors: [{ message: 'The project database is unavailable; try again shortly' }] },
  })
  t.same(ended(await authUsers()), {
    status: 503,
    retryAfter: '2',
    code: 'database_unavailable',
    body: { code: 503, error_code: 'database_unavailable', msg: 'The project database is unavailable, please retry after a moment.' },
  })
  t.same(ended(await authUsers({ 'x-supabase-api-version': '2024-01-01' })), {
    status: 503,
    retryAfter: '2',
    code: 'database_unavailable',
    body: { code: 'database_unavailable', message: 'The project database is unavailable, please retry after a moment.' },
  }, 'GoTrue\'s versioned shape too')
  t.same(ended(await devices()), {
    status: 503,
    retryAfter: '2',
    code: 'database_unavailable',
    body: { code: 'database_unavailable', message: 'The project database is unavailable' },
  })
  // A link opened in a browser gets GoTrue's error redirect, not a JSON body.
  const link = await request(`${project.baseUrl}/auth/v1/verify?type=signup&token=0123456789abcdef`)
  t.equal(link.status, 303)
  t.match(link.headers.location, /#error=temporarily_unavailable&error_code=database_unavailable&error_description=The\+project\+database\+is\+unavailable/)

  const rest = await notes()
  t.same({ ...ended(rest), proxyStatus: rest.headers['proxy-status'] }, {
    status: 503,
    retryAfter: '2',
    code: undefined,
    body: { code: 'PGRST001', details: null, hint: null, message: 'Database client error. Retrying the connection.' },
    proxyStatus: 'PostgREST; error=PGRST001',
  }, "the data API: PostgREST's PGRST001")

  await adminQuery(admin, `alter database ${escapeIdentifier(database)} allow_connections true`)
  const back = await Promise.all([graphql('{ __typename }'), authUsers(), devices(), notes()])
  t.same(back.map((r) => r.status), [200, 200, 200, 200], 'the same requests succeed once the database accepts connections again')
})

t.test('a statement that runs out of time: each service\'s timeout answer', async (t) => {
  // Locks make the platform's own statements wait until their timeout: auth's
  // session limit (10 s) and push's per-request role limit (authenticated's).
  const locker = new pg.Client({ connectionString: new URL(`/${database}`, admin).toString() })
  await locker.connect()
  t.teardown(() => locker.end())
  await locker.query(`begin; lock table auth.users in access exclusive mode; lock table push.devices in access exclusive mode`)
  const [slow, users, listed, restSlow] = await Promise.all([graphql('{ slow }'), authUsers(), devices(), request(`${project.baseUrl}/rest/v1/rpc/slow`, { headers: anon })])
  await locker.query('rollback')

  t.same(ended(slow), {
    status: 200,
    retryAfter: undefined,
    code: undefined,
    body: { data: null, errors: [{ message: 'canceling statement due to statement timeout' }] },
  }, 'GraphQL: PostgreSQL\'s text, as pg_graphql answers it')
  t.same(ended(users), {
    status: 504,
    retryAfter: undefined,
    code: 'request_timeout',
    body: { code: 504, error_code: 'request_timeout', msg: 'Processing this request timed out, please retry after a moment.' },
  }, 'Auth: GoTrue\'s request_timeout')
  t.same(ended(listed), {
    status: 504,
    retryAfter: undefined,
    code: 'request_timeout',
    body: { code: 'request_timeout', message: 'The request took longer than the project\'s statement timeout allows and was cancelled' },
  })
  t.same(ended(restSlow), {
    status: 500,
    retryAfter: undefined,
    code: undefined,
    body: { code: '57014', details: null, hint: null, message: 'canceling statement due to statement timeout' },
  }, "the data API: PostgreSQL's error, 500 as PostgREST maps 57014")
  const again = await Promise.all([graphql('{ __typename }'), authUsers(), devices(), notes()])
  t.same(again.map((r) => r.status), [200, 200, 200, 200], 'the connections are usable afterwards')
})
