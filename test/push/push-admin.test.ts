// The operator's Push operations (control-plane/push-admin.ts), which the
// dashboard's Push page, the CLI and the admin API share: credentials shown
// only by what identifies them, removed; devices and the delivery log with
// filters and pages; a test notification delivered by the project's actor.
import t from 'tap'
import { BaseplaneError } from '../../lib/errors.ts'
import {
  listPushDevices,
  pushDeliveryLog,
  removePushCredentials,
  sendTestNotification,
  setPushCredentials,
  showPushCredentials,
} from '../../control-plane/push-admin.ts'
import { eventually, newUserId, pushFixture, service, user } from './helpers.ts'
import { makeApnsKey, makeServiceAccount } from '../../dev/push-peers/keys.ts'
import { startApnsPeer } from '../../dev/push-peers/apns-peer.ts'
import { startFcmPeer } from '../../dev/push-peers/fcm-peer.ts'
import { createProject } from '../../control-plane/projects.ts'

const TOPIC = 'com.example.admin'
const hex = (prefix: string, n: number) => (prefix + n.toString(16).padStart(8, '0')).padEnd(64, '0')

async function refusal(promise: Promise<unknown>): Promise<BaseplaneError> {
  const error = await promise.then(() => undefined, (e: unknown) => e)
  if (!BaseplaneError.is(error)) throw new Error(`expected a refusal, got ${String(error)}`)
  return error
}

t.test('credentials: set through the same checks, shown without the keys, stopped with what to do, removed', async (t) => {
  const fcmPeer = await startFcmPeer()
  t.teardown(() => fcmPeer.close())
  const key = makeApnsKey()
  const apnsPeer = await startApnsPeer({ teamId: key.teamId, keyId: key.keyId, publicKey: key.publicKey, topic: TOPIC })
  t.teardown(() => apnsPeer.close())
  const fx = await pushFixture(t, { endpoints: { apnsUrl: apnsPeer.url } })
  const cp = fx.controlPlane
  const ref = fx.project.ref

  const none = await showPushCredentials(cp, ref)
  t.equal(none.apns, null)
  t.equal(none.fcm, null)
  t.match(none.web.public_key, /^[A-Za-z0-9_-]{80,}$/)

  t.equal((await refusal(setPushCredentials(cp, ref, 'apns', { topic: TOPIC, key_id: key.keyId, team_id: key.teamId, keys: [{ p8: 'not a key' }] }))).code, 'invalid_apns_key')
  t.equal((await refusal(setPushCredentials(cp, ref, 'apns', { topic: TOPIC, key_id: 'short', team_id: key.teamId, keys: [{ p8: key.p8 }] }))).code, 'validation_failed')
  const account = makeServiceAccount()
  const refused = await refusal(setPushCredentials(cp, ref, 'fcm', JSON.stringify(account.file), { fcmTokenUrl: fcmPeer.tokenUrl }))
  t.equal(refused.code, 'service_account_refused', 'an account the token endpoint does not know is refused')
  t.equal((await refusal(setPushCredentials(cp, ref, 'hms', {}))).code, 'invalid_argument')
  t.equal((await showPushCredentials(cp, ref)).apns, null, 'nothing stored by the refusals')

  const stored = await setPushCredentials(cp, ref, 'apns', { topic: TOPIC, key_id: key.keyId, team_id: key.teamId, keys: [{ p8: key.p8 }] })
  t.match(stored, { platform: 'apns', topic: TOPIC })
  fcmPeer.allow(account.file.client_email, account.file.project_id, account.publicKey)
  await setPushCredentials(cp, ref, 'fcm', JSON.stringify(account.file), { fcmTokenUrl: fcmPeer.tokenUrl })
  const shown = await showPushCredentials(cp, ref)
  t.strictSame(Object.keys(shown.apns!).sort(), ['created_at', 'environment', 'key_id', 'platform', 'stopped_at', 'stopped_reason', 'team_id', 'topic', 'updated_at', 'what_to_do'])
  t.match(shown.apns, { topic: TOPIC, key_id: key.keyId, team_id: key.teamId, stopped_reason: null, what_to_do: null })
  t.match(shown.fcm, { project_id: account.file.project_id, client_email: account.file.client_email, stopped_reason: null })
  t.notMatch(JSON.stringify(shown), /PRIVATE KEY/, 'never the keys')

  // Apple refuses the key: the actor stops APNs and the view says what to do.
  await fx.startHost()
  const alice = newUserId()
  const device = await fx.call(user(alice), 'POST', '/devices', { platform: 'apns', token: hex('c', 1) })
  apnsPeer.script.set(hex('c', 1), [{ status: 403, reason: 'InvalidProviderToken' }])
  t.equal((await fx.call(service, 'POST', '/messages', { device_id: device.json.id, title: 'x' })).status, 201)
  const stopped = await eventually(async () => {
    const apns = (await showPushCredentials(cp, ref)).apns
    return apns?.stopped_reason ? apns : undefined
  })
  t.equal(stopped.stopped_reason, 'APNs: InvalidProviderToken')
  t.match(stopped.what_to_do, /key id and team id belong to this \.p8 file.*Storing keys again/)

  t.strictSame(await removePushCredentials(cp, ref, 'apns'), { ref, removed: 'apns' })
  t.equal((await showPushCredentials(cp, ref)).apns, null)
  const again = await refusal(removePushCredentials(cp, ref, 'apns'))
  t.equal(again.code, 'credentials_not_found')
  t.equal(again.status, 404)
  t.equal((await refusal(removePushCredentials(cp, ref, 'web'))).code, 'invalid_argument', 'Web Push keys are the project\'s own, not removable')
  t.equal((await refusal(showPushCredentials(cp, 'nosuchref'))).code, 'project_not_found')
  const off = await createProject(cp, { name: 'push off' })
  t.equal((await refusal(showPushCredentials(cp, off.ref))).code, 'product_disabled')
})

