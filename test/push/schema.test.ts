// Schema push: installation, devices under RLS, sending under RLS (no policy:
// only service_role), fan-out to queue rows, the Free plan's send_at refusal.
import t from 'tap'
import { pushFixture, service, user, newUserId } from './helpers.ts'
import { startWebPushReceiver } from '../../dev/push-peers/webpush-receiver.ts'
import { setProjectProduct } from '../../control-plane/projects.ts'

t.test('enabling push installs the schema and a VAPID key pair', async (t) => {
  const fx = await pushFixture(t)
  const { rows } = await fx.admin(`select public_key, private_key, subject from push.vapid_keys`)
  t.equal(rows.length, 1)
  t.equal(Buffer.from(rows[0].public_key, 'base64url').length, 65, 'an uncompressed P-256 public key')
  const plan = await fx.admin('select plan from push.settings')
  t.equal(plan.rows[0].plan, 'free')
  // Enabling again keeps the keys.
  await setProjectProduct(fx.controlPlane, fx.project.ref, 'push', true)
  const again = await fx.admin('select public_key from push.vapid_keys')
  t.equal(again.rows[0].public_key, rows[0].public_key)
  const vapid = await fx.call({ kind: 'anon' }, 'GET', '/vapid')
  t.equal(vapid.status, 200)
  t.equal(vapid.json.public_key, rows[0].public_key)
})

t.test('devices register with a user token and are visible only to their owner', async (t) => {
  const fx = await pushFixture(t)
  const receiver = await startWebPushReceiver()
  t.teardown(() => receiver.close())
  const alice = newUserId()
  const bob = newUserId()
  const anon = await fx.call({ kind: 'anon' }, 'POST', '/devices', { platform: 'apns', token: 'ab'.repeat(32) })
  t.equal(anon.status, 401)
  t.equal(anon.json.code, 'user_token_required')
  const a1 = await fx.call(user(alice), 'POST', '/devices', { platform: 'apns', token: 'ab'.repeat(32) })
  t.equal(a1.status, 201, JSON.stringify(a1.json))
  t.equal(a1.json.user_id, alice)
  const a2 = await fx.call(user(alice), 'POST', '/devices', { platform: 'web', subscription: receiver.subscribe() })
  t.equal(a2.status, 201, JSON.stringify(a2.json))
  const b1 = await fx.call(user(bob), 'POST', '/devices', { platform: 'fcm', token: 'fcm-token-of-bob' })
  t.equal(b1.status, 201)
  const bad = await fx.call(user(bob), 'POST', '/devices', { platform: 'apns', token: 'not hex' })
  t.equal(bad.status, 400)
  t.equal(bad.json.code, 'validation_failed')
  const naming = await fx.call(user(bob), 'POST', '/devices', { platform: 'fcm', token: 'x', user_id: alice })
  t.equal(naming.status, 400, 'a user cannot register a device for someone else')

  const listA = await fx.call<Array<{ id: string }>>(user(alice), 'GET', '/devices')
  t.same(listA.json.map((d) => d.id).sort(), [a1.json.id, a2.json.id].sort())
  const listB = await fx.call<Array<{ id: string }>>(user(bob), 'GET', '/devices')
  t.same(listB.json.map((d) => d.id), [b1.json.id])
  const all = await fx.call(service, 'GET', '/devices')
  t.equal(all.json.length, 3)

  // Bob cannot delete Alice's device; Alice can.
  t.equal((await fx.call(user(bob), 'DELETE', `/devices/${a1.json.id}`)).status, 404)
  // The same token registered by Bob moves to Bob.
  const moved = await fx.call(user(bob), 'POST', '/devices', { platform: 'apns', token: 'ab'.repeat(32) })
  t.equal(moved.status, 201)
  t.equal(moved.json.user_id, bob)
  t.equal((await fx.call<Array<{ id: string }>>(user(alice), 'GET', '/devices')).json.length, 1)
  t.equal((await fx.call(user(alice), 'DELETE', `/devices/${a2.json.id}`)).status, 204)
  t.equal((await fx.call<Array<{ id: string }>>(user(alice), 'GET', '/devices')).json.length, 0)
})

