// Every failure answers 503 with Retry-After, never 500 (issue 24, item 7), and
// a project's /health reports its database (item 2): while the catalogue
// refuses connections, every service answers in its own shape, the admin API
// in {code, message}, the dashboard with an HTML page; while a project's
// database is missing, the same for that project. Each incident is logged
// once (and its end once), not once per request.
import { escapeIdentifier } from 'pg'
import t from 'tap'
import { logLevel, setLogLevel } from '../../lib/log.ts'
import { adminQuery, serverUrl } from '../helpers/db.ts'
import { request, type Reply } from '../helpers/http.ts'
import { startTestPlatform } from '../helpers/platform.ts'
import { eventually } from '../helpers/eventually.ts'

const platform = await startTestPlatform(t)
const admin = await serverUrl()
const catalogue = new URL(platform.catalogueUrl).pathname.slice(1)
const adminHeaders = { authorization: `Bearer ${platform.config.adminToken}` }

/** The main thread's log lines (the worker threads log at the test config's level: silent). */
const lines: Array<{ level: string; message: string; [field: string]: unknown }> = []
const write = process.stderr.write.bind(process.stderr)
const previousLevel = logLevel()
setLogLevel('info')
process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
  const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8')
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue
    try {
      lines.push(JSON.parse(line))
      continue
    } catch {}
  }
  if (process.env.FAILURE_TEST_LOG) return (write as (...args: unknown[]) => boolean)(chunk, ...rest)
  return true
}) as typeof process.stderr.write
t.teardown(() => {
  process.stderr.write = write
  setLogLevel(previousLevel)
})
const logged = (pattern: RegExp) => lines.filter((line) => pattern.test(line.message))

async function signIn(): Promise<string> {
  const reply = await request(`${platform.origin}/dashboard/login`, {
    method: 'POST',
    headers: { origin: platform.origin, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: platform.config.adminToken! }).toString(),
  })
  const cookie = String(reply.headers['set-cookie'] ?? '').split(';')[0]!
  if (reply.status !== 303 || !cookie) throw new Error(`dashboard sign-in answered ${reply.status}`)
  return cookie
}

const answer = (reply: Reply) => ({
  status: reply.status,
  retryAfter: reply.headers['retry-after'],
  code: reply.headers['x-sb-error-code'],
  body: reply.json,
})

