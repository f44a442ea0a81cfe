// Per-project timeouts of the API roles: statement_timeout per role and
// idle_in_transaction_session_timeout, set in every request transaction (also
// on GraphQL's one-round-trip prepared path), changed by the operator through
// the CLI or the admin API and applied on the next request.
import pg from 'pg'
import t from 'tap'
import { apiDatabaseOf, ownerUrlOf } from '../../lib/catalogue.ts'
import { withRequestTransaction } from '../../lib/db/request-transaction.ts'
import { type RequestIdentity } from '../../lib/roles.ts'
import { signJwt } from '../../lib/jwt.ts'
import { DEFAULT_ROLE_TIMEOUTS } from '../../lib/plans.ts'
import { runCli } from '../helpers/cli.ts'
import { request } from '../helpers/http.ts'
import { startTestPlatform } from '../helpers/platform.ts'

interface GraphqlBody {
  data: unknown
  errors?: Array<{ message: string }>
}

const platform = await startTestPlatform(t)
const project = await platform.createProject({ name: 'Timeouts' })
const ref = project.ref
const owner = new pg.Client({ connectionString: ownerUrlOf(project.record) })
await owner.connect()
t.teardown(() => owner.end())
await owner.query(`
  create function slow(seconds float8) returns int language plpgsql stable as $$
    begin perform pg_sleep(seconds); return 1; end $$;
  create function timeouts() returns text language sql stable as $$
    select current_setting('statement_timeout') || ' ' || current_setting('idle_in_transaction_session_timeout') $$;
`)

const userToken = await signJwt(project.record.jwtSecret, { sub: '00000000-0000-4000-8000-00000000000a', role: 'authenticated', aud: 'authenticated', exp: Math.floor(Date.now() / 1000) + 600 })
const keys = { anon: project.anonKey, authenticated: userToken, service_role: project.serviceRoleKey }
type Role = keyof typeof keys

async function gql(query: string, role: Role = 'anon'): Promise<{ status: number; body: GraphqlBody; ms: number }> {
  const started = performance.now()
  const reply = await request<GraphqlBody>(`${project.baseUrl}/graphql/v1`, {
    headers: { apikey: role === 'service_role' ? project.serviceRoleKey : project.anonKey, authorization: `Bearer ${keys[role]}` },
    body: { query },
  })
  return { status: reply.status, body: reply.json, ms: performance.now() - started }
}

/** What each role's request transaction runs with, as PostgreSQL shows it ("3s 10s"). */
async function seen(): Promise<Record<Role, unknown>> {
  const read = async (role: Role) => {
    const { body } = await gql('{ timeouts }', role)
    return body.errors ?? (body.data as { timeouts: string }).timeouts
  }
  return { anon: await read('anon'), authenticated: await read('authenticated'), service_role: await read('service_role') }
}

const admin = `${platform.origin}/platform/v1/projects/${ref}/timeouts`
const adminHeaders = { authorization: `Bearer ${platform.config.adminToken}` }

const baseplane = (args: string[]) => runCli(args, { DATABASE_URL: platform.catalogueUrl })

const TIMED_OUT = { data: null, errors: [{ message: 'canceling statement due to statement timeout' }] }

t.test('defaults: each role gets its own timeouts, on both GraphQL paths', async (t) => {
  t.same(DEFAULT_ROLE_TIMEOUTS, { statementTimeoutMs: { anon: 3000, authenticated: 8000, service_role: 60000 }, idleInTransactionTimeoutMs: 10000 })
  // The first request of a role builds its schema (the ordinary path: begin, identity, then statements);
  // later ones take the one-round-trip prepared path. Both must carry the settings.
  const first = await seen()
  const again = await seen()
  const expected = { anon: '3s 10s', authenticated: '8s 10s', service_role: '1min 10s' }
  t.same({ first, again }, { first: expected, again: expected })
})

