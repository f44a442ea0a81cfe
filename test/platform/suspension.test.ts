// Suspension (issue 27 item 4), through a running platform: every service of a
// suspended project answers 403 project_suspended in its own refusal shape
// (GoTrue's for Auth, as the real supabase-js reads it), the operator's reason
// reaches operators only, its login roles are refused and hold no session,
// and resuming brings everything back with the data intact. Every refused
// operation writes nothing (no state change, no event).
import pg from 'pg'
import t from 'tap'
import { createClient } from '@supabase/supabase-js'
import { ownerUrlOf } from '../../lib/catalogue.ts'
import { setAuthOptions } from '../../control-plane/auth-settings.ts'
import { request, type ErrorBody } from '../helpers/http.ts'
import { adminQuery, serverUrl } from '../helpers/db.ts'
import { startTestPlatform } from '../helpers/platform.ts'

const REASON = 'Unpaid invoice 2026-0042'

const platform = await startTestPlatform(t)
const project = await platform.createProject({ name: 'Suspended Shop', auth: true, push: true })
await setAuthOptions(platform.platform.controlPlane, project.ref, { mailer_autoconfirm: true })
const admin = (method: string, path: string, body?: object) =>
  request<Record<string, unknown> & ErrorBody>(`${platform.origin}/platform/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${platform.config.adminToken}` },
    body,
  })
const supabase = createClient(project.baseUrl, project.anonKey, { auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false } })
const graphql = () =>
  request<{ data?: { notesCollection: { edges: Array<{ node: { body: string } }> } }; code?: string; message?: string }>(`${project.baseUrl}/graphql/v1`, {
    headers: { apikey: project.serviceRoleKey },
    body: { query: '{ notesCollection { edges { node { body } } } }' },
  })
const push = () => request<ErrorBody>(`${project.baseUrl}/push/v1/devices`, { headers: { apikey: project.serviceRoleKey } })
const eventKinds = async () =>
  (await adminQuery<{ kind: string }>(platform.catalogueUrl, 'select kind from baseplane.events where ref = $1 order by id', [project.ref])).rows.map((r) => r.kind)
const apiSessions = async () =>
  (await adminQuery<{ n: number }>(await serverUrl(), 'select count(*)::int as n from pg_stat_activity where usename = any($1)', [[project.record.dbApiRole, project.record.dbOwnerRole]])).rows[0]!.n

const owner = new pg.Client({ connectionString: ownerUrlOf(project.record) })
await owner.connect()
await owner.query('create table public.notes (id serial primary key, body text not null)')
await owner.query(`insert into public.notes (body) values ('kept through the suspension')`)
await owner.end()

t.test('before: every service answers', async (t) => {
  const signUp = await supabase.auth.signUp({ email: 'ada@example.com', password: 'correct horse battery' })
  t.equal(signUp.error, null)
  const query = await graphql()
  t.equal(query.status, 200, query.text)
  t.same(query.json.data?.notesCollection.edges.map((e) => e.node.body), ['kept through the suspension'])
  t.equal((await push()).status, 200)
  t.ok((await apiSessions()) > 0, 'the data plane holds connections to the project')
})

t.test('bad input is refused and writes nothing', async (t) => {
  const before = await eventKinds()
  const missing = await admin('POST', `/projects/${project.ref}/suspend`, {})
  t.equal(missing.status, 400)
  t.equal(missing.json.code, 'invalid_argument')
  t.match(missing.json.message, /^reason is required/)
  const blank = await admin('POST', `/projects/${project.ref}/suspend`, { reason: '   ' })
  t.equal(blank.status, 400)
  t.match(blank.json.message, /reason/)
  const tooLong = await admin('POST', `/projects/${project.ref}/suspend`, { reason: 'x'.repeat(501) })
  t.equal(tooLong.status, 400)
  const unknown = await admin('POST', '/projects/nosuchproject/suspend', { reason: REASON })
  t.same([unknown.status, unknown.json.code], [404, 'project_not_found'])
  const unknownResume = await admin('POST', '/projects/nosuchproject/resume')
  t.same([unknownResume.status, unknownResume.json.code], [404, 'project_not_found'])
  const notSuspended = await admin('POST', `/projects/${project.ref}/resume`)
  t.same([notSuspended.status, notSuspended.json.code], [409, 'project_not_suspended'])
  t.match(notSuspended.json.message, `Project ${project.ref} is neither suspended nor paused`)
  const shown = await admin('GET', `/projects/${project.ref}`)
  t.match(shown.json, { state: 'active', state_reason: null })
  t.same(await eventKinds(), before, 'no event')
  t.equal((await graphql()).status, 200, 'still answering')
})