t.test('the catalogue refuses connections: 503 with Retry-After everywhere, one log line, then back', async (t) => {
  const project = await platform.createProject({ name: 'uncached', auth: true, push: true })
  const cookie = await signIn()
  const anon = { apikey: project.anonKey }
  const setAllow = (allow: boolean) => adminQuery(admin, `alter database ${escapeIdentifier(catalogue)} allow_connections ${allow}`)
  await setAllow(false)
  t.teardown(() => setAllow(true))
  // The platform's open connections end too (as a restart of the server would end them).
  await adminQuery(admin, `select pg_terminate_backend(pid) from pg_stat_activity where datname = $1`, [catalogue])
  const before = lines.length

  const auth = await request(`${project.baseUrl}/auth/v1/health`, { headers: anon })
  t.same(answer(auth), {
    status: 503,
    retryAfter: '2',
    code: 'catalogue_unavailable',
    body: { code: 503, error_code: 'catalogue_unavailable', msg: 'The platform catalogue is unavailable; try again shortly' },
  }, 'Auth: GoTrue\'s shape')
  const versioned = await request(`${project.baseUrl}/auth/v1/health`, { headers: { ...anon, 'x-supabase-api-version': '2024-01-01' } })
  t.same(answer(versioned).body, { code: 'catalogue_unavailable', message: 'The platform catalogue is unavailable; try again shortly' }, 'GoTrue\'s versioned shape')
  const platformShape = { code: 'catalogue_unavailable', message: 'The platform catalogue is unavailable; try again shortly' }
  const graphql = await request(`${project.baseUrl}/graphql/v1`, { method: 'POST', headers: anon, body: { query: '{ __typename }' } })
  t.same(answer(graphql), { status: 503, retryAfter: '2', code: 'catalogue_unavailable', body: platformShape }, 'GraphQL: its refusal shape')
  const push = await request(`${project.baseUrl}/push/v1/devices`, { headers: anon })
  t.same(answer(push), { status: 503, retryAfter: '2', code: 'catalogue_unavailable', body: platformShape }, 'Push')
  const rest = await request(`${project.baseUrl}/rest/v1/`, { headers: anon })
  t.equal(rest.status, 503, 'the data API')
  t.equal(rest.headers['retry-after'], '2')
  const health = await request(`${project.baseUrl}/health`, { headers: anon })
  t.same(answer(health), { status: 503, retryAfter: '2', code: 'catalogue_unavailable', body: platformShape }, 'the project\'s /health')

  const listed = await request(`${platform.origin}/platform/v1/projects`, { headers: adminHeaders })
  t.equal(listed.status, 503, 'admin API')
  t.equal(listed.headers['retry-after'], '2')
  t.match(listed.json, { code: 'database_unavailable', message: String })
  const one = await request(`${platform.origin}/platform/v1/projects/${project.ref}/push/devices`, { headers: adminHeaders })
  t.equal(one.status, 503, 'admin API push route')

  const page = await request(`${platform.origin}/dashboard/projects/${project.ref}/users`, { headers: { cookie } })
  t.equal(page.status, 503, 'dashboard')
  t.equal(page.headers['retry-after'], '2')
  t.match(page.headers['content-type'], /^text\/html/)
  t.match(page.text, /try again/i)

  // Many requests of one incident: one line each for the data plane, the admin API and the dashboard.
  await Promise.all(Array.from({ length: 20 }, () => request(`${project.baseUrl}/auth/v1/health`, { headers: anon })))
  await Promise.all(Array.from({ length: 5 }, () => request(`${platform.origin}/platform/v1/projects`, { headers: adminHeaders })))
  await Promise.all(Array.from({ length: 5 }, () => request(`${platform.origin}/dashboard/projects/${project.ref}/users`, { headers: { cookie } })))
  const during = lines.slice(before)
  // Not counted here: the throttle's sync failure (once per incident, with its stack) and the
  // directory's listener retrying (data-plane/throttle.ts, project-directory.ts log their own).
  const stacks = during.filter((line) => line.stack !== undefined && !/^(the throttle |catalogue listener )/.test(line.message))
  t.same(stacks.map((line) => line.message), [], 'no stack trace')
  t.same(during.filter((line) => /request failed/.test(line.message)), [], 'no line per request')
  t.equal(logged(/^the catalogue is unavailable/).length, 1, 'one line for the project requests')
  t.equal(logged(/^the admin API's database is unavailable/).length, 1, 'one line for the admin API')
  t.equal(logged(/^the dashboard's database is unavailable/).length, 1, 'one line for the dashboard')

  await setAllow(true)
  await eventually('project requests answer again', 15_000, async () => (await request(`${project.baseUrl}/auth/v1/health`, { headers: anon })).status === 200)
  t.equal((await request(`${platform.origin}/platform/v1/projects`, { headers: adminHeaders })).status, 200, 'the admin API answers again')
  t.equal((await request(`${platform.origin}/dashboard/projects/${project.ref}/users`, { headers: { cookie } })).status, 200, 'the dashboard too')
  t.equal(logged(/^the catalogue answers again/).length, 1, 'the end of the incident is logged once')
  t.equal(logged(/^the admin API's database answers again/).length, 1)
  t.equal(logged(/^the dashboard's database answers again/).length, 1)
})

t.test('a project\'s database is missing: every service, the admin API, the dashboard and /health answer 503', async (t) => {
  const project = await platform.createProject({ name: 'missing', auth: true, push: true })
  const cookie = await signIn()
  const database = project.record.dbName
  const anon = { apikey: project.anonKey }
  const service = { apikey: project.serviceRoleKey, authorization: `Bearer ${project.serviceRoleKey}` }
  const healthy = await request<Record<string, unknown>>(`${project.baseUrl}/health`, { headers: anon })
  t.same(answer(healthy), {
    status: 200,
    retryAfter: undefined,
    code: undefined,
    body: { status: 'ok', ref: project.ref, plan: 'free', services: { auth: true, graphql: true, push: true, rest: true, storage: true }, database: 'up' },
  })

  // Renamed away (as a drop would leave it, but recoverable): connecting to its name fails with 3D000.
  const gone = `${database}_gone`
  await adminQuery(admin, `alter database ${escapeIdentifier(database)} allow_connections false`)
  await adminQuery(admin, `select pg_terminate_backend(pid) from pg_stat_activity where datname = $1`, [database])
  await adminQuery(admin, `alter database ${escapeIdentifier(database)} rename to ${escapeIdentifier(gone)}`)
  await adminQuery(admin, `alter database ${escapeIdentifier(gone)} allow_connections true`)
  let restored = false
  const restore = async () => {
    if (restored) return
    restored = true
    await adminQuery(admin, `select pg_terminate_backend(pid) from pg_stat_activity where datname = $1`, [gone])
    await adminQuery(admin, `alter database ${escapeIdentifier(gone)} rename to ${escapeIdentifier(database)}`)
  }
  t.teardown(restore)
  // The project's /health keeps a probe's result for about a second.
  await new Promise((resolve) => setTimeout(resolve, 1100))
  const before = lines.length

  const requests: Array<[string, () => Promise<Reply>]> = [
    ['auth', () => request(`${project.baseUrl}/auth/v1/admin/users`, { headers: service })],
    ['graphql', () => request(`${project.baseUrl}/graphql/v1`, { method: 'POST', headers: anon, body: { query: '{ __typename }' } })],
    ['push', () => request(`${project.baseUrl}/push/v1/devices`, { headers: service })],
    ['rest', () => request(`${project.baseUrl}/rest/v1/`, { headers: anon })],
    ['health', () => request(`${project.baseUrl}/health`, { headers: anon })],
    ['admin push devices', () => request(`${platform.origin}/platform/v1/projects/${project.ref}/push/devices`, { headers: adminHeaders })],
    ['admin push log', () => request(`${platform.origin}/platform/v1/projects/${project.ref}/push/log`, { headers: adminHeaders })],
    ['dashboard users', () => request(`${platform.origin}/dashboard/projects/${project.ref}/users`, { headers: { cookie } })],
    ['dashboard push', () => request(`${platform.origin}/dashboard/projects/${project.ref}/push`, { headers: { cookie } })],
  ]
  for (const [name, send] of requests) {
    const reply = await send()
    t.equal(reply.status, 503, `${name}: 503`)
    t.ok(Number(reply.headers['retry-after']) > 0, `${name}: Retry-After`)
  }
  const health = await request(`${project.baseUrl}/health`, { headers: anon })
  t.same(health.json, { status: 'unavailable', ref: project.ref, database: 'down' }, '/health says the database is down')
  const pushed = await request(`${platform.origin}/platform/v1/projects/${project.ref}/push/devices`, { headers: adminHeaders })
  t.same(pushed.json, { code: 'database_unavailable', message: 'A database this request needs is unavailable; try again shortly' }, 'the admin API\'s shape')
  const page = await request(`${platform.origin}/dashboard/projects/${project.ref}/push`, { headers: { cookie } })
  t.match(page.headers['content-type'], /^text\/html/, 'the dashboard answers a page')

  // Many requests, and /health under load: one probe a second, one line per incident.
  await Promise.all(Array.from({ length: 50 }, () => request(`${project.baseUrl}/health`, { headers: anon })))
  await Promise.all(Array.from({ length: 5 }, () => request(`${platform.origin}/platform/v1/projects/${project.ref}/push/log`, { headers: adminHeaders })))
  const during = lines.slice(before)
  t.same(during.filter((line) => line.stack !== undefined).map((line) => line.message), [], 'no stack trace')
  t.equal(during.filter((line) => /^the database of project .* is unavailable/.test(line.message)).length, 1, 'one line for /health')
  t.equal(during.filter((line) => /^the admin API's database is unavailable/.test(line.message)).length, 1, 'one line for the admin API')
  t.equal(during.filter((line) => /^the dashboard's database is unavailable/.test(line.message)).length, 1, 'one line for the dashboard')
  const probes = await adminQuery<{ n: number }>(admin, `select count(*)::int as n from pg_stat_activity where application_name = 'baseplane health'`)
  t.ok(probes.rows[0]!.n <= 2, 'the probes hold at most a connection or so')

  await restore()
  for (const [name, send] of requests) {
    await eventually(`${name} answers again`, 15_000, async () => (await send()).status === 200)
  }
  const back = await request(`${project.baseUrl}/health`, { headers: anon })
  t.match(back.json, { status: 'ok', database: 'up' }, '/health says the database is up again')
  t.equal(lines.slice(before).filter((line) => /^the database of project .* answers again/.test(line.message)).length, 1)
})
