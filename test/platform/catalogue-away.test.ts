// The catalogue may fail; projects keep answering (issue 24 item 3): a node
// whose catalogue link is refused or hangs keeps serving the projects it
// knows, answers 503 with Retry-After (not 500) for what needs the catalogue,
// turns its /health unready once the link has been silent past
// BASEPLANE_CATALOGUE_SILENCE_MS, and a change made meanwhile names it as not
// acknowledged (admin API header, CLI warning); when the link returns, the node
// catches up without a restart.
import crypto from 'node:crypto'
import t from 'tap'
import { PULSE_MS } from '../../data-plane/catalogue-link.ts'
import { PlatformHealth } from '../../data-plane/platform-health.ts'
import { freePort } from '../../lib/db/embedded.ts'
import { runCli } from '../helpers/cli.ts'
import { adminQuery, serverUrl } from '../helpers/db.ts'
import { request, type Reply } from '../helpers/http.ts'
import { startTestPlatform, type TestProject } from '../helpers/platform.ts'
import { startForwarder } from '../../dev/tcp-forwarder.ts'

/** The node under test's bound (the least the configuration takes), so the file runs in well under a minute. */
const SILENCE_MS = 3000
const UNACKNOWLEDGED = 'baseplane-unacknowledged-nodes'

const platform = await startTestPlatform(t)
const server = await serverUrl()
const admin = `${platform.origin}/platform/v1`
const adminAuth = { authorization: `Bearer ${platform.config.adminToken}` }
// Projects live on a server the node under test reaches directly, so that only its catalogue link fails:
// the test's one PostgreSQL server, registered a second time under another id (addServer refuses that, as it
// should for an operator; here it stands for a second server).
await adminQuery(
  platform.catalogueUrl,
  `insert into baseplane.db_servers (id, admin_url, connection_budget, system_identifier) values ('direct', $1, 100000, 'the test server, again')`,
  [server],
)

const randomRef = () => `r${crypto.randomBytes(10).toString('hex')}`