t.test('devices and the delivery log: filters, pages, bad filters; a test notification to one device', async (t) => {
  const key = makeApnsKey()
  const peer = await startApnsPeer({ teamId: key.teamId, keyId: key.keyId, publicKey: key.publicKey, topic: TOPIC })
  t.teardown(() => peer.close())
  const fx = await pushFixture(t, { endpoints: { apnsUrl: peer.url } })
  const cp = fx.controlPlane
  const ref = fx.project.ref
  await setPushCredentials(cp, ref, 'apns', { topic: TOPIC, key_id: key.keyId, team_id: key.teamId, keys: [{ p8: key.p8 }] })
  await fx.startHost()
  const alice = newUserId()
  const bob = newUserId()
  const ids: string[] = []
  for (let i = 0; i < 3; i++) ids.push((await fx.call(user(alice), 'POST', '/devices', { platform: 'apns', token: hex('a', i) })).json.id)
  const dead = (await fx.call(user(bob), 'POST', '/devices', { platform: 'apns', token: hex('dead', 1) })).json.id
  await fx.call(user(bob), 'POST', '/devices', { platform: 'fcm', token: 'fcm-token-bob' })

  const all = await listPushDevices(cp, ref)
  t.equal(all.devices.length, 5)
  t.equal(all.next_offset, null)
  t.strictSame(Object.keys(all.devices[0]!).sort(), ['active', 'app', 'created_at', 'deactivated_at', 'deactivated_reason', 'id', 'platform', 'token_prefix', 'user_id'])
  t.equal(all.devices.find((d) => d.id === ids[0])!.token_prefix, `${hex('a', 0).slice(0, 16)}…`, 'only the start of a token')
  t.equal((await listPushDevices(cp, ref, { user: alice })).devices.length, 3)
  t.equal((await listPushDevices(cp, ref, { platform: 'fcm' })).devices.length, 1)
  const first = await listPushDevices(cp, ref, { limit: 2 })
  t.equal(first.devices.length, 2)
  t.equal(first.next_offset, 2)
  const rest = await listPushDevices(cp, ref, { limit: 2, offset: 4 })
  t.equal(rest.devices.length, 1)
  t.equal(rest.next_offset, null)
  t.strictSame(new Set([...first.devices, ...(await listPushDevices(cp, ref, { limit: 2, offset: 2 })).devices, ...rest.devices].map((d) => d.id)).size, 5, 'pages do not overlap')

  // A test notification to Alice's first device, one to Bob's dead one (deactivated by APNs' 410).
  const test = await sendTestNotification(cp, ref, ids[0]!, { title: 'Ping' })
  t.equal(test.device_id, ids[0])
  await eventually(() => peer.delivered.length === 1, 10000, 'test delivered')
  t.match(peer.delivered[0], { token: hex('a', 0), payload: { aps: { alert: { title: 'Ping' } }, baseplane_test: true } })
  await sendTestNotification(cp, ref, dead)
  await eventually(async () => (await listPushDevices(cp, ref, { active: false })).devices.length > 0, 10000, 'deactivated')
  const inactive = (await listPushDevices(cp, ref, { active: false })).devices
  t.match(inactive, [{ id: dead, active: false, deactivated_reason: /Unregistered/ }])
  const refusedInactive = await refusal(sendTestNotification(cp, ref, dead))
  t.equal(refusedInactive.code, 'device_inactive')
  t.match(refusedInactive.message, /Unregistered/)
  t.equal((await refusal(sendTestNotification(cp, ref, newUserId()))).code, 'device_not_found')
  t.match(await refusal(sendTestNotification(cp, ref, 'nope')), { code: 'invalid_argument', message: '"nope" is not a device id (a UUID)' })

  for (let i = 1; i < 3; i++) await sendTestNotification(cp, ref, ids[i]!)
  await eventually(() => peer.delivered.length === 3, 10000, 'three delivered')
  const log = await eventually(async () => {
    const page = await pushDeliveryLog(cp, ref)
    return page.entries.length === 4 && page
  }, 10000, 'four log entries')
  t.strictSame(Object.keys(log.entries[0]!).sort(), ['attempt', 'attempted_at', 'device_id', 'http_status', 'id', 'message_id', 'provider', 'reason', 'status', 'title', 'user_id'])
  const one = log.entries[0]!
  t.same((await pushDeliveryLog(cp, ref, { message: one.message_id.toUpperCase() })).entries.map((e) => e.message_id), [one.message_id], 'one message\'s attempts')
  t.ok(log.entries.every((e, i) => i === 0 || e.id < log.entries[i - 1]!.id), 'newest first')
  const failed = await pushDeliveryLog(cp, ref, { status: 'failed' })
  t.match(failed.entries, [{ device_id: dead, user_id: bob, status: 'failed', provider: 'apns', attempt: 1, http_status: 410, reason: 'APNs: Unregistered' }])
  t.equal((await pushDeliveryLog(cp, ref, { user: alice })).entries.length, 3)
  t.equal((await pushDeliveryLog(cp, ref, { user: alice, status: 'failed' })).entries.length, 0)
  t.equal((await pushDeliveryLog(cp, ref, { provider: 'fcm' })).entries.length, 0)
  const page1 = await pushDeliveryLog(cp, ref, { limit: 3 })
  t.equal(page1.entries.length, 3)
  t.equal(page1.next_before, page1.entries[2]!.id)
  const page2 = await pushDeliveryLog(cp, ref, { limit: 3, before: page1.next_before! })
  t.equal(page2.entries.length, 1)
  t.equal(page2.next_before, null)

  for (const [filter, message] of [
    [{ status: 'lost' }, /status must be one of sent, failed, retry, held, expired/],
    [{ provider: 'hms' }, /provider must be one of apns, fcm, web/],
    [{ user: 'alice' }, /user must be a user id/],
    [{ limit: 0 }, /limit must be a whole number from 1 to 500/],
    [{ limit: 501 }, /limit must be a whole number from 1 to 500/],
    [{ before: -1 }, /before must be a whole number/],
    [{ message: 'latest' }, /message must be a message id \(a UUID\), got "latest"/],
  ] as const) {
    const error = await refusal(pushDeliveryLog(cp, ref, filter))
    t.equal(error.code, 'invalid_argument')
    t.match(error.message, message)
  }
  t.match((await refusal(listPushDevices(cp, ref, { platform: 'ios' }))).message, /platform must be one of apns, fcm, web/)
  t.match((await refusal(listPushDevices(cp, ref, { offset: -2 }))).message, /offset must be a whole number/)
})
