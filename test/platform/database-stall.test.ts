// A hung database server costs a bounded wait (issue 36 item 2): with a
// project's server stalled (the link keeps bytes, answers nothing, closes
// nothing), every service answers 503 with Retry-After in its own shape on
// the connections it already holds, within the role's statement timeout plus
// the margin (Auth: the platform's own deadline); the neighbour on another
// server is untouched; the stalled connections are destroyed and, once the
// link heals, the project answers again with no more connections than
// before. With the catalogue stalled, the admin API answers 503 within the
// platform's deadline while known projects keep answering.
import t from 'tap'
import { ControlPlane } from '../../control-plane/control-plane.ts'
import { createProject, setProjectProduct } from '../../control-plane/projects.ts'
import { baseUrlOf } from '../../lib/catalogue.ts'
import { DEADLINE_MARGIN_MS, PLATFORM_DEADLINE_MS } from '../../lib/db/round-trip-deadline.ts'
import { startForwarder } from '../../dev/tcp-forwarder.ts'
import { adminQuery, serverUrl } from '../helpers/db.ts'
import { eventually } from '../helpers/eventually.ts'
import { request, type Reply } from '../helpers/http.ts'
import { startTestPlatform } from '../helpers/platform.ts'

/** What a loaded machine may add to a deadline before the answer is read. */
const SLACK_MS = 4000
const platform = await startTestPlatform(t)
const server = await serverUrl()
const admin = `${platform.origin}/platform/v1`
const adminAuth = { authorization: `Bearer ${platform.config.adminToken}` }

// Placed before the second server exists: on the default server, reached directly.
const neighbour = await platform.createProject({ name: 'On the default server' })

// The test's one PostgreSQL server, registered a second time behind a forwarder (as catalogue-away.test.ts does):
// the projects placed there are reached only through the link.
const link = await startForwarder(Number(new URL(server).port))
t.teardown(() => link.close())
await adminQuery(
  platform.catalogueUrl,
  `insert into baseplane.db_servers (id, admin_url, connection_budget, system_identifier) values ('stalling', $1, 100000, 'the test server, through a forwarder')`,
  [link.via(server)],
)

/** Status, Retry-After and how long it took. */
async function timed(send: () => Promise<Reply>): Promise<{ status: number; retryAfter: unknown; ms: number; reply: Reply }> {
  const started = Date.now()
  const reply = await send()
  return { status: reply.status, retryAfter: reply.headers['retry-after'], ms: Date.now() - started, reply }
}

