// FCM HTTP v1 against stand-ins of the send endpoint and the OAuth token
// endpoint: credential checks, delivery, UNREGISTERED, token renewal, stops.
import t, { type Test } from 'tap'
import type { CredentialStatus } from '../../workers/push/credentials.ts'
import { eventually, newUserId, pushFixture, service, user, type PushFixture } from './helpers.ts'
import { makeServiceAccount } from '../../dev/push-peers/keys.ts'
import { startFcmPeer } from '../../dev/push-peers/fcm-peer.ts'

async function setup(t: Test) {
  const peer = await startFcmPeer()
  t.teardown(() => peer.close())
  const fx = await pushFixture(t, { fcmTokenUrl: peer.tokenUrl, endpoints: { fcmUrl: peer.url, fcmTokenUrl: peer.tokenUrl } })
  const account = makeServiceAccount()
  peer.allow(account.file.client_email, account.file.project_id, account.publicKey)
  return { peer, fx, account }
}

async function settled(fx: PushFixture, count: number) {
  await eventually(async () => {
    const { rows } = await fx.admin(`select count(distinct queue_id)::int as n from push.delivery_log where status in ('sent', 'failed', 'expired')`)
    return rows[0].n >= count
  }, 15000, `${count} settled`)
}

t.test('a service account must obtain a real token before it is stored; then FCM delivers', async (t) => {
  const { peer, fx, account } = await setup(t)
  const unknown = makeServiceAccount('other-project-42')
  const refused = await fx.call(service, 'PUT', '/credentials/fcm', unknown.file)
  t.equal(refused.status, 400)
  t.equal(refused.json.code, 'service_account_refused')
  t.match(refused.json.message, /invalid_grant/)
  t.equal((await fx.call(service, 'PUT', '/credentials/fcm', { ...account.file, type: 'user' })).json.code, 'invalid_service_account')
  t.equal((await fx.call(service, 'PUT', '/credentials/fcm', { ...account.file, private_key: 'nope' })).json.code, 'invalid_service_account')
  t.equal((await fx.call(user(newUserId()), 'PUT', '/credentials/fcm', account.file)).status, 403)
  t.equal((await fx.admin('select count(*)::int as n from push.credentials')).rows[0].n, 0, 'nothing stored')

  const put = await fx.call(service, 'PUT', '/credentials/fcm', account.file)
  t.equal(put.status, 200, JSON.stringify(put.json))
  t.same(Object.keys(put.json).sort(), ['client_email', 'platform', 'private_key_id', 'project_id', 'updated_at'])
  t.notMatch(put.body, /PRIVATE KEY/)

  await fx.startHost()
  const alice = newUserId()
  await fx.call(user(alice), 'POST', '/devices', { platform: 'fcm', token: 'token-ok-1' })
  const gone = await fx.call(user(alice), 'POST', '/devices', { platform: 'fcm', token: 'unreg-1' })
  const sent = await fx.call(service, 'POST', '/messages', { user_id: alice, title: 'Hi', body: 'FCM', data: { n: 7, s: 'x', o: { a: 1 } }, ttl: 120, collapse_key: 'k' })
  t.equal(sent.status, 201)
  await settled(fx, 2)
  t.equal(peer.delivered.length, 1)
  const m = peer.delivered[0]!.message
  t.equal(peer.delivered[0]!.project, account.file.project_id)
  t.same(m.notification, { title: 'Hi', body: 'FCM' })
  t.same(m.data, { n: '7', s: 'x', o: '{"a":1}' }, 'data values travel as strings')
  t.equal(m.android.priority, 'HIGH')
  t.equal(m.android.collapse_key, 'k')
  t.match(m.android.ttl, /^1[01]\ds$/)
  const log = await fx.admin(`select device_id, status, reason, provider_id from push.delivery_log order by id`)
  const byDevice = new Map(log.rows.map((r) => [r.device_id, r]))
  t.match(byDevice.get(gone.json.id), { status: 'failed', reason: 'FCM: UNREGISTERED' })
  t.equal((await fx.admin('select active from push.devices where id = $1', [gone.json.id])).rows[0].active, false)
  t.match([...byDevice.values()].find((r) => r.status === 'sent').provider_id, /^projects\/demo-project-1234\/messages\//)

  // An access token the endpoint stops accepting is renewed once, silently.
  const issued = peer.tokensIssued
  peer.revokeAccessTokens()
  await fx.call(service, 'POST', '/messages', { user_id: alice, title: 'again' })
  await settled(fx, 3)
  t.equal(peer.delivered.length, 2)
  t.equal(peer.tokensIssued, issued + 1)
})

t.test('without FCM keys a delivery fails at once, saying which keys to add and how; once they are stored, FCM delivers', async (t) => {
  const { peer, fx, account } = await setup(t)
  await fx.startHost()
  const alice = newUserId()
  t.equal((await fx.call(user(alice), 'POST', '/devices', { platform: 'fcm', token: 'token-ok-2' })).status, 201)
  const sent = await fx.call(service, 'POST', '/messages', { user_id: alice, title: 'no keys yet' })
  t.equal(sent.status, 201)
  await settled(fx, 1)
  const log = await fx.admin('select status, attempt, reason from push.delivery_log where message_id = $1', [sent.json.id])
  t.same(log.rows, [{ status: 'failed', attempt: 1, reason: 'no FCM service account stored for this project: add one with PUT /push/v1/credentials/fcm or baseplane push credentials set REF fcm' }])
  t.equal((await fx.admin('select count(*)::int as n from push.queue')).rows[0].n, 0, 'nothing left waiting for its TTL')
  const read = await fx.call(service, 'GET', `/messages/${sent.json.id}`)
  t.match(read.json.deliveries, [{ status: 'failed', last_reason: /^no FCM service account stored/ }])
  t.equal((await fx.call(service, 'PUT', '/credentials/fcm', account.file)).status, 200)
  await fx.call(service, 'POST', '/messages', { user_id: alice, title: 'with keys' })
  await settled(fx, 2)
  t.equal(peer.delivered.length, 1, 'stored keys are used from the next message')
  t.match(peer.delivered[0]!.message.notification, { title: 'with keys' })
})

t.test('auth failures stop FCM for the project until new keys; quota errors are retried', async (t) => {
  const { peer, fx, account } = await setup(t)
  await fx.call(service, 'PUT', '/credentials/fcm', account.file)
  await fx.startHost()
  const alice = newUserId()
  for (let i = 0; i < 5; i++) await fx.call(user(alice), 'POST', '/devices', { platform: 'fcm', token: `t-${i}` })
  peer.script.set('t-0', [{ status: 403, code: 'THIRD_PARTY_AUTH_ERROR' }])
  await fx.call(service, 'POST', '/messages', { device_id: (await fx.admin(`select id from push.devices where token = 't-0'`)).rows[0].id, title: 'x' })
  const reason = await eventually(async () => (await fx.call<CredentialStatus>(service, 'GET', '/credentials')).json.fcm!.stopped_reason)
  t.equal(reason, 'FCM: THIRD_PARTY_AUTH_ERROR')
  await fx.call(service, 'POST', '/messages', { user_id: alice, title: 'held' })
  await new Promise((r) => setTimeout(r, 300))
  t.equal(peer.delivered.length, 0, 'nothing sent while stopped')
  // New keys (the same file uploaded again is a change too): everything goes out.
  peer.script.set('t-1', [{ status: 429, code: 'QUOTA_EXCEEDED', retryAfter: 1 }])
  await fx.call(service, 'PUT', '/credentials/fcm', account.file)
  await settled(fx, 6)
  t.equal(peer.delivered.length, 6)
  const retried = await fx.admin(`select l.status, l.reason from push.delivery_log l join push.devices d on d.id = l.device_id where d.token = 't-1' order by l.id`)
  t.same(retried.rows.map((r) => [r.status, r.reason]), [['retry', 'FCM: QUOTA_EXCEEDED'], ['sent', null]])
})

t.test('a data-only message reaches iOS apps in the background: content-available and apns-push-type background', async (t) => {
  const { peer, fx, account } = await setup(t)
  t.equal((await fx.call(service, 'PUT', '/credentials/fcm', account.file)).status, 200)
  await fx.startHost()
  const alice = newUserId()
  const device = await fx.call(user(alice), 'POST', '/devices', { platform: 'fcm', token: 'ios-app-1' })
  t.equal(device.status, 201)
  const quiet = await fx.call(service, 'POST', '/messages', { device_id: device.json.id, data: { sync: 'inbox' }, collapse_key: 'sync' })
  t.equal(quiet.status, 201, JSON.stringify(quiet.json))
  await settled(fx, 1)
  const background = peer.delivered[0]!.message
  t.notOk('notification' in background, 'no notification block')
  t.same(background.data, { sync: 'inbox' })
  t.same(background.apns, {
    headers: { 'apns-priority': '5', 'apns-collapse-id': 'sync', 'apns-push-type': 'background' },
    payload: { aps: { 'content-available': 1 } },
  })

  // A message with a title stays an alert: no background markers.
  t.equal((await fx.call(service, 'POST', '/messages', { device_id: device.json.id, title: 'Hello', data: { a: 'b' } })).status, 201)
  await settled(fx, 2)
  const alert = peer.delivered[1]!.message
  t.same(alert.notification, { title: 'Hello' })
  t.same(alert.apns, { headers: { 'apns-priority': '10' } })
})
