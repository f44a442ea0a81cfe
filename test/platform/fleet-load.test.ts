// Three nodes, one free project, all of its services busy at once (issue 24):
// each node a real child process on one catalogue, four requests at a time on
// each of GraphQL, GET /auth/v1/user and GET /push/v1/devices through each
// node (36 in flight). A role's CONNECTION LIMIT holds for the whole fleet
// (free plan: 20), so each node's pools must stay within its part of it:
// nothing may answer 503, and no node may log that PostgreSQL refused a
// connection. Plain node:http with keep-alive agents rather than wrk, which
// CI machines may lack; no timing is asserted.
import http from 'node:http'
import pg from 'pg'
import t from 'tap'
import { setAuthOptions } from '../../control-plane/auth-settings.ts'
import { ControlPlane } from '../../control-plane/control-plane.ts'
import { createProject, setProjectProduct } from '../../control-plane/projects.ts'
import { ownerUrlOf } from '../../lib/catalogue.ts'
import { request } from '../helpers/http.ts'
import { startPlatformProcess, type PlatformProcess } from '../helpers/platform-process.ts'
import { catalogueDatabase, dropCatalogue } from '../helpers/platform.ts'

const NODES = 3
const LOOPS = 4
const LOAD_MS = 5000
const REFUSED = /too many connections|remaining connection slots/i

const catalogueUrl = await catalogueDatabase(t)
// Registered first, so it runs last: after the nodes and the control plane have stopped.
t.teardown(() => dropCatalogue(catalogueUrl))
const controlPlane = await ControlPlane.open(catalogueUrl)
t.teardown(() => controlPlane.close())
let record = await createProject(controlPlane, { name: 'Fleet load', plan: 'free' })
record = await setProjectProduct(controlPlane, record.ref, 'auth', true)
record = await setProjectProduct(controlPlane, record.ref, 'push', true)
await setAuthOptions(controlPlane, record.ref, { mailer_autoconfirm: true })
const owner = new pg.Client({ connectionString: ownerUrlOf(record) })
await owner.connect()
await owner.query(`create table public.items (id int primary key, name text not null);
                   insert into public.items select g, 'item ' || g from generate_series(1, 20) g`)
await owner.end()

const nodes: PlatformProcess[] = []
for (let i = 0; i < NODES; i++) nodes.push(await startPlatformProcess(t, catalogueUrl, { BASEPLANE_LOG_LEVEL: 'info' }, { keepOutput: true }))

const signUp = await request<{ access_token: string }>(`${nodes[0]!.baseUrlOf(record.ref)}/auth/v1/signup`, {
  headers: { apikey: record.anonKey },
  body: { email: 'fleet@example.test', password: 'a long enough password' },
})
if (signUp.status !== 200 || !signUp.json.access_token) throw new Error(`sign-up answered ${signUp.status} ${signUp.text}`)
const asUser = { apikey: record.anonKey, authorization: `Bearer ${signUp.json.access_token}` }
const device = await request(`${nodes[1]!.baseUrlOf(record.ref)}/push/v1/devices`, { headers: asUser, body: { platform: 'apns', token: 'ab'.repeat(32) } })
if (device.status !== 201) throw new Error(`registering a device answered ${device.status} ${device.text}`)

interface Call {
  name: string
  method: 'GET' | 'POST'
  path: string
  body?: string
}

const calls: Call[] = [
  { name: 'POST /graphql/v1', method: 'POST', path: '/graphql/v1', body: JSON.stringify({ query: '{ itemsCollection(first: 5) { edges { node { id name } } } }' }) },
  { name: 'GET /auth/v1/user', method: 'GET', path: '/auth/v1/user' },
  { name: 'GET /push/v1/devices', method: 'GET', path: '/push/v1/devices' },
]

/** One request on a keep-alive agent; status 0 for a connection that failed. */
function send(agent: http.Agent, url: string, call: Call): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    const headers: Record<string, string> = { ...asUser }
    if (call.body !== undefined) {
      headers['content-type'] = 'application/json'
      headers['content-length'] = String(Buffer.byteLength(call.body))
    }
    const req = http.request(url, { method: call.method, headers, agent }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString('utf8') }))
      res.on('error', (error) => resolve({ status: 0, body: error.message }))
    })
    req.on('error', (error) => resolve({ status: 0, body: error.message }))
    req.end(call.body)
  })
}

t.test('three nodes under load on one free project answer every request, and PostgreSQL refuses none of their connections', async (t) => {
  const agents = nodes.map(() => new http.Agent({ keepAlive: true }))
  t.teardown(() => agents.forEach((agent) => agent.destroy()))
  // Per node and call: answers by status, and the first body of each status that is not 2xx.
  const counts = nodes.map(() => calls.map(() => new Map<number, number>()))
  const failures = new Map<string, string>()
  const deadline = Date.now() + LOAD_MS
  await Promise.all(
    nodes.flatMap((node, n) =>
      calls.flatMap((call, c) =>
        Array.from({ length: LOOPS }, async () => {
          const url = `${node.baseUrlOf(record.ref)}${call.path}`
          while (Date.now() < deadline) {
            const { status, body } = await send(agents[n]!, url, call)
            counts[n]![c]!.set(status, (counts[n]![c]!.get(status) ?? 0) + 1)
            if (status < 200 || status > 299) {
              const key = `node ${n + 1} ${call.name} ${status}`
              if (!failures.has(key)) failures.set(key, body.slice(0, 300))
            }
          }
        }),
      ),
    ),
  )
  const summary = nodes.map((_, n) => calls.map((call, c) => `node ${n + 1} ${call.name}: ${[...counts[n]![c]!].map(([s, k]) => `${s} x${k}`).join(', ')}`)).flat()
  t.comment(summary.join('\n'))
  const unavailable = counts.flat().reduce((sum, byStatus) => sum + (byStatus.get(503) ?? 0), 0)
  t.equal(unavailable, 0, 'no 503')
  t.same(Object.fromEntries(failures), {}, 'every answer 2xx (the first body of each other status, by node and call)')
  for (const [n, byCall] of counts.entries()) {
    for (const [c, byStatus] of byCall.entries()) t.ok((byStatus.get(200) ?? 0) > 0, `node ${n + 1} answered ${calls[c]!.name}`)
  }
  for (const [n, node] of nodes.entries()) {
    const refused = node.output().split('\n').filter((line) => REFUSED.test(line))
    t.same(refused.slice(0, 3).map((line) => line.slice(0, 300)), [], `node ${n + 1} logged no refused connection (${refused.length} lines)`)
  }
})