t.test('suspended: one clear refusal per service, in its own shape, without the reason', async (t) => {
  const suspended = await admin('POST', `/projects/${project.ref}/suspend`, { reason: REASON })
  t.equal(suspended.status, 200, suspended.text)
  t.match(suspended.json, { ref: project.ref, state: 'suspended', state_reason: REASON, state_changed_at: String })

  // Auth, as the real client sees it: GoTrue's error with its code.
  const signIn = await supabase.auth.signInWithPassword({ email: 'ada@example.com', password: 'correct horse battery' })
  t.equal(signIn.data.session, null)
  t.equal(signIn.error?.status, 403)
  t.equal(signIn.error?.code, 'project_suspended')
  t.equal(signIn.error?.message, 'This project is suspended; its operator can resume it')
  const raw = await request<Record<string, unknown>>(`${project.baseUrl}/auth/v1/settings`, { headers: { apikey: project.anonKey } })
  t.equal(raw.status, 403)
  t.same(raw.json, { code: 403, error_code: 'project_suspended', msg: 'This project is suspended; its operator can resume it' }, "GoTrue's shape")
  t.equal(raw.headers['x-sb-error-code'], 'project_suspended')
  t.notOk(raw.headers['retry-after'], 'no Retry-After: retrying does not help')
  const versioned = await request<Record<string, unknown>>(`${project.baseUrl}/auth/v1/settings`, { headers: { apikey: project.anonKey, 'x-supabase-api-version': '2024-01-01' } })
  t.same(versioned.json, { code: 'project_suspended', message: 'This project is suspended; its operator can resume it' }, "GoTrue's versioned shape")

  const query = await graphql()
  t.equal(query.status, 403)
  t.same(query.json, { code: 'project_suspended', message: 'This project is suspended; its operator can resume it' }, "the platform's shape, as GraphQL's other refusals before a document runs")
  const sent = await push()
  t.equal(sent.status, 403)
  t.same(sent.json, { code: 'project_suspended', message: 'This project is suspended; its operator can resume it' })
  const health = await request(`${project.baseUrl}/health`, { headers: { apikey: project.anonKey } })
  t.equal(health.status, 403, 'any other project path too')
  for (const answer of [raw, versioned, query, sent, health]) t.notMatch(answer.text, /invoice/i, 'the reason is not shown to callers')

  const noKey = await request<ErrorBody>(`${project.baseUrl}/graphql/v1`, { body: { query: '{ __typename }' } })
  t.same([noKey.status, noKey.json.code], [401, 'no_api_key'], 'a caller without the key learns nothing more')
})

t.test('suspended: the operator sees the state and the reason', async (t) => {
  const shown = await admin('GET', `/projects/${project.ref}`)
  t.match(shown.json, { state: 'suspended', state_reason: REASON })
  const listed = await admin('GET', '/projects')
  t.match(listed.json, [{ ref: project.ref, state: 'suspended', state_reason: REASON }])
  const again = await admin('POST', `/projects/${project.ref}/suspend`, { reason: 'another reason' })
  t.same([again.status, again.json.code], [409, 'project_already_suspended'])
  t.match((await admin('GET', `/projects/${project.ref}`)).json, { state_reason: REASON }, 'the first reason stays')
  t.same(await eventKinds(), ['project.created', 'project.suspended'], 'one event for the suspension, none for the refusal')
})

t.test('suspended: its login roles are refused and hold no session', async (t) => {
  const refused = new pg.Client({ connectionString: ownerUrlOf(project.record) })
  refused.on('error', () => {})
  const error = await refused.connect().then(
    () => undefined,
    (e: unknown) => e as { code?: string; message: string },
  )
  await refused.end().catch(() => {})
  t.equal(error?.code, '28000', 'the owner cannot log in')
  t.match(error?.message, /not permitted to log in/)
  const roles = await adminQuery<{ rolname: string; rolcanlogin: boolean }>(await serverUrl(), 'select rolname, rolcanlogin from pg_roles where rolname = any($1) order by rolname', [
    [project.record.dbApiRole, project.record.dbOwnerRole],
  ])
  t.same(roles.rows.map((r) => r.rolcanlogin), [false, false], 'both login roles are NOLOGIN')
  t.equal(await apiSessions(), 0, 'the pools and the push actor hold no connection')
})

t.test('resumed: everything answers again, the data intact', async (t) => {
  const resumed = await admin('POST', `/projects/${project.ref}/resume`)
  t.equal(resumed.status, 200, resumed.text)
  t.match(resumed.json, { state: 'active', state_reason: null })
  const signIn = await supabase.auth.signInWithPassword({ email: 'ada@example.com', password: 'correct horse battery' })
  t.equal(signIn.error, null)
  t.equal(signIn.data.user?.email, 'ada@example.com', 'the user signed up before is still there')
  const query = await graphql()
  t.equal(query.status, 200, query.text)
  t.same(query.json.data?.notesCollection.edges.map((e) => e.node.body), ['kept through the suspension'])
  t.equal((await push()).status, 200)
  const ownerAgain = new pg.Client({ connectionString: ownerUrlOf(project.record) })
  await ownerAgain.connect()
  t.same((await ownerAgain.query('select count(*)::int as n from public.notes')).rows, [{ n: 1 }])
  await ownerAgain.end()
  t.same(await eventKinds(), ['project.created', 'project.suspended', 'project.resumed'])
  const resumedEvent = await adminQuery<{ data: unknown }>(platform.catalogueUrl, `select data from baseplane.events where ref = $1 and kind = 'project.resumed'`, [project.ref])
  t.same(resumedEvent.rows[0]!.data, { from: 'suspended', by: 'operator' })
})
