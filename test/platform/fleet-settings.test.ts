// One fleet, one set of settings (issue 24 item 6): the first node's admin token
// is the fleet's, kept in the catalogue; a node started without one adopts it, a
// node configured with another refuses to start; the other shared settings
// (public URL, base domain, throttle figures, push endpoints) are checked against
// the running nodes'; wrong admin tokens are throttled per address like wrong passwords.
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { freePort } from '../../lib/db/embedded.ts'
import { startPlatform, type RunningPlatform } from '../../server/platform.ts'
import { request } from '../helpers/http.ts'
import { nodeConfig } from '../../dev/node-config.ts'
import { catalogueDatabase, dropCatalogue } from '../helpers/platform.ts'

t.test('the first node\'s admin token is the fleet\'s: adopted by a node without one, refused from a node with another', async (t) => {
  const catalogueUrl = await catalogueDatabase(t)
  const nodes: RunningPlatform[] = []
  const homes: string[] = []
  t.teardown(async () => {
    for (const node of nodes) await node.stop()
    await dropCatalogue(catalogueUrl)
    for (const home of homes) fs.rmSync(home, { recursive: true, force: true })
  })
  const configOf = async (token: string) => {
    const config = nodeConfig(catalogueUrl, await freePort(), { BASEPLANE_ADMIN_TOKEN: token })
    homes.push(config.home)
    return config
  }
  const first = await startPlatform(await configOf(''), catalogueUrl)
  nodes.push(first)
  t.equal(first.adminToken.length >= 32, true, 'the first node made a token')

  const secondConfig = await configOf('')
  const second = await startPlatform(secondConfig, catalogueUrl)
  nodes.push(second)
  t.equal(second.adminToken, first.adminToken, 'a node without a token adopts the fleet\'s')
  t.equal(fs.readFileSync(path.join(secondConfig.home, 'admin-token'), 'utf8').trim(), first.adminToken, 'and keeps it in its home for the CLI there')
  const listed = await request(`http://127.0.0.1:${second.port}/platform/v1/projects`, { headers: { authorization: `Bearer ${first.adminToken}` } })
  t.equal(listed.status, 200, 'the fleet\'s token works on every node')

  const other = 'x'.repeat(40)
  await t.rejects(startPlatform(await configOf(other), catalogueUrl), {
    code: 'invalid_config',
    message: /^the admin token of BASEPLANE_ADMIN_TOKEN is not this fleet's: .* Give this node that token/,
  }, 'a node configured with another token refuses to start')
  const sameConfig = await configOf(first.adminToken)
  const same = await startPlatform(sameConfig, catalogueUrl)
  nodes.push(same)
  t.equal(same.adminToken, first.adminToken, 'a node configured with the fleet\'s token starts')
})

t.test("a node that disagrees with the running fleet's shared settings refuses; with none running, the fleet takes its settings", async (t) => {
  const catalogueUrl = await catalogueDatabase(t)
  const homes: string[] = []
  const running: RunningPlatform[] = []
  t.teardown(async () => {
    for (const node of running) await node.stop()
    await dropCatalogue(catalogueUrl)
    for (const home of homes) fs.rmSync(home, { recursive: true, force: true })
  })
  const configOf = async (env: Record<string, string>) => {
    const config = nodeConfig(catalogueUrl, await freePort(), env)
    homes.push(config.home)
    return config
  }
  const fleetEnv = { BASEPLANE_PUBLIC_URL: 'https://api.example.test', BASEPLANE_THROTTLE_MAX_FAILURES: '7', BASEPLANE_FCM_URL: 'https://fcm.example.test' }
  const first = await startPlatform(await configOf(fleetEnv), catalogueUrl)
  running.push(first)
  const agreeing = await startPlatform(await configOf(fleetEnv), catalogueUrl)
  running.push(agreeing)
  t.ok(agreeing.port > 0, 'a node with the same settings joins')

  await t.rejects(
    startPlatform(await configOf({ ...fleetEnv, BASEPLANE_THROTTLE_MAX_FAILURES: '9', BASEPLANE_PUBLIC_URL: 'https://other.example.test' }), catalogueUrl),
    {
      code: 'invalid_config',
      message:
        /^this node's settings differ from the fleet's, and every node must agree: BASEPLANE_PUBLIC_URL is "https:\/\/other\.example\.test" here but "https:\/\/api\.example\.test" on the running nodes; BASEPLANE_THROTTLE_MAX_FAILURES is "9" here but "7" on the running nodes\. /,
    },
    'each disagreement is named',
  )
  const { BASEPLANE_PUBLIC_URL: _url, ...withoutUrl } = fleetEnv
  await t.rejects(startPlatform(await configOf(withoutUrl), catalogueUrl), { message: /BASEPLANE_PUBLIC_URL is \(unset\) here but "https:\/\/api\.example\.test"/ }, 'a public URL left unset is refused too')

  for (const node of running.splice(0)) await node.stop()
  const changed = await startPlatform(await configOf({ ...fleetEnv, BASEPLANE_THROTTLE_MAX_FAILURES: '9' }), catalogueUrl)
  running.push(changed)
  t.ok(changed.port > 0, 'with no node running, a node with new settings starts')
  await t.rejects(startPlatform(await configOf(fleetEnv), catalogueUrl), { message: /BASEPLANE_THROTTLE_MAX_FAILURES is "7" here but "9" on the running nodes/ }, 'and its settings are now the fleet\'s')
})
