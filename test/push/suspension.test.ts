// A suspended project sends no push (issue 27 item 4): its queue is kept in
// push.messages and push.queue while it is suspended, and everything queued
// is delivered once it is resumed. Through a running platform and its own
// push actor thread, sending to the APNs stand-in.
import t from 'tap'
import { signJwt } from '../../lib/jwt.ts'
import { adminUrlFor } from '../../lib/db/server-url.ts'
import { startApnsPeer } from '../../dev/push-peers/apns-peer.ts'
import { makeApnsKey } from '../../dev/push-peers/keys.ts'
import { adminQuery, serverUrl } from '../helpers/db.ts'
import { request } from '../helpers/http.ts'
import { startTestPlatform } from '../helpers/platform.ts'
import { eventually } from './helpers.ts'

t.test('queued pushes wait through a suspension and are delivered after the resume', async (t) => {
  const key = makeApnsKey()
  const peer = await startApnsPeer({ teamId: key.teamId, keyId: key.keyId, publicKey: key.publicKey, topic: 'com.example.suspended' })
  t.teardown(() => peer.close())
  const platform = await startTestPlatform(t, { BASEPLANE_APNS_URL: peer.url })
  // plus: a later send (send_at) is allowed, so a message can be queued before the suspension and fall due during it.
  const project = await platform.createProject({ push: true, plan: 'plus' })
  const sub = crypto.randomUUID()
  const userToken = await signJwt(project.record.jwtSecret, { sub, role: 'authenticated', aud: 'authenticated', exp: Math.floor(Date.now() / 1000) + 600 })
  const api = (method: string, path: string, headers: Record<string, string>, body?: object) =>
    request<Record<string, unknown>>(`${project.baseUrl}/push/v1${path}`, { method, headers, body })
  const admin = (path: string, body?: object) =>
    request<Record<string, unknown>>(`${platform.origin}/platform/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${platform.config.adminToken}` }, body })
  const asService = { apikey: project.serviceRoleKey }
  const projectDb = adminUrlFor(await serverUrl(), project.record.dbName)

  const device = await api('POST', '/devices', { apikey: project.anonKey, authorization: `Bearer ${userToken}` }, { platform: 'apns', token: 'cd'.repeat(32) })
  t.equal(device.status, 201, device.text)
  const creds = await api('PUT', '/credentials/apns', asService, { topic: 'com.example.suspended', key_id: key.keyId, team_id: key.teamId, keys: [{ p8: key.p8 }] })
  t.equal(creds.status, 200, creds.text)
  const first = await api('POST', '/messages', asService, { user_id: sub, title: 'before' })
  t.equal(first.status, 201)
  await eventually(() => peer.delivered.length === 1, 15000, 'the first delivery, while active')

  const later = await api('POST', '/messages', asService, { user_id: sub, title: 'due during the suspension', send_at: new Date(Date.now() + 2500).toISOString() })
  t.equal(later.status, 201, later.text)
  const suspended = await admin(`/projects/${project.ref}/suspend`, { reason: 'abuse report 7' })
  t.equal(suspended.status, 200, suspended.text)
  // Queued while suspended, by the database's own superuser (nothing else can log in).
  await adminQuery(projectDb, `insert into push.messages (device_id, title) values ($1, 'queued while suspended')`, [device.json.id])
  const refused = await api('POST', '/messages', asService, { user_id: sub, title: 'refused' })
  t.equal(refused.status, 403, 'the API refuses sends')

  // Past the later message's send_at, and several of the actor's lease scans.
  await new Promise((resolve) => setTimeout(resolve, 5000))
  t.equal(peer.delivered.length, 1, 'nothing is sent while suspended')
  const queued = await adminQuery<{ n: number }>(projectDb, 'select count(*)::int as n from push.queue')
  t.equal(queued.rows[0]!.n, 2, 'both deliveries wait in the queue')
  const lease = await adminQuery(platform.catalogueUrl, 'select 1 from baseplane.push_leases where ref = $1', [project.ref])
  t.equal(lease.rowCount, 0, 'no node holds its sending lease')

  const resumed = await admin(`/projects/${project.ref}/resume`)
  t.equal(resumed.status, 200, resumed.text)
  await eventually(() => peer.delivered.length === 3, 20000, 'the queued deliveries, after the resume')
  const titles = peer.delivered.map((d) => (d.payload.aps as { alert: { title: string } }).alert.title)
  t.same(titles.slice(1).sort(), ['due during the suspension', 'queued while suspended'])
  t.equal(titles[0], 'before')
  await eventually(async () => (await adminQuery<{ n: number }>(projectDb, 'select count(*)::int as n from push.queue')).rows[0]!.n === 0, 10000, 'the queue to empty')
  const log = await adminQuery<{ status: string }>(projectDb, 'select status from push.delivery_log order by id')
  t.same(log.rows.map((r) => r.status), ['sent', 'sent', 'sent'], 'each delivered once, nothing failed')
})