t.test("a slow function: anon's statement is cancelled after about its 3 s, service_role's runs", async (t) => {
  const cancelled = await gql('{ slow(seconds: 4.5) }', 'anon')
  t.same({ status: cancelled.status, body: cancelled.body }, { status: 200, body: TIMED_OUT })
  // At least the timeout (PostgreSQL's timer starts with the statement, after
  // the request was sent). Under 5.5 s: not the 4.5 s sleep run to its end
  // plus a retry, nor the query run twice (the prepared path falling back to
  // the ordinary one would cost 6 s); 2.5 s of slack over a request that
  // otherwise takes milliseconds holds on a loaded 2-core machine.
  t.ok(cancelled.ms >= 2900 && cancelled.ms < 5500, `cancelled after ${Math.round(cancelled.ms)} ms`)
  const ran = await gql('{ slow(seconds: 4.5) }', 'service_role')
  t.same({ status: ran.status, body: ran.body }, { status: 200, body: { data: { slow: 1 } } })
})

t.test('the CLI changes them, shows them, and the next request runs with them', async (t) => {
  const shown = await baseplane(['projects', 'timeouts', ref])
  t.same(shown, {
    code: 0,
    stderr: '',
    stdout: [
      `Timeouts of ${ref} (on the next request)`,
      'anon statements             3s (default)',
      'authenticated statements    8s (default)',
      'service_role statements     1min (default)',
      'idle in transaction         10s (default)',
      '',
    ].join('\n'),
  })

  const changed = await baseplane(['projects', 'timeouts', ref, '--anon', '500ms', '--authenticated', '0', '--service-role', '2m', '--idle-in-transaction', '4s', '--json'])
  t.same({ code: changed.code, stderr: changed.stderr, body: JSON.parse(changed.stdout || 'null') }, {
    code: 0,
    stderr: '',
    body: { ref, anon: 500, authenticated: 0, service_role: 120000, idle_in_transaction: 4000, custom: ['anon', 'authenticated', 'service_role', 'idle_in_transaction'] },
  })
  t.same(await seen(), { anon: '500ms 4s', authenticated: '0 4s', service_role: '2min 4s' })
  const cancelled = await gql('{ slow(seconds: 3) }', 'anon')
  t.same(cancelled.body, TIMED_OUT)
  t.ok(cancelled.ms < 2500, `cancelled after ${Math.round(cancelled.ms)} ms, not after the 3 s sleep`)
  const unlimited = await gql('{ slow(seconds: 1) }', 'authenticated')
  t.same(unlimited.body, { data: { slow: 1 } }, '0 is no limit')

  const reset = await baseplane(['projects', 'timeouts', ref, '--reset', '--anon', '1s'])
  t.same(reset, {
    code: 0,
    stderr: '',
    stdout: [
      `Timeouts of ${ref} (on the next request)`,
      'anon statements             1s',
      'authenticated statements    8s (default)',
      'service_role statements     1min (default)',
      'idle in transaction         10s (default)',
      '',
    ].join('\n'),
  })
  t.same(await seen(), { anon: '1s 10s', authenticated: '8s 10s', service_role: '1min 10s' })
  t.same((await baseplane(['projects', 'timeouts', ref, '--reset'])).code, 0)
})