t.test('sending: no policy means only service_role; a policy lets users notify their own devices', async (t) => {
  const fx = await pushFixture(t)
  const alice = newUserId()
  const bob = newUserId()
  const a = await fx.call(user(alice), 'POST', '/devices', { platform: 'apns', token: 'a1'.repeat(32) })
  await fx.call(user(alice), 'POST', '/devices', { platform: 'fcm', token: 'fcm-alice' })
  const b = await fx.call(user(bob), 'POST', '/devices', { platform: 'apns', token: 'b2'.repeat(32) })

  const sent = await fx.call(service, 'POST', '/messages', { user_id: alice, title: 'Hi', body: 'there', data: { n: 1 } })
  t.equal(sent.status, 201, JSON.stringify(sent.json))
  const queue = await fx.admin('select device_id, platform, apns_id from push.queue where message_id = $1 order by platform', [sent.json.id])
  t.equal(queue.rows.length, 2, 'one queue row per device of the user')
  t.same(queue.rows.map((r) => r.platform), ['apns', 'fcm'])

  const refused = await fx.call(user(alice), 'POST', '/messages', { user_id: alice, title: 'self' })
  t.equal(refused.status, 403)
  t.equal(refused.json.code, 'send_not_allowed')
  const anonRefused = await fx.call({ kind: 'anon' }, 'POST', '/messages', { user_id: alice, title: 'x' })
  t.equal(anonRefused.status, 403)
  const count = await fx.admin('select count(*)::int as n from push.messages')
  t.equal(count.rows[0].n, 1, 'nothing written by refused sends')

  // SQL as the authenticated role is refused the same way.
  await t.rejects(
    fx.admin(`begin; set local role authenticated; select set_config('request.jwt.claims', $1, true);
              insert into push.messages (user_id, title) values ('${alice}', 'sql'); commit;`.replace('$1', `'{"sub":"${alice}","role":"authenticated"}'`)),
    /row-level security/,
  )
  // ...and allowed as service_role.
  await fx.admin(`begin; set local role service_role; insert into push.messages (device_id, title) values ('${b.json.id}', 'from sql'); commit;`)
  t.equal((await fx.admin(`select count(*)::int as n from push.queue where device_id = $1`, [b.json.id])).rows[0].n, 1)

  // The developers add a policy: users may notify only their own devices.
  await fx.owner(`create policy notify_self on push.messages for insert to authenticated
                  with check (user_id = auth.uid() or device_id in (select id from push.devices where user_id = auth.uid()))`)
  const own = await fx.call(user(alice), 'POST', '/messages', { user_id: alice, title: 'self' })
  t.equal(own.status, 201, JSON.stringify(own.json))
  const ownDevice = await fx.call(user(alice), 'POST', '/messages', { device_id: a.json.id, title: 'device' })
  t.equal(ownDevice.status, 201)
  const other = await fx.call(user(alice), 'POST', '/messages', { user_id: bob, title: 'spam' })
  t.equal(other.status, 403)
  const otherDevice = await fx.call(user(alice), 'POST', '/messages', { device_id: b.json.id, title: 'spam' })
  t.equal(otherDevice.status, 403)
  // A batch is one statement: one refused row refuses all.
  const mixed = await fx.call(user(alice), 'POST', '/messages', [{ user_id: alice, title: 'ok' }, { user_id: bob, title: 'no' }])
  t.equal(mixed.status, 403)
  t.equal((await fx.admin(`select count(*)::int as n from push.messages where title in ('ok', 'no')`)).rows[0].n, 0)

  // Validation.
  const invalid = await fx.call(service, 'POST', '/messages', { title: 'nobody' })
  t.equal(invalid.status, 400)
  t.equal(invalid.json.code, 'validation_failed')
  t.equal((await fx.call(service, 'POST', '/messages', '{')).json.code, 'invalid_json')
})

t.test('send_at in the future: refused on Free with the reason, scheduled on paid plans', async (t) => {
  const fx = await pushFixture(t)
  const alice = newUserId()
  await fx.call(user(alice), 'POST', '/devices', { platform: 'fcm', token: 'fcm-alice' })
  const later = new Date(Date.now() + 3600_000).toISOString()
  const refused = await fx.call(service, 'POST', '/messages', { user_id: alice, title: 'later', send_at: later })
  t.equal(refused.status, 403)
  t.equal(refused.json.code, 'send_at_not_available')
  t.match(refused.json.message, /not available on the Free plan/)
  t.match(refused.json.hint, /Plus, Pro or Business/)
  await t.rejects(
    fx.admin(`begin; set local role service_role; insert into push.messages (user_id, send_at) values ('${alice}', now() + interval '1 day'); commit;`),
    /Free plan/,
    'the same refusal from SQL',
  )
  const now = await fx.call(service, 'POST', '/messages', { user_id: alice, title: 'now', send_at: new Date().toISOString() })
  t.equal(now.status, 201, 'a send_at of now is fine on Free')

  await fx.setPlan('plus')
  const scheduled = await fx.call(service, 'POST', '/messages', { user_id: alice, title: 'later', send_at: later })
  t.equal(scheduled.status, 201, JSON.stringify(scheduled.json))
  const { rows } = await fx.admin('select run_at from push.queue where message_id = $1', [scheduled.json.id])
  t.equal(new Date(rows[0].run_at).toISOString(), later)
})

t.test('message reads and delivery status follow RLS', async (t) => {
  const fx = await pushFixture(t)
  const alice = newUserId()
  await fx.call(user(alice), 'POST', '/devices', { platform: 'fcm', token: 'fcm-alice' })
  const sent = await fx.call(service, 'POST', '/messages', { user_id: alice, title: 'x', ttl: 60, priority: 'normal', collapse_key: 'k' })
  const read = await fx.call(service, 'GET', `/messages/${sent.json.id}`)
  t.equal(read.status, 200)
  t.equal(read.json.deliveries.length, 1)
  t.equal(read.json.deliveries[0].status, 'queued')
  t.equal(read.json.ttl, 60)
  const asUser = await fx.call(user(alice), 'GET', `/messages/${sent.json.id}`)
  t.equal(asUser.status, 404, 'no select policy on messages: users do not see them')
  t.equal((await fx.call(service, 'GET', '/nope')).status, 404)
  t.equal((await fx.call(service, 'PATCH', '/messages')).status, 405)
})
