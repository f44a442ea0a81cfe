// The push API through the real data plane (uWebSockets, key checks, the push
// worker thread), with the platform's actor host sending to the APNs stand-in.
import t from 'tap'
import { signJwt } from '../../lib/jwt.ts'
import { startTestPlatform } from '../helpers/platform.ts'
import { adminQuery } from '../helpers/db.ts'
import { adminUrlFor } from '../../lib/db/server-url.ts'
import { eventually } from './helpers.ts'
import { makeApnsKey } from '../../dev/push-peers/keys.ts'
import { startApnsPeer } from '../../dev/push-peers/apns-peer.ts'

t.test('register, set keys, send and deliver over HTTP', async (t) => {
  const key = makeApnsKey()
  const peer = await startApnsPeer({ teamId: key.teamId, keyId: key.keyId, publicKey: key.publicKey, topic: 'com.example.http' })
  t.teardown(() => peer.close())
  // The platform's own actor host sends, to the stand-in (a platform-level endpoint override).
  const platform = await startTestPlatform(t, { BASEPLANE_APNS_URL: peer.url })
  const project = await platform.createProject({ push: true })
  const sub = crypto.randomUUID()
  const userToken = await signJwt(project.record.jwtSecret, { sub, role: 'authenticated', aud: 'authenticated', exp: Math.floor(Date.now() / 1000) + 600 })
  const call = async (method: string, path: string, headers: Record<string, string>, body?: unknown) => {
    const response = await fetch(`${project.baseUrl}/push/v1${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await response.text()
    return { status: response.status, json: text ? JSON.parse(text) : undefined, headers: response.headers }
  }
  const asUser = { apikey: project.anonKey, authorization: `Bearer ${userToken}` }
  const asService = { apikey: project.serviceRoleKey }

  const noKey = await call('GET', '/devices', {})
  t.equal(noKey.status, 401)
  const device = await call('POST', '/devices', asUser, { platform: 'apns', token: 'ab'.repeat(32) })
  t.equal(device.status, 201, JSON.stringify(device.json))
  t.equal(device.json.user_id, sub)
  const insecure = await call('POST', '/devices', asUser, { platform: 'web', subscription: { endpoint: 'http://127.0.0.1:9/x', keys: { p256dh: 'a', auth: 'b' } } })
  t.equal(insecure.status, 400, 'plain-http Web Push endpoints are refused outside tests')
  const keys = { p256dh: Buffer.concat([Buffer.from([4]), Buffer.alloc(64, 7)]).toString('base64url'), auth: Buffer.alloc(16, 1).toString('base64url') }
  for (const endpoint of ['https://127.0.0.1/x', 'https://10.1.2.3/x', 'https://[::1]/x', 'https://metadata.internal/x']) {
    const r = await call('POST', '/devices', asUser, { platform: 'web', subscription: { endpoint, keys } })
    t.equal(r.status, 400, `${endpoint} refused`)
  }
  const web = await call('POST', '/devices', asUser, { platform: 'web', subscription: { endpoint: 'https://fcm.googleapis.com/fcm/send/abc', keys } })
  t.equal(web.status, 201, 'a public push service is accepted')
  t.equal((await call('DELETE', `/devices/${web.json.id}`, asUser)).status, 204)

  const userCreds = await call('PUT', '/credentials/apns', asUser, { topic: 'com.example.http', key_id: key.keyId, team_id: key.teamId, keys: [{ p8: key.p8 }] })
  t.equal(userCreds.status, 403)
  t.same(Object.keys(userCreds.json).sort(), ['code', 'hint', 'message'])
  t.equal(userCreds.headers.get('x-sb-error-code'), 'service_role_required')
  const creds = await call('PUT', '/credentials/apns', asService, { topic: 'com.example.http', key_id: key.keyId, team_id: key.teamId, keys: [{ p8: key.p8 }] })
  t.equal(creds.status, 200, JSON.stringify(creds.json))

  const refused = await call('POST', '/messages', asUser, { user_id: sub, title: 'self' })
  t.equal(refused.status, 403)
  t.equal(refused.json.code, 'send_not_allowed')
  const later = await call('POST', '/messages', asService, { user_id: sub, title: 'later', send_at: new Date(Date.now() + 86400_000).toISOString() })
  t.equal(later.status, 403)
  t.equal(later.json.code, 'send_at_not_available')
  const sent = await call('POST', '/messages', asService, { user_id: sub, title: 'Over HTTP', body: 'hello' })
  t.equal(sent.status, 201)
  await eventually(() => peer.delivered.length === 1, 10000, 'delivery')
  t.same(peer.delivered[0]!.payload, { aps: { alert: { title: 'Over HTTP', body: 'hello' } } })
  const status = await eventually(async () => {
    const r = await call('GET', `/messages/${sent.json.id}`, asService)
    return r.json.deliveries[0]?.status === 'sent' && r
  })
  t.equal(status.json.deliveries[0].platform, 'apns')

  // A project without push answers product_disabled from the data plane.
  const other = await platform.createProject({})
  const disabled = await fetch(`${other.baseUrl}/push/v1/devices`, { headers: { apikey: other.serviceRoleKey } })
  t.equal(disabled.status, 503)
})

t.test('a send to a device the caller cannot see answers 404 device_not_found and writes nothing', async (t) => {
  const platform = await startTestPlatform(t)
  const project = await platform.createProject({ push: true })
  const admin = (sql: string, values?: unknown[]) => adminQuery(adminUrlFor(platform.platform.controlPlane.defaultServerUrl, project.record.dbName), sql, values)
  // Users may send to anyone (a chat app); anon may too, to see that RLS on devices still decides.
  await admin(`create policy send_any on push.messages for insert to authenticated, anon with check (true)`)
  const token = async (sub: string) =>
    signJwt(project.record.jwtSecret, { sub, role: 'authenticated', aud: 'authenticated', exp: Math.floor(Date.now() / 1000) + 600 })
  const alice = crypto.randomUUID()
  const bob = crypto.randomUUID()
  const asAlice = { apikey: project.anonKey, authorization: `Bearer ${await token(alice)}` }
  const asBob = { apikey: project.anonKey, authorization: `Bearer ${await token(bob)}` }
  const call = async (headers: Record<string, string>, body: unknown, method = 'POST', path = '/messages') => {
    const response = await fetch(`${project.baseUrl}/push/v1${path}`, { method, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
    const text = await response.text()
    return { status: response.status, json: text ? JSON.parse(text) : undefined, code: response.headers.get('x-sb-error-code') }
  }
  const aliceDevice = await call(asAlice, { platform: 'apns', token: 'cd'.repeat(32) }, 'POST', '/devices')
  t.equal(aliceDevice.status, 201, JSON.stringify(aliceDevice.json))
  const bobDevice = await call(asBob, { platform: 'apns', token: 'ef'.repeat(32) }, 'POST', '/devices')
  t.equal(bobDevice.status, 201, JSON.stringify(bobDevice.json))
  const written = async () => (await admin(`select (select count(*) from push.messages)::int as messages, (select count(*) from push.queue)::int as queued`)).rows[0]

  const hidden = await call(asAlice, { device_id: bobDevice.json.id, title: 'not yours' })
  t.equal(hidden.status, 404)
  t.same(hidden.json, { code: 'device_not_found', message: `No device ${bobDevice.json.id} visible to this caller` })
  t.equal(hidden.code, 'device_not_found')
  const missing = crypto.randomUUID()
  const absent = await call({ apikey: project.serviceRoleKey }, { device_id: missing, title: 'nobody' })
  t.equal(absent.status, 404)
  t.equal(absent.json.code, 'device_not_found')
  t.match(absent.json.message, missing)
  const anon = await call({ apikey: project.anonKey }, { device_id: aliceDevice.json.id, title: 'anon cannot see devices' })
  t.equal(anon.status, 404)
  t.equal(anon.json.code, 'device_not_found')
  const batch = await call(asAlice, [{ device_id: aliceDevice.json.id, title: 'mine' }, { device_id: bobDevice.json.id, title: 'his' }])
  t.equal(batch.status, 404, 'one unseen device refuses the whole batch')
  t.match(batch.json.message, bobDevice.json.id)
  t.same(await written(), { messages: 0, queued: 0 }, 'nothing written by the refusals')

  const own = await call(asAlice, { device_id: aliceDevice.json.id, title: 'mine' })
  t.equal(own.status, 201, JSON.stringify(own.json))
  const byService = await call({ apikey: project.serviceRoleKey }, { device_id: bobDevice.json.id.toUpperCase(), title: 'service sees all' })
  t.equal(byService.status, 201, JSON.stringify(byService.json))
  t.equal((await written()).messages, 2)
  // Each reached its device's queue; without APNs keys the actor may already have failed it, saying so.
  const fannedOut = await admin(`select (select count(*) from push.queue)::int + (select count(distinct queue_id) from push.delivery_log)::int as n`)
  t.equal(fannedOut.rows[0].n, 2)
})
