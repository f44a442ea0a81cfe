import fs from 'node:fs'
import t from 'tap'
import { startPlatform } from '../../server/platform.ts'
import { freePort } from '../../lib/db/embedded.ts'
import { request } from '../helpers/http.ts'
import { nodeConfig } from '../../dev/node-config.ts'
import { startTestPlatform } from '../helpers/platform.ts'
import { deleteProject, getProject, rotateProjectKeys, setProjectPlan, setProjectProduct } from '../../control-plane/projects.ts'

const platform = await startTestPlatform(t)
const second = await platform.startAnotherNode()
const origins = [platform.origin, `http://127.0.0.1:${second.port}`]
const urlOn = (origin: string, ref: string, path: string) => `${origin}/project/${ref}${path}`

t.test('two data-plane processes on one catalogue serve the same project', async (t) => {
  const project = await platform.createProject({ name: 'Shared', auth: true })
  for (const origin of origins) {
    const reply = await request(urlOn(origin, project.ref, '/auth/v1/health'), { headers: { apikey: project.anonKey } })
    t.equal(reply.status, 200, origin)
  }
})

t.test('changes made through the control plane apply on the next request of every node', async (t) => {
  const project = await platform.createProject({ name: 'Live' })
  const healthOf = (origin: string, apikey: string) => request<{ plan: string }>(urlOn(origin, project.ref, '/health'), { headers: { apikey } })
  const authOn = (origin: string, apikey: string) => request(urlOn(origin, project.ref, '/auth/v1/health'), { headers: { apikey } })
  for (const origin of origins) t.equal((await authOn(origin, project.anonKey)).status, 503, 'auth is off at first')

  await setProjectProduct(platform.platform.controlPlane, project.ref, 'auth', true)
  for (const origin of origins) t.equal((await authOn(origin, project.anonKey)).status, 200, `auth on at once on ${origin}`)

  await setProjectPlan(second.controlPlane, project.ref, 'business')
  for (const origin of origins) t.equal((await healthOf(origin, project.anonKey)).json.plan, 'business', `plan seen on ${origin}`)
  const { rows } = await platform.platform.controlPlane.catalogue.query(
    'select count(*)::int as caught_up from baseplane.nodes where seen_change >= baseplane.last_change()',
  )
  t.equal(rows[0].caught_up, 2, 'both processes acknowledged the change before setPlan returned')

  const rotated = await rotateProjectKeys(platform.platform.controlPlane, project.ref)
  for (const origin of origins) {
    t.equal((await healthOf(origin, project.anonKey)).status, 401, `old key refused on ${origin}`)
    t.equal((await healthOf(origin, rotated.anonKey)).status, 200, `new key accepted on ${origin}`)
  }

  await deleteProject(platform.platform.controlPlane, project.ref)
  for (const origin of origins) t.equal((await healthOf(origin, rotated.anonKey)).status, 404, `deleted project gone on ${origin}`)
})

t.test('no request is dropped while settings change under load', async (t) => {
  const project = await platform.createProject({ name: 'Busy', auth: true })
  let stop = false
  const statuses: number[] = []
  const load = (async () => {
    while (!stop) {
      const replies = await Promise.all(origins.map((origin) => request(urlOn(origin, project.ref, '/auth/v1/health'), { headers: { apikey: project.anonKey } })))
      statuses.push(...replies.map((r) => r.status))
    }
  })()
  for (const plan of ['plus', 'pro', 'business', 'free']) await setProjectPlan(platform.platform.controlPlane, project.ref, plan)
  stop = true
  await load
  t.ok(statuses.length > 0)
  t.same([...new Set(statuses)], [200], 'every request answered 200')
})

t.test('a restart keeps every project and its keys', async (t) => {
  const project = await platform.createProject({ name: 'Durable', auth: true })
  const config = nodeConfig(platform.catalogueUrl, await freePort())
  const restarted = await startPlatform(config, platform.catalogueUrl)
  t.teardown(async () => {
    await restarted.stop()
    fs.rmSync(config.home, { recursive: true, force: true })
  })
  const reply = await request(`http://127.0.0.1:${restarted.port}/project/${project.ref}/auth/v1/health`, { headers: { apikey: project.anonKey } })
  t.equal(reply.status, 200)
  const again = await getProject(restarted.controlPlane, project.ref)
  t.same([again.anonKey, again.serviceRoleKey, again.jwtSecret], [project.anonKey, project.serviceRoleKey, project.record.jwtSecret])
})
