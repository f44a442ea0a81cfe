// The pause of idle free projects (issue 27 item 4), with an idle time of
// three seconds (BASEPLANE_PAUSE_IDLE_DAYS takes fractions of a day): requests
// keep a project awake; once idle it is paused by the sweep (free plan only,
// one node at a time); its first request wakes it when the fleet allows it
// (and is answered normally), and is refused with project_paused when not.
import pg from 'pg'
import t from 'tap'
import { createClient } from '@supabase/supabase-js'
import { ownerUrlOf } from '../../lib/catalogue.ts'
import { pauseIdleProjects } from '../../control-plane/pause-sweep.ts'
import { connectClient } from '../helpers/db.ts'
import { eventually } from '../helpers/eventually.ts'
import { request, type ErrorBody } from '../helpers/http.ts'
import { startTestPlatform, type TestPlatform, type TestProject } from '../helpers/platform.ts'
import { adminQuery, serverUrl } from '../helpers/db.ts'

/** Three seconds, in days. */
const IDLE_DAYS = String(3 / 86400)

function helpers(platform: TestPlatform) {
  const admin = (method: string, path: string) =>
    request<Record<string, unknown> & ErrorBody>(`${platform.origin}/platform/v1${path}`, { method, headers: { authorization: `Bearer ${platform.config.adminToken}` } })
  const state = async (ref: string) => (await admin('GET', `/projects/${ref}`)).json.state
  const events = async (ref: string) =>
    (await adminQuery<{ kind: string; data: Record<string, unknown> }>(platform.catalogueUrl, 'select kind, data from baseplane.events where ref = $1 order by id', [ref])).rows
  return { admin, state, events }
}

async function withNotes(project: TestProject): Promise<void> {
  const owner = new pg.Client({ connectionString: ownerUrlOf(project.record) })
  await owner.connect()
  await owner.query('create table public.notes (id serial primary key, body text not null)')
  await owner.query(`insert into public.notes (body) values ('still here')`)
  await owner.end()
}

const graphql = (project: TestProject) =>
  request<{ data?: { notesCollection: { edges: Array<{ node: { body: string } }> } }; code?: string; message?: string }>(`${project.baseUrl}/graphql/v1`, {
    headers: { apikey: project.anonKey },
    body: { query: '{ notesCollection { edges { node { body } } } }' },
  })

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

t.test('woken by its first request when the fleet allows it', async (t) => {
  const platform = await startTestPlatform(t, { BASEPLANE_PAUSE_IDLE_DAYS: IDLE_DAYS, BASEPLANE_WAKE_ON_REQUEST: 'true' })
  const { state, events } = helpers(platform)
  const free = await platform.createProject({ name: 'Idle Free' })
  const paid = await platform.createProject({ name: 'Idle Plus', plan: 'plus' })
  await withNotes(free)

  // Requests every half second for twice the idle time keep it awake.
  for (const until = Date.now() + 6000; Date.now() < until; await sleep(500)) {
    const answer = await graphql(free)
    t.equal(answer.status, 200, 'answered while in use')
  }
  t.equal(await state(free.ref), 'active', 'a project in use is not paused')

  await eventually('the idle free project to be paused', 15000, async () => (await state(free.ref)) === 'paused')
  t.equal(await state(paid.ref), 'active', 'a project on a paid plan is never paused')
  const paused = (await events(free.ref)).find((e) => e.kind === 'project.paused')
  t.match(paused?.data, { idle_days: Number(IDLE_DAYS), last_request_at: String })
  const roles = await adminQuery<{ rolcanlogin: boolean }>(await serverUrl(), 'select rolcanlogin from pg_roles where rolname = any($1)', [[free.record.dbApiRole, free.record.dbOwnerRole]])
  t.same(roles.rows.map((r) => r.rolcanlogin), [false, false], 'its login roles are refused')

  const started = Date.now()
  const answers = await Promise.all([graphql(free), graphql(free), graphql(free)])
  const took = Date.now() - started
  for (const answer of answers) {
    t.equal(answer.status, 200, answer.text)
    t.same(answer.json.data?.notesCollection.edges.map((e) => e.node.body), ['still here'], 'answered normally, its data intact')
  }
  t.ok(took < 10000, `within the wake bound (BASEPLANE_WAKE_WAIT_MS, 10 s): ${took} ms`)
  const resumed = (await events(free.ref)).filter((e) => e.kind === 'project.resumed')
  t.same(resumed.map((e) => e.data), [{ from: 'paused', by: 'request' }], 'woken once for the requests that arrived together')

})

t.test('refused with project_paused when the fleet does not wake on request; one sweeper at a time', async (t) => {
  const platform = await startTestPlatform(t, { BASEPLANE_PAUSE_IDLE_DAYS: IDLE_DAYS })
  const { admin, state, events } = helpers(platform)
  const lock = await connectClient(platform.catalogueUrl)
  t.teardown(() => lock.end())
  // Another "node" holds the sweep's lock: nobody else pauses meanwhile.
  await lock.query(`select pg_advisory_lock(hashtext('baseplane.pause_sweep'))`)
  const free = await platform.createProject({ name: 'Idle Free' })
  await withNotes(free)
  await sleep(5000)
  t.same(await pauseIdleProjects(platform.platform.controlPlane, 3000), [], 'a sweep while another node sweeps does nothing')
  t.equal(await state(free.ref), 'active', 'idle past the threshold, but the sweeper is busy elsewhere')
  await lock.query(`select pg_advisory_unlock(hashtext('baseplane.pause_sweep'))`)
  await eventually('the idle free project to be paused', 10000, async () => (await state(free.ref)) === 'paused')

  const refused = await graphql(free)
  t.equal(refused.status, 403)
  t.same(refused.json, { code: 'project_paused', message: 'This project is paused after a time without requests; its operator can resume it' })
  const signUp = await createClient(free.baseUrl, free.anonKey, { auth: { persistSession: false } }).auth.signUp({ email: 'a@example.com', password: 'correct horse battery' })
  t.equal(signUp.error?.status, 403)
  t.equal(signUp.error?.code, 'project_paused', "Auth answers in GoTrue's shape")
  t.equal(await state(free.ref), 'paused', 'a request does not wake it')

  const resumed = await admin('POST', `/projects/${free.ref}/resume`)
  t.equal(resumed.status, 200, resumed.text)
  const answer = await graphql(free)
  t.equal(answer.status, 200)
  t.same(answer.json.data?.notesCollection.edges.map((e) => e.node.body), ['still here'])
  t.match(
    (await events(free.ref)).map((e) => [e.kind, e.data]),
    [
      ['project.created', {}],
      ['project.paused', {}],
      ['project.resumed', { from: 'paused', by: 'operator' }],
    ],
  )
})