t.test('a stalled project server: every service answers 503 within its deadline, the neighbour is untouched', async (t) => {
  // A control plane whose default server has almost no room places on the roomier one behind the link.
  const placing = await ControlPlane.open(platform.catalogueUrl, { defaultServerBudget: 1 })
  t.teardown(() => placing.close())
  let record = await createProject(placing, { name: 'Behind the stalling link' })
  record = await setProjectProduct(placing, record.ref, 'auth', true)
  record = await setProjectProduct(placing, record.ref, 'push', true)
  t.equal(record.dbServer, 'stalling', 'placed behind the link')
  t.not(neighbour.record.dbServer, 'stalling')
  // Short timeouts so the file stays fast: anon's deadline is 1 s plus the margin, service_role's 2 s plus it.
  const limits = await request(`${admin}/projects/${record.ref}/timeouts`, { method: 'PATCH', headers: adminAuth, body: { anon: '1s', service_role: '2s' } })
  t.equal(limits.status, 200, limits.text)

  const base = baseUrlOf(record.ref, platform.config.publicUrl, platform.config.baseDomain)
  const anon = { apikey: record.anonKey }
  const service = { apikey: record.serviceRoleKey, authorization: `Bearer ${record.serviceRoleKey}` }
  await adminQuery(server, `select 1`)
  const services: Array<[string, number, () => Promise<Reply>]> = [
    ['rest', 1000, () => request(`${base}/rest/v1/`, { headers: anon })],
    ['graphql', 1000, () => request(`${base}/graphql/v1`, { method: 'POST', headers: anon, body: { query: '{ __typename }' } })],
    ['push', 2000, () => request(`${base}/push/v1/devices`, { headers: service })],
    ['auth', PLATFORM_DEADLINE_MS - DEADLINE_MARGIN_MS, () => request(`${base}/auth/v1/admin/users`, { headers: service })],
  ]
  // Each service holds an open connection before the stall.
  for (const [name, , send] of services) {
    const reply = await send()
    t.equal(reply.status, 200, `${name} answers before the stall: ${reply.text.slice(0, 200)}`)
  }
  const backends = async () =>
    (await adminQuery<{ n: number }>(server, `select count(*)::int as n from pg_stat_activity where datname = $1 and application_name = 'baseplane-worker'`, [record.dbName])).rows[0]!.n
  const before = await backends()
  t.ok(before > 0, `the workers hold ${before} connections`)

  link.stall()
  const answers = services.map(([name, statementMs, send]) => timed(send).then((answer) => ({ name, statementMs, ...answer })))
  const nearby = await timed(() => request(`${neighbour.baseUrl}/rest/v1/`, { headers: { apikey: neighbour.anonKey } }))
  t.equal(nearby.status, 200, 'the neighbour on another server answers meanwhile')
  for (const answer of await Promise.all(answers)) {
    const deadline = answer.statementMs + DEADLINE_MARGIN_MS
    t.same({ status: answer.status, retryAfter: answer.retryAfter }, { status: 503, retryAfter: '2' }, `${answer.name}: 503 with Retry-After`)
    t.ok(answer.ms >= deadline - 200 && answer.ms <= deadline + SLACK_MS, `${answer.name}: answered in ${answer.ms} ms (deadline ${deadline} ms)`)
  }
  const shapes = Object.fromEntries((await Promise.all(answers)).map((answer) => [answer.name, answer.reply.json]))
  t.match(shapes.rest, { code: 'PGRST001', message: 'Database client error. Retrying the connection.' }, 'REST: PostgREST\'s shape')
  t.match(shapes.auth, { code: 503, error_code: String }, 'Auth: GoTrue\'s shape')
  t.match(shapes.push, { code: String, message: String }, 'Push: the platform\'s shape')
  t.ok(shapes.graphql !== undefined, 'GraphQL answers a body')

  await link.up()
  for (const [name, , send] of services) {
    await eventually(`${name} answers again`, 20_000, async () => (await send()).status === 200)
  }
  const after = await eventually('the connection count returns to normal', 20_000, async () => {
    const n = await backends()
    return n <= before ? n : undefined
  })
  t.ok(after <= before, `${after} connections after the link healed (${before} before)`)
})

t.test('a stalled catalogue: the admin API answers 503 within the platform\'s deadline; known projects keep answering', async (t) => {
  const project = await platform.createProject({ name: 'Known before the catalogue stalls' })
  const catalogueLink = await startForwarder(Number(new URL(server).port))
  t.teardown(() => catalogueLink.close())
  const node = await platform.startAnotherNode({ catalogueUrl: catalogueLink.via(platform.catalogueUrl) })
  t.teardown(() => node.stop())
  const on = `http://127.0.0.1:${node.port}`
  const rest = () => request(`${on}/project/${project.ref}/rest/v1/`, { headers: { apikey: project.anonKey } })
  const listed = () => request(`${on}/platform/v1/projects`, { headers: adminAuth })
  t.equal((await rest()).status, 200, 'the node knows the project')
  t.equal((await listed()).status, 200, 'its admin API reads the catalogue')

  catalogueLink.stall()
  const during = await timed(listed)
  t.same({ status: during.status, retryAfter: during.retryAfter }, { status: 503, retryAfter: '2' }, 'the admin API: 503 with Retry-After')
  t.ok(during.ms <= PLATFORM_DEADLINE_MS + SLACK_MS, `in ${during.ms} ms (deadline ${PLATFORM_DEADLINE_MS} ms)`)
  t.match(during.reply.json, { code: 'database_no_answer', message: /^The database did not answer within / }, 'in its {code, message} shape')
  t.equal((await rest()).status, 200, 'a known project answers meanwhile')

  await catalogueLink.up()
  await eventually('the admin API answers again', 20_000, async () => (await listed()).status === 200)
})
