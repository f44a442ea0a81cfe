// Quotas by plan (issue 27 item 3), against a running platform: each capped
// quota refuses exactly what would pass its figure, in its service's own
// shape, and writes nothing of it (a new user's sign-in, the platform's mail,
// a push send; writes past the database size, reads still answering), while
// users already active keep signing in and `bill` never refuses; the
// operator's overrides through the admin API and the CLI; the 80% and 100%
// crossings recorded once a month as `quota.crossed` events.
import pg from 'pg'
import t from 'tap'
import { setAuthOptions } from '../../control-plane/auth-settings.ts'
import { listEvents } from '../../control-plane/events.ts'
import { watchQuotas } from '../../control-plane/quotas.ts'
import { sampleDatabaseSizes } from '../../control-plane/usage-upkeep.ts'
import { ownerUrlOf } from '../../lib/catalogue.ts'
import { signJwt } from '../../lib/jwt.ts'
import { adminUrlFor } from '../../lib/db/server-url.ts'
import { syncPushSettings } from '../../workers/push/face.ts'
import { authFixture, call, projectSql, type AuthFixture } from '../auth/helpers.ts'
import { runCli } from '../helpers/cli.ts'
import { adminQuery, serverUrl } from '../helpers/db.ts'
import { request } from '../helpers/http.ts'
import { startTestPlatform } from '../helpers/platform.ts'

interface QuotaBody {
  policy: string
  figures: Record<string, number | null>
  used: Record<string, number | null>
  overrides: Record<string, unknown>
  read_only: boolean
  code?: string
  message?: string
}

function quotasApi(origin: string, adminToken: string | undefined, ref: string) {
  return (method: 'GET' | 'PATCH', body?: object) =>
    request<QuotaBody>(`${origin}/platform/v1/projects/${ref}/quotas`, { method, headers: { authorization: `Bearer ${adminToken}` }, body })
}

const password = 'a fine password 123'
const signUp = (f: AuthFixture, email: string) => call(f, 'POST', '/signup', { email, password })
const signIn = (f: AuthFixture, email: string) => call(f, 'POST', '/token?grant_type=password', { email, password })

t.test('monthly active users: a capped project refuses a new user past its figure, existing users keep signing in', async (t) => {
  const f = await authFixture(t, {}, { mailer_autoconfirm: true })
  const quotas = quotasApi(f.test.origin, f.test.config.adminToken, f.project.ref)
  const set = await quotas('PATCH', { monthly_active_users: 2 })
  t.equal(set.status, 200, set.text)
  t.same([set.json.policy, set.json.figures.monthly_active_users], ['cap', 2], 'the free plan caps; the figure is the override')

  for (const email of ['one@example.test', 'two@example.test']) {
    const reply = await signUp(f, email)
    t.equal(reply.status, 200, `${email} signs up and is signed in`)
    t.type(reply.body.access_token, 'string')
  }
  const third = await signUp(f, 'three@example.test')
  t.equal(third.status, 403, 'the third new user is refused')
  t.equal(third.body.error_code ?? third.body.code, 'quota_exceeded')
  t.match(third.body.msg ?? third.body.message, /monthly quota of 2 monthly active users; it resets on \d{4}-\d{2}-01 \(UTC\)/, 'naming the quota, its figure and when it resets')
  const kept = await projectSql<{ n: number }>(f, `select count(*)::int as n from auth.users where email = 'three@example.test'`)
  t.equal(kept.rows[0]!.n, 0, 'nothing of the refused sign-up is kept')

  const again = await signIn(f, 'one@example.test')
  t.equal(again.status, 200, 'a user already active this month signs in again')
  const refreshed = await call(f, 'POST', '/token?grant_type=refresh_token', { refresh_token: again.body.refresh_token })
  t.equal(refreshed.status, 200, 'and refreshes')

  // Concurrent new users at the figure: none passes it.
  await quotas('PATCH', { monthly_active_users: 4 })
  const burst = await Promise.all(['a', 'b', 'c', 'd', 'e'].map((name) => signUp(f, `${name}@example.test`)))
  const statuses = burst.map((reply) => reply.status).sort()
  t.same(statuses, [200, 200, 403, 403, 403], 'five at once with two places left: exactly two admitted')
  const counted = await projectSql<{ users: number }>(f, 'select users from auth.monthly_active_user_counts')
  t.equal(counted.rows[0]?.users, 4, 'the count stops at the figure')

  const billed = await quotas('PATCH', { policy: 'bill' })
  t.equal(billed.json.policy, 'bill')
  const paid = await signUp(f, 'billed@example.test')
  t.equal(paid.status, 200, 'under bill a user past the figure is served (and counted)')
})

