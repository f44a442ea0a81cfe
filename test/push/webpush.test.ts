// Web Push end to end: insert -> actor -> HTTP/2 to the push service ->
// the receiver checks VAPID and decrypts the aes128gcm payload.
import t from 'tap'
import { eventually, newUserId, pushFixture, service, user } from './helpers.ts'
import { startWebPushReceiver } from '../../dev/push-peers/webpush-receiver.ts'

t.test('a message reaches every web subscription of the user, decrypted and VAPID-signed', async (t) => {
  const receiver = await startWebPushReceiver()
  t.teardown(() => receiver.close())
  const fx = await pushFixture(t)
  await fx.startHost()
  const alice = newUserId()
  const subs = [receiver.subscribe(), receiver.subscribe()]
  for (const subscription of subs) {
    const r = await fx.call(user(alice), 'POST', '/devices', { platform: 'web', subscription })
    t.equal(r.status, 201)
  }
  const sent = await fx.call(service, 'POST', '/messages', {
    user_id: alice,
    title: 'Hello',
    body: 'from Baseplane',
    data: { url: '/inbox/7' },
    ttl: 600,
    priority: 'normal',
    collapse_key: 'inbox',
  })
  t.equal(sent.status, 201)
  await eventually(() => receiver.received.length >= 2, 10000, 'two web pushes')
  t.same(receiver.rejected, [])
  const vapid = (await fx.admin('select public_key from push.vapid_keys')).rows[0].public_key
  for (const got of receiver.received) {
    t.same(got.payload, { id: sent.json.id, title: 'Hello', body: 'from Baseplane', data: { url: '/inbox/7' } })
    t.equal(got.vapidPublicKey, vapid, 'signed with the project VAPID key')
    t.equal(got.urgency, 'normal')
    t.equal(got.topic, 'inbox')
    t.ok(Number(got.ttl) > 590 && Number(got.ttl) <= 600, `TTL ${got.ttl}`)
  }
  t.same(receiver.received.map((r) => new URL(subs.find((s) => s.endpoint.endsWith(r.path))!.endpoint).pathname).sort(), subs.map((s) => new URL(s.endpoint).pathname).sort())
  const log = await eventually(async () => {
    const { rows } = await fx.admin(`select provider, status, http_status, reason, provider_id from push.delivery_log where message_id = $1`, [sent.json.id])
    return rows.length === 2 && rows
  })
  t.ok(log.every((r: { provider: string; status: string; http_status: number; provider_id: string }) => r.provider === 'web' && r.status === 'sent' && r.http_status === 201 && r.provider_id.startsWith(receiver.origin)))
  const queue = await fx.admin(`select count(*)::int as n from push.queue where message_id = $1`, [sent.json.id])
  t.equal(queue.rows[0].n, 0, 'settled rows leave the queue')
  const read = await fx.call(service, 'GET', `/messages/${sent.json.id}`)
  t.same(read.json.deliveries.map((d) => d.status), ['sent', 'sent'])
})

t.test('gone subscriptions (404, 410) are deactivated; 429 and 5xx are retried', async (t) => {
  const receiver = await startWebPushReceiver()
  t.teardown(() => receiver.close())
  const fx = await pushFixture(t)
  await fx.startHost()
  const alice = newUserId()
  const gone = receiver.subscribe()
  const flaky = receiver.subscribe()
  receiver.script.set(new URL(gone.endpoint).pathname, [{ status: 410 }])
  receiver.script.set(new URL(flaky.endpoint).pathname, [{ status: 429, retryAfter: 1 }, { status: 503 }])
  const g = await fx.call(user(alice), 'POST', '/devices', { platform: 'web', subscription: gone })
  const f = await fx.call(user(alice), 'POST', '/devices', { platform: 'web', subscription: flaky })
  const sent = await fx.call(service, 'POST', '/messages', { user_id: alice, title: 'x' })
  await eventually(async () => {
    const { rows } = await fx.admin(`select count(distinct queue_id)::int as n from push.delivery_log where message_id = $1 and status in ('sent', 'failed')`, [sent.json.id])
    return rows[0].n === 2
  }, 15000, 'both settled')
  const log = await fx.admin(`select device_id, status, reason, attempt from push.delivery_log where message_id = $1 order by id`, [sent.json.id])
  const goneLog = log.rows.filter((r) => r.device_id === g.json.id)
  t.same(goneLog.map((r) => [r.status, r.reason]), [['failed', 'Web Push: 410 Gone']])
  const flakyLog = log.rows.filter((r) => r.device_id !== g.json.id)
  t.same(flakyLog.map((r) => [r.status, r.reason, r.attempt]), [
    ['retry', 'Web Push: 429 Too Many Requests', 1],
    ['retry', 'Web Push: 503 Service Unavailable', 2],
    ['sent', null, 3],
  ])
  const device = await fx.admin('select active, deactivated_reason from push.devices where id = $1', [g.json.id])
  t.same(device.rows[0], { active: false, deactivated_reason: 'Web Push: 410 Gone' })
  // A deactivated device gets nothing more: the next message goes to the active device only.
  const next = await fx.call(service, 'POST', '/messages', { user_id: alice, title: 'y' })
  await eventually(async () => {
    const { rows } = await fx.admin(`select count(*)::int as n from push.delivery_log where message_id = $1 and status = 'sent'`, [next.json.id])
    return rows[0].n === 1
  }, 15000, 'the next message delivered')
  const targets = await fx.admin(
    `select device_id from push.delivery_log where message_id = $1 union select device_id from push.queue where message_id = $1`,
    [next.json.id],
  )
  t.same(targets.rows.map((r) => r.device_id), [f.json.id])
})

t.test('a push service without HTTP/2 gets the same request over HTTP/1.1', async (t) => {
  const receiver = await startWebPushReceiver({ http1: true })
  t.teardown(() => receiver.close())
  const fx = await pushFixture(t)
  await fx.startHost()
  const alice = newUserId()
  await fx.call(user(alice), 'POST', '/devices', { platform: 'web', subscription: receiver.subscribe() })
  const sent = await fx.call(service, 'POST', '/messages', { user_id: alice, title: 'over h1', data: { k: 'v' } })
  await eventually(() => receiver.received.length === 1, 10000, 'delivery over HTTP/1.1')
  t.same(receiver.received[0]!.payload, { id: sent.json.id, title: 'over h1', body: null, data: { k: 'v' } })
  t.same(receiver.rejected, [])
  const log = await eventually(async () => (await fx.admin(`select status, http_status from push.delivery_log`)).rows[0])
  t.same(log, { status: 'sent', http_status: 201 })
})