async function until<T>(what: string, send: () => Promise<T>, done: (reply: T) => boolean, millis = 20_000): Promise<T> {
  const deadline = Date.now() + millis
  for (;;) {
    const reply = await send()
    if (done(reply)) return reply
    if (Date.now() > deadline) throw new Error(`${what}: not within ${millis} ms`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** A second node whose catalogue link goes through a forwarder; its projects' databases do not. */
async function cutOffNode(t: { teardown(fn: () => unknown): void }) {
  const link = await startForwarder(Number(new URL(server).port))
  t.teardown(() => link.close())
  const node = await platform.startAnotherNode({ catalogueUrl: link.via(platform.catalogueUrl), env: { BASEPLANE_CATALOGUE_SILENCE_MS: String(SILENCE_MS) } })
  // Before the forwarder closes (teardowns run last in, first out), so the stop meets a catalogue that answers.
  t.teardown(() => node.stop())
  const origin = `http://127.0.0.1:${node.port}`
  const on = (project: { ref: string }) => `${origin}/project/${project.ref}`
  const settings = (project: { ref: string }, apikey: string) => request(`${on(project)}/auth/v1/settings`, { headers: { apikey } })
  const graphql = (project: TestProject) => request<{ data?: unknown }>(`${on(project)}/graphql/v1`, { method: 'POST', headers: { apikey: project.anonKey }, body: { query: '{ __typename }' } })
  return { link, node, origin, settings, graphql }
}

const rotate = (ref: string) => request<{ anon_key: string }>(`${admin}/projects/${ref}/keys/rotate`, { method: 'POST', headers: adminAuth })

/** Status, Retry-After and the error code (GoTrue's shape carries it in x-sb-error-code and error_code). */
const answer = (reply: Reply) => ({ status: reply.status, retryAfter: reply.headers['retry-after'], code: reply.headers['x-sb-error-code'] })

t.test('the link refused: known projects keep answering, an unknown one is 503, changes apply once it is back', async (t) => {
  const { link, node, settings, graphql } = await cutOffNode(t)
  const project = await platform.createProject({ name: 'Known before', auth: true })
  t.equal(project.record.dbServer, 'direct', 'the project lives where the node reaches it directly')
  t.equal((await settings(project, project.anonKey)).status, 200, 'the node knows the project')
  const linked = await request(`${admin}/projects/${project.ref}`, { method: 'PATCH', headers: adminAuth, body: { plan: 'plus' } })
  t.equal(linked.status, 200, 'a change while the link is up')
  t.equal(linked.headers[UNACKNOWLEDGED], undefined, 'every node acknowledged: no header')
  t.equal((await settings(project, project.anonKey)).status, 200, 'known again, at its new version')

  await link.down()
  const during = await settings(project, project.anonKey)
  t.same(answer(during), { status: 200, retryAfter: undefined, code: undefined }, 'Auth answers from what the node knows')
  const query = await graphql(project)
  t.same({ status: query.status, body: query.json }, { status: 200, body: { data: { __typename: 'Query' } } }, 'GraphQL reaches the project database')
  const unknown = await settings({ ref: randomRef() }, project.anonKey)
  t.same(answer(unknown), { status: 503, retryAfter: '2', code: 'catalogue_unavailable' }, 'a project it does not know: 503 with Retry-After')

  const rotated = await rotate(project.ref)
  t.equal(rotated.status, 200, 'the change is made')
  t.equal(rotated.headers[UNACKNOWLEDGED], node.directory.nodeId, 'and names the node that did not acknowledge it')
  t.equal((await settings(project, project.anonKey)).status, 200, 'the node still serves what it knows')

  const back = Date.now()
  await link.up()
  await until('the node hears from the catalogue again', async () => node.directory.lastHeardAt, (heard) => heard > back)
  const old = await until('the rotated-out key is refused', () => settings(project, project.anonKey), (reply) => reply.status !== 200)
  t.same(answer(old), { status: 401, retryAfter: undefined, code: 'invalid_api_key' }, 'the change missed while away applies once the link is back')
  t.equal((await settings(project, rotated.json.anon_key)).status, 200, 'the new key is served')
  const next = await request(`${admin}/projects/${project.ref}`, { method: 'PATCH', headers: adminAuth, body: { plan: 'pro' } })
  t.equal(next.headers[UNACKNOWLEDGED], undefined, 'and the next change is acknowledged by every node')
})

t.test('the link hangs: /health turns unready within the bound, a change names the node, which catches up when the link returns', async (t) => {
  const { link, node, origin, settings } = await cutOffNode(t)
  const project = await platform.createProject({ name: 'Known before the hang', auth: true })
  t.equal((await settings(project, project.anonKey)).status, 200, 'the node knows the project')
  t.equal((await request(`${origin}/health`)).status, 200, 'and is ready')

  const stalled = Date.now()
  link.stall()
  const unready = await until('the node turns unready', () => request<Record<string, unknown>>(`${origin}/health`), (reply) => reply.status !== 200)
  const after = Date.now() - stalled
  t.same(
    { status: unready.status, retryAfter: unready.headers['retry-after'], body: unready.json },
    { status: 503, retryAfter: '2', body: { status: 'unavailable', version: '0.6.0', message: 'The platform database does not answer' } },
    '503 with Retry-After',
  )
  // The bound: the silence, counted from the last beat before the hang, and the probe's second (with room for a loaded machine).
  t.ok(after <= SILENCE_MS + PULSE_MS + 5000, `unready ${after} ms after the link hung (silence bound ${SILENCE_MS} ms)`)
  t.equal((await settings(project, project.anonKey)).status, 200, 'meanwhile it still serves what it knows')
  const unknown = await settings({ ref: randomRef() }, project.anonKey)
  t.same(answer(unknown), { status: 503, retryAfter: '2', code: 'catalogue_unavailable' }, 'a project it does not know: 503 (the read has a deadline), not a hang')

  const rotated = await rotate(project.ref)
  t.equal(rotated.status, 200, 'the key rotation on node 1 is made')
  t.equal(rotated.headers[UNACKNOWLEDGED], node.directory.nodeId, 'and names the cut-off node alone')
  const cli = await runCli(['projects', 'plan', project.ref, 'plus'], { DATABASE_URL: platform.catalogueUrl })
  t.equal(cli.code, 0, 'the CLI\'s change is made')
  t.equal(cli.stdout, `Project ${project.ref} is now on plan plus\n`, 'the CLI prints its result')
  t.equal(
    cli.stderr,
    `baseplane: warning: the change is made, but data-plane node ${node.directory.nodeId} did not acknowledge it in time: it may serve the old state until it hears from the catalogue again (or a balancer takes it out: BASEPLANE_CATALOGUE_SILENCE_MS)\n`,
    'and warns on standard error, naming the node',
  )

  await link.up()
  const ready = await until('the node is ready again', () => request(`${origin}/health`), (reply) => reply.status === 200)
  t.equal(ready.status, 200, '/health is 200 again once the link returns')
  const acknowledged = await until(
    'the node acknowledges',
    () => adminQuery<{ caught_up: boolean }>(platform.catalogueUrl, 'select seen_change >= baseplane.last_change() as caught_up from baseplane.nodes where id = $1', [node.directory.nodeId]),
    (result) => result.rows[0]?.caught_up === true,
  )
  t.equal(acknowledged.rows[0]!.caught_up, true, 'it acknowledges every change made while it was cut off')
  const old = await settings(project, project.anonKey)
  t.same(answer(old), { status: 401, retryAfter: undefined, code: 'invalid_api_key' }, 'the revoked key is refused')
  t.equal((await settings(project, rotated.json.anon_key)).status, 200, 'the new key is served')
})

t.test('/health with a link: 200 while heard within the bound, though the catalogue does not answer; unready past it, though it does', async (t) => {
  const nothing = `postgres://nobody:secret@127.0.0.1:${await freePort()}/catalogue`
  const link = { lastHeardAt: Date.now() }
  const away = new PlatformHealth(nothing, '0.6.0', { link, silenceMs: 10_000 })
  t.teardown(() => away.close())
  const serving = await away.response()
  t.same({ status: serving.status, body: JSON.parse(serving.body) }, { status: 200, body: { status: 'ok', version: '0.6.0', catalogue: 'down' } }, 'heard a moment ago: ready, saying the catalogue is down')
  link.lastHeardAt = Date.now() - 11_000
  const silent = await away.response()
  t.same({ status: silent.status, body: JSON.parse(silent.body) }, { status: 503, body: { status: 'unavailable', version: '0.6.0', message: 'The platform database does not answer' } }, 'silent past the bound, and the catalogue does not answer either: unavailable')

  const cutOff = new PlatformHealth(platform.catalogueUrl, '0.6.0', { link: { lastHeardAt: Date.now() - 12_500 }, silenceMs: 10_000 })
  t.teardown(() => cutOff.close())
  const unready = await cutOff.response()
  t.same(
    { status: unready.status, retryAfter: unready.headers['retry-after'], body: JSON.parse(unready.body) },
    {
      status: 503,
      retryAfter: '2',
      body: { status: 'unready', version: '0.6.0', message: 'This server has not heard from the platform database for 12 s; send requests to another' },
    },
    'the catalogue answers, but this node has not heard from it: unready',
  )

  // The default: unready on silence is opt-in, so one catalogue's outage does not empty the balancer.
  const byDefault = new PlatformHealth(nothing, '0.6.0', { link: { lastHeardAt: Date.now() - 600_000 } })
  t.teardown(() => byDefault.close())
  const kept = await byDefault.response()
  t.same({ status: kept.status, body: JSON.parse(kept.body) }, { status: 200, body: { status: 'ok', version: '0.6.0', catalogue: 'down' } }, 'without a silence bound, a node serving what it knows stays ready')
})