t.test('mail: a capped project refuses the platform mail past its figure, and the sign-up that needed it', async (t) => {
  const f = await authFixture(t)
  const quotas = quotasApi(f.test.origin, f.test.config.adminToken, f.project.ref)
  t.equal((await quotas('PATCH', { mail_sent: 1 })).status, 200)
  const first = await signUp(f, 'mailed@example.test')
  t.equal(first.status, 200, 'the first confirmation mail goes out')
  const second = await signUp(f, 'unmailed@example.test')
  t.equal(second.status, 403, 'the second would pass the mail quota')
  t.match(second.body.msg ?? second.body.message, /monthly quota of 1 auth mail sent/)
  const users = await projectSql<{ email: string }>(f, 'select email from auth.users order by email')
  t.same(users.rows.map((row) => row.email), ['mailed@example.test'], 'the refused sign-up wrote nothing')
  await setAuthOptions(f.test.platform.controlPlane, f.project.ref, {})
  t.equal((await quotas('PATCH', { mail_sent: 'unlimited' })).json.figures.mail_sent, null, '"unlimited" lifts it')
  t.equal((await signUp(f, 'unmailed@example.test')).status, 200, 'and the mail goes out')
})

t.test('push deliveries: a send past the figure is refused whole, from the API and from SQL', async (t) => {
  const platform = await startTestPlatform(t)
  const project = await platform.createProject({ push: true })
  const quotas = quotasApi(platform.origin, platform.config.adminToken, project.ref)
  t.equal((await quotas('PATCH', { push_deliveries: 3 })).status, 200)
  const sub = crypto.randomUUID()
  const userToken = await signJwt(project.record.jwtSecret, { sub, role: 'authenticated', aud: 'authenticated', exp: Math.floor(Date.now() / 1000) + 600 })
  const api = (method: string, path: string, headers: Record<string, string>, body?: object) =>
    request<Record<string, unknown>>(`${project.baseUrl}/push/v1${path}`, { method, headers, body })
  for (const token of ['ab', 'cd']) {
    const device = await api('POST', '/devices', { apikey: project.anonKey, authorization: `Bearer ${userToken}` }, { platform: 'apns', token: token.repeat(32) })
    t.equal(device.status, 201, device.text)
  }
  const asService = { apikey: project.serviceRoleKey }
  const projectDb = adminUrlFor(await serverUrl(), project.record.dbName)
  const queued = async () => (await adminQuery<{ n: number }>(projectDb, 'select count(*)::int as n from push.messages')).rows[0]!.n

  t.equal((await api('POST', '/messages', asService, { user_id: sub, title: 'two deliveries' })).status, 201, '2 of 3')
  const past = await api('POST', '/messages', asService, { user_id: sub, title: 'two more' })
  t.equal(past.status, 403, 'two more would make 4: refused')
  t.equal(past.json.code, 'quota_exceeded')
  t.match(past.json.message, /monthly quota of 3 push deliveries: this send would make 4\. It resets on \d{4}-\d{2}-01/)
  t.equal(await queued(), 1, 'nothing of the refused send is kept')
  const bySql = adminQuery(projectDb, `insert into push.messages (user_id, title) values ($1, 'from SQL')`, [sub])
  await t.rejects(bySql, { code: 'BPS02' }, 'an insert from SQL is refused the same way')

  t.equal((await quotas('PATCH', { policy: 'bill' })).status, 200)
  t.equal((await api('POST', '/messages', asService, { user_id: sub, title: 'billed' })).status, 201, 'under bill it is queued')
  const cap = await adminQuery<{ deliveries_cap: string | null }>(projectDb, 'select deliveries_cap from push.settings')
  t.equal(cap.rows[0]!.deliveries_cap, null, 'and the database holds no cap')
  // A push worker or sender that saw the project before the change writes what it saw, late: it is ignored.
  const stale = new pg.Client({ connectionString: projectDb })
  await stale.connect()
  t.teardown(() => stale.end())
  t.equal(await syncPushSettings(stale, { plan: project.record.plan, deliveriesCap: 3, version: project.record.version }), false, 'an older catalogue version writes nothing')
  const still = await adminQuery<{ deliveries_cap: string | null }>(projectDb, 'select deliveries_cap from push.settings')
  t.equal(still.rows[0]!.deliveries_cap, null, 'the lifted cap stays lifted')
  t.equal((await api('POST', '/messages', asService, { user_id: sub, title: 'billed again' })).status, 201)
})