t.test('wrong command lines: one line naming the problem, nothing saved', async (t) => {
  const usage = '(usage: baseplane projects timeouts REF [--anon 3s] [--authenticated 8s] [--service-role 60s] [--idle-in-transaction 10s] [--reset])'
  const duration = 'a duration such as 500ms, 3s, 2m or 1h (0: no limit)'
  const cases: Array<[string[], number, string]> = [
    [['projects', 'timeouts'], 2, `baseplane: missing REF ${usage}\n`],
    [['projects', 'timeouts', ref, '--anon'], 2, `baseplane: --anon needs a value ${usage}\n`],
    // A value refused is 1; a command line that is wrong as written is 2.
    [['projects', 'timeouts', ref, '--anon', 'fast'], 1, `baseplane: --anon must be ${duration}, got "fast"\n`],
    [['projects', 'timeouts', ref, '--authenticated', '1.5s'], 1, `baseplane: --authenticated must be ${duration}, got "1.5s"\n`],
    // A bare number was once taken as milliseconds: --anon 5 meant 5 ms.
    [['projects', 'timeouts', ref, '--anon', '5'], 1, 'baseplane: --anon needs a unit, such as 5s or 5ms, got "5"\n'],
    [['projects', 'timeouts', ref, '--service-role', '2h'], 1, 'baseplane: --service-role must be at most 1h (3600000 ms), got "2h"\n'],
    [['projects', 'timeouts', ref, '--idle-in-transaction', '3601s'], 1, 'baseplane: --idle-in-transaction must be at most 1h (3600000 ms), got "3601s"\n'],
    [['projects', 'timeouts', ref, '--statement', '1s'], 2, `baseplane: unknown option --statement for "projects timeouts" ${usage}\n`],
    [['projects', 'timeouts', 'nosuchproject', '--anon', '1s'], 1, 'baseplane: Project "nosuchproject" not found\n'],
  ]
  for (const [args, code, stderr] of cases) {
    const run = await baseplane(args)
    t.same({ code: run.code, stderr: run.stderr, stdout: run.stdout }, { code, stderr, stdout: '' }, args.join(' '))
  }
  t.same(await seen(), { anon: '3s 10s', authenticated: '8s 10s', service_role: '1min 10s' })
})

t.test('the admin API reads and changes them; the next request runs with them', async (t) => {
  const defaults = { ref, anon: 3000, authenticated: 8000, service_role: 60000, idle_in_transaction: 10000, custom: [] }
  const read = await request(admin, { headers: adminHeaders })
  t.same({ status: read.status, body: read.json }, { status: 200, body: defaults })

  const patched = await request(admin, { method: 'PATCH', headers: adminHeaders, body: { authenticated: '2s', idle_in_transaction: 5000 } })
  t.same({ status: patched.status, body: patched.json }, { status: 200, body: { ...defaults, authenticated: 2000, idle_in_transaction: 5000, custom: ['authenticated', 'idle_in_transaction'] } })
  t.same(await seen(), { anon: '3s 5s', authenticated: '2s 5s', service_role: '1min 5s' })

  const back = await request(admin, { method: 'PATCH', headers: adminHeaders, body: { authenticated: null, idle_in_transaction: null, service_role: 0 } })
  t.same({ status: back.status, body: back.json }, { status: 200, body: { ...defaults, service_role: 0, custom: ['service_role'] } })
  t.same(await seen(), { anon: '3s 10s', authenticated: '8s 10s', service_role: '0 10s' })
  await request(admin, { method: 'PATCH', headers: adminHeaders, body: { service_role: null } })
})

