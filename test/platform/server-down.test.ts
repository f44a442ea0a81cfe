// Servers come and go without stopping the fleet (issue 24 item 2, first part):
// a node starts while an added server is down, serves the other servers'
// projects, answers 503 with Retry-After for the down server's, and brings that
// server's project databases up to date when it returns, without a restart.
import t from 'tap'
import { ControlPlane } from '../../control-plane/control-plane.ts'
import { createProject, deleteProject, listAllProjects, setProjectProduct } from '../../control-plane/projects.ts'
import { listDatabaseServers } from '../../control-plane/server-admin.ts'
import { startTemporary } from '../../lib/db/embedded.ts'
import { runCli } from '../helpers/cli.ts'
import { request } from '../helpers/http.ts'
import { startTestPlatform } from '../helpers/platform.ts'
import { startForwarder } from '../../dev/tcp-forwarder.ts'
import { UPGRADE_RETRY_MS } from '../../server/pending-upgrades.ts'

const platform = await startTestPlatform(t)
const second = await startTemporary()
t.teardown(() => second.stop())
const link = await startForwarder(Number(new URL(second.url).port))
t.teardown(() => link.close())
const admin = `${platform.origin}/platform/v1`
const adminAuth = { authorization: `Bearer ${platform.config.adminToken}` }

t.test('a node starts while an added server is down, and heals when it returns', async (t) => {
  const here = await platform.createProject({ name: 'On the default server', auth: true })
  const tooMany = await request<{ message: string }>(`${admin}/servers`, { headers: adminAuth, body: { url: link.via(second.url), id: 'second', connections: 99999 } })
  t.equal(tooMany.status, 400, 'a budget past what the server allows is refused')
  t.match(tooMany.json.message, /^Database server 127\.0\.0\.1:\d+ allows at most \d+ connections to the data plane \(/)
  const added = await request<{ id: string }>(`${admin}/servers`, { headers: adminAuth, body: { url: link.via(second.url), id: 'second' } })
  t.equal(added.status, 201, added.text)
  // A control plane whose default server has almost no room places on the added one.
  const placing = await ControlPlane.open(platform.catalogueUrl, { defaultServerBudget: 1 })
  t.teardown(() => placing.close())
  const thereRecord = await createProject(placing, { name: 'On the second server' })
  await setProjectProduct(placing, thereRecord.ref, 'auth', true)
  const there = { ref: thereRecord.ref, anonKey: thereRecord.anonKey }
  t.equal(thereRecord.dbServer, 'second', 'placed on the roomier added server')
  t.not(here.record.dbServer, 'second')

  await link.down()
  const node = await platform.startAnotherNode()
  const on = (project: { ref: string }) => `http://127.0.0.1:${node.port}/project/${project.ref}`
  const served = await request(`${on(here)}/auth/v1/settings`, { headers: { apikey: here.anonKey } })
  t.equal(served.status, 200, 'the node serves the projects of the servers that answer')
  const away = await request<{ status: string; database: string }>(`${on(there)}/health`, { headers: { apikey: there.anonKey } })
  t.equal(away.status, 503, 'the down server\'s project: 503')
  t.ok(Number(away.headers['retry-after']) > 0, 'with Retry-After')
  t.equal(away.json.database, 'down')
  const signIn = (project: { ref: string; anonKey: string }) =>
    request(`${on(project)}/auth/v1/token?grant_type=password`, { headers: { apikey: project.anonKey }, body: { email: 'nobody@example.test', password: 'not this one' } })
  const auth = await signIn(there)
  t.equal(auth.status, 503, 'Auth answers 503 for it too')
  t.ok(Number(auth.headers['retry-after']) > 0, 'with Retry-After')

  await link.up()
  let back = 0
  for (let i = 0; i < (UPGRADE_RETRY_MS * 3) / 200 && back !== 200; i++) {
    await new Promise((resolve) => setTimeout(resolve, 200))
    back = (await request(`${on(there)}/health`, { headers: { apikey: there.anonKey } })).status
  }
  t.equal(back, 200, 'answered again once the server returned, without a restart')
  t.equal((await signIn(there)).status, 400, 'Auth checks the password again (no such user)')
})

t.test('placement passes over a server that does not answer; servers set, drain and remove', async (t) => {
  const placing = await ControlPlane.open(platform.catalogueUrl, { defaultServerBudget: 1 })
  t.teardown(() => placing.close())
  await link.down()
  const passedOver = await createProject(placing, { name: 'While the roomiest server is down' })
  t.equal(passedOver.dbServer, 'default', 'created on the server that answers')
  const listed = await request<Array<{ id: string; state: string; connections_in_use: number | null; reason?: string }>>(`${admin}/servers`, { headers: adminAuth })
  t.match(listed.json, [{ id: 'default', state: 'up', connections_in_use: Number }, { id: 'second', state: 'down', connections_in_use: null, reason: String }], 'servers list shows which is down')
  await link.up()

  const cli = (args: string[]) => runCli(args, { DATABASE_URL: platform.catalogueUrl })
  const set = await cli(['servers', 'set', 'second', '--connections', '50'])
  t.equal(set.code, 0, set.stderr)
  t.equal(set.stdout, 'Database server second: connection budget 50\n')
  const tooMany = await cli(['servers', 'set', 'second', '--connections', '99999'])
  t.equal(tooMany.code, 1)
  t.match(tooMany.stderr, /^baseplane: Database server 127\.0\.0\.1:\d+ allows at most \d+ connections/)
  t.equal((await cli(['servers', 'set', 'default', '--connections', '5'])).code, 1, 'the default server\'s budget is configuration')

  const drained = await cli(['servers', 'drain', 'second'])
  t.equal(drained.code, 0, drained.stderr)
  t.match(drained.stdout, /^Database server second takes no new project; its \d+ stay\n$/)
  t.equal((await createProject(placing, { name: 'While second drains' })).dbServer, 'default', 'a draining server takes no new project')
  t.equal((await cli(['servers', 'drain', 'second', '--undo'])).code, 0)
  t.equal((await createProject(placing, { name: 'After the drain' })).dbServer, 'second', 'and takes them again after --undo')

  const refused = await cli(['servers', 'remove', 'second', '--yes'])
  t.equal(refused.code, 1)
  t.match(refused.stderr, /^baseplane: Database server second holds \d+ projects: delete or move them first/)
  t.equal((await cli(['servers', 'remove', 'second'])).code, 2, 'remove asks for --yes')
  for (const project of await listAllProjects(placing)) if (project.dbServer === 'second') await deleteProject(placing, project.ref)
  const removed = await cli(['servers', 'remove', 'second', '--yes'])
  t.equal(removed.code, 0, removed.stderr)
  t.same((await listDatabaseServers(placing)).map((s) => s.id), ['default'], 'gone from the list')
  const unknown = await request<{ code: string }>(`${admin}/servers/second`, { method: 'DELETE', headers: adminAuth })
  t.same({ status: unknown.status, code: unknown.json.code }, { status: 404, code: 'server_not_found' })
})
