// Servers come and go without stopping the fleet (issue 24 item 2, first part):
// a node starts while an added server is down, serves the other servers'
// projects, answers 503 with Retry-After for the down server's, and brings that
// server's project databases up to date when it returns, without a restart.
import t from 'tap'
import { startTemporary } from '../../lib/db/embedded.ts'
import { request } from '../helpers/http.ts'
import { startTestPlatform } from '../helpers/platform.ts'
import { startForwarder } from '../helpers/tcp-forwarder.ts'
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
  const added = await request<{ id: string }>(`${admin}/servers`, { headers: adminAuth, body: { url: link.via(second.url), id: 'second', connections: 5000 } })
  t.equal(added.status, 201, added.text)
  const there = await platform.createProject({ name: 'On the second server', auth: true })
  t.equal(there.record.dbServer, 'second', 'placed on the roomier added server')
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