t.test('the admin API refuses bad bodies with exact messages and saves nothing', async (t) => {
  const duration = 'a duration such as 500ms, 3s, 2m or 1h (0: no limit)'
  const milliseconds = 'whole milliseconds or a duration such as "3s"'
  const cases: Array<[string, string, unknown, number, string, string]> = [
    ['PATCH', admin, {}, 400, 'invalid_argument', 'Give at least one of anon, authenticated, service_role, idle_in_transaction (null puts one back to its default)'],
    ['PATCH', admin, '{not json', 400, 'bad_json', 'Could not parse request body as JSON'],
    ['PATCH', admin, { statement_timeout: 1000 }, 400, 'invalid_argument', 'Unknown timeout "statement_timeout": use anon, authenticated, service_role, idle_in_transaction'],
    ['PATCH', admin, { anon: 1000, authenticated: 'soon' }, 400, 'invalid_argument', `"authenticated" must be ${duration}, got "soon"`],
    ['PATCH', admin, { anon: 1.5 }, 400, 'invalid_argument', `"anon" must be ${milliseconds}, got 1.5`],
    ['PATCH', admin, { anon: true }, 400, 'invalid_argument', `"anon" must be ${milliseconds}`],
    ['PATCH', admin, { anon: '5' }, 400, 'invalid_argument', '"anon" needs a unit, such as 5s or 5ms, got "5"'],
    ['PATCH', admin, { anon: -1 }, 400, 'invalid_argument', '"anon" must not be negative, got -1'],
    ['PATCH', admin, { service_role: 3_600_001 }, 400, 'invalid_argument', '"service_role" must be at most 1h (3600000 ms), got 3600001'],
    ['PATCH', admin, { idle_in_transaction: '61min' }, 400, 'invalid_argument', '"idle_in_transaction" must be at most 1h (3600000 ms), got "61min"'],
    ['GET', `${platform.origin}/platform/v1/projects/nosuchproject/timeouts`, undefined, 404, 'project_not_found', 'Project "nosuchproject" not found'],
    ['PATCH', `${platform.origin}/platform/v1/projects/nosuchproject/timeouts`, { anon: 1000 }, 404, 'project_not_found', 'Project "nosuchproject" not found'],
    ['PUT', admin, { anon: 1000 }, 405, 'method_not_allowed', `PUT is not allowed on /platform/v1/projects/${ref}/timeouts`],
  ]
  for (const [method, url, body, status, code, message] of cases) {
    const reply = await request(url, { method, headers: adminHeaders, body: body as string | object | undefined })
    t.same({ status: reply.status, body: reply.json }, { status, body: { code, message } }, `${method} ${JSON.stringify(body)}`)
  }
  const after = await request(admin, { headers: adminHeaders })
  t.same(after.json, { ref, anon: 3000, authenticated: 8000, service_role: 60000, idle_in_transaction: 10000, custom: [] }, 'nothing partial was saved')
})

t.test('the catalogue itself refuses malformed overrides, whoever writes them', async (t) => {
  const catalogue = new pg.Client({ connectionString: platform.catalogueUrl })
  await catalogue.connect()
  t.teardown(() => catalogue.end())
  for (const value of [{ anon: '3s' }, { anon: -1 }, { anon: 1.5 }, { anon: null }, { statement: 1 }, []]) {
    await t.rejects(
      catalogue.query('update baseplane.projects set role_timeouts = $2 where ref = $1', [ref, JSON.stringify(value)]),
      { message: 'new row for relation "projects" violates check constraint "projects_role_timeouts_valid"' },
      JSON.stringify(value),
    )
  }
})

t.test('every request transaction sets them: idle in transaction ends the connection', async (t) => {
  const pool = new pg.Pool({ ...apiDatabaseOf(project.record), max: 1 })
  // PostgreSQL ends an idle-in-transaction session with a message the client
  // receives between queries, while the pool has lent it out.
  const ended: string[] = []
  pool.on('connect', (client) => client.on('error', (error) => ended.push(error.message)))
  pool.on('error', () => {})
  t.teardown(() => pool.end())
  const identity: RequestIdentity = { role: 'authenticated', claims: { role: 'authenticated' } }
  const timeouts = { statementTimeoutMs: { anon: 100, authenticated: 200, service_role: 300 }, idleInTransactionTimeoutMs: 300 }
  const settings = await withRequestTransaction(pool, identity, timeouts, async (client) => (await client.query(`select current_setting('statement_timeout') as s, current_setting('idle_in_transaction_session_timeout') as i`)).rows[0])
  t.same(settings, { s: '200ms', i: '300ms' })
  await t.rejects(
    withRequestTransaction(pool, identity, timeouts, async (client) => {
      await new Promise((resolve) => setTimeout(resolve, 1000))
      return client.query('select 1')
    }),
    { message: 'Client has encountered a connection error and is not queryable' },
  )
  t.equal(ended[0], 'terminating connection due to idle-in-transaction timeout', 'the server ended the session')
  const after = await withRequestTransaction(pool, { role: 'anon', claims: { role: 'anon' } }, timeouts, async (client) => (await client.query(`select current_setting('statement_timeout') as s`)).rows[0])
  t.same(after, { s: '100ms' }, 'the pool replaced the ended connection; the next transaction sets its own values')
  await t.rejects(withRequestTransaction(pool, identity, { ...timeouts, idleInTransactionTimeoutMs: -1 }, async () => 1), { message: 'not a timeout in milliseconds: -1' })
})