t.test('database size: past the cap the API roles and the owner read but do not write; notices are recorded once', async (t) => {
  const platform = await startTestPlatform(t)
  const project = await platform.createProject({})
  const controlPlane = platform.platform.controlPlane
  const ownerUrl = ownerUrlOf(project.record)
  // The owner's table: the API roles get it by the default privileges, as on Supabase.
  await adminQuery(ownerUrl, 'create table public.notes (id serial primary key, body text)')
  const graphql = (query: string) =>
    request<{ data: Record<string, unknown> | null; errors?: Array<{ message: string }> }>(`${project.baseUrl}/graphql/v1`, {
      method: 'POST',
      headers: { apikey: project.serviceRoleKey },
      body: { query },
    })
  const insert = 'mutation { insertIntonotesCollection(objects: [{body: "x"}]) { affectedCount } }'
  t.same((await graphql(insert)).json.errors, undefined, 'writable before')

  const quotas = quotasApi(platform.origin, platform.config.adminToken, project.ref)
  t.equal((await quotas('PATCH', { database_size_bytes: '1MB' })).status, 200)
  t.ok((await sampleDatabaseSizes(controlPlane)) >= 1, 'sizes sampled')
  const watched = await watchQuotas(controlPlane)
  t.same(watched.readOnly, [project.ref], 'the project is made read-only')
  t.same(
    watched.notices.filter((n) => n.ref === project.ref).map((n) => [n.quota, n.percent]),
    [['database_size_bytes', 80], ['database_size_bytes', 100]],
    '80% and 100% crossed',
  )
  const view = await quotas('GET')
  t.equal(view.json.read_only, true)
  t.ok(view.json.used.database_size_bytes! > 1024 * 1024, 'the view shows the sampled size')

  const refused = await graphql(insert)
  t.equal(refused.json.data, null)
  t.match(refused.json.errors?.[0]?.message, /database has reached its size quota of 1 MB, so it is read-only/, 'a write is refused with the quota')
  const read = await graphql('{ notesCollection { edges { node { body } } } }')
  t.same(read.json.errors, undefined, 'a read answers')
  t.same(read.json.data, { notesCollection: { edges: [{ node: { body: 'x' } }] } })
  const owner = new pg.Client({ connectionString: ownerUrl })
  owner.on('error', () => {})
  await owner.connect()
  await t.rejects(owner.query(`insert into public.notes (body) values ('owner')`), { code: '25006' }, "the owner's connections are read-only by default")
  await owner.query('set default_transaction_read_only = off')
  await owner.query(`delete from public.notes`)
  t.pass('and the owner may turn it off in a session to delete what is too much')
  await owner.end()

  const again = await watchQuotas(controlPlane)
  t.same(again.notices.filter((n) => n.ref === project.ref), [], 'a second watch records nothing new')
  const events = await listEvents(controlPlane, { project: project.ref, kind: 'quota.crossed' })
  t.same(events.events.map((e) => (e.data as { percent: number }).percent).sort(), [100, 80], 'each crossing is one quota.crossed event')
  t.match(events.events[0]!.data, { quota: 'database_size_bytes', figure: 1024 * 1024, policy: 'cap' })

  t.equal((await quotas('PATCH', { database_size_bytes: null })).json.figures.database_size_bytes, 500 * 1024 * 1024, "null: the plan's again")
  t.same((await watchQuotas(controlPlane)).writable, [project.ref], 'under the figure: writable again')
  t.same((await graphql(insert)).json.errors, undefined, 'writes answer again')
})

t.test('overrides refused whole with the field named; the CLI shows and sets them', async (t) => {
  const platform = await startTestPlatform(t)
  const project = await platform.createProject({ plan: 'pro' })
  const quotas = quotasApi(platform.origin, platform.config.adminToken, project.ref)
  const plan = await quotas('GET')
  t.equal(plan.status, 200, plan.text)
  t.same([plan.json.policy, plan.json.figures.monthly_active_users, plan.json.overrides], ['bill', 250000, {}], "the plan's quotas, no overrides")
  const bad = [
    [{ policy: 'sometimes' }, 'policy'],
    [{ monthly_active_users: -1 }, 'monthly_active_users'],
    [{ database_size_bytes: '12 parsecs' }, 'database_size_bytes'],
    [{ seats: 3 }, 'seats'],
  ] as const
  for (const [body, field] of bad) {
    // With a valid change beside it: the whole body is refused.
    const reply = await quotas('PATCH', { ...body, mail_sent: 5 })
    t.equal(reply.status, 400, `${JSON.stringify(body)} refused`)
    t.equal(reply.json.code, 'invalid_argument')
    t.match(reply.json.message, field, `naming ${field}`)
  }
  t.equal((await quotas('PATCH', {})).status, 400, 'an empty change is refused')
  t.same((await quotas('GET')).json.overrides, {}, 'nothing of a refused change was saved')

  const shown = await runCli(['projects', 'quotas', project.ref, '--policy', 'cap', '--active-users', '10', '--database-size', '2GB'], { DATABASE_URL: platform.catalogueUrl })
  t.equal(shown.code, 0, shown.stderr)
  t.match(shown.stdout, /cap: what would pass a figure is refused, set for this project/)
  t.match(shown.stdout, /monthly active users\s+10 \(this project\)/)
  t.match(shown.stdout, /database size\s+2 GB \(this project\)/)
  const view = (await quotas('GET')).json
  t.same(view.overrides, { policy: 'cap', figures: { monthly_active_users: 10, database_size_bytes: 2 * 1024 ** 3 } })
  const refused = await runCli(['projects', 'quotas', project.ref, '--mail', 'lots'], { DATABASE_URL: platform.catalogueUrl })
  t.not(refused.code, 0)
  t.match(refused.stderr, /--mail must be a whole number/)
})
