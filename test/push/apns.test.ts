// APNs against an HTTP/2 stand-in that checks the provider JWT, topic and
// headers, answers Apple's reasons, and allows one stream until a valid token.
import t, { type Test } from 'tap'
import type { CredentialStatus } from '../../workers/push/credentials.ts'
import { ApnsTokens } from '../../workers/push/providers/apns-token.ts'
import { eventually, newUserId, pushFixture, service, user, type PushFixture } from './helpers.ts'
import { makeApnsKey } from '../../dev/push-peers/keys.ts'
import { startApnsPeer } from '../../dev/push-peers/apns-peer.ts'

const TOPIC = 'com.example.app'
const hex = (prefix: string, n: number) => (prefix + n.toString(16).padStart(8, '0')).padEnd(64, '0')

async function setup(t: Test, options: { plan?: 'free' | 'plus' | 'business'; maxStreams?: number; latencyMs?: number } = {}) {
  const key = makeApnsKey()
  const peer = await startApnsPeer({ teamId: key.teamId, keyId: key.keyId, publicKey: key.publicKey, topic: TOPIC, maxStreams: options.maxStreams, latencyMs: options.latencyMs })
  t.teardown(() => peer.close())
  const fx = await pushFixture(t, { plan: options.plan, endpoints: { apnsUrl: peer.url } })
  const put = await fx.call(service, 'PUT', '/credentials/apns', { topic: TOPIC, key_id: key.keyId, team_id: key.teamId, keys: [{ p8: key.p8 }] })
  t.equal(put.status, 200, JSON.stringify(put.json))
  return { key, peer, fx }
}

async function device(fx: PushFixture, owner: string, token: string): Promise<string> {
  const r = await fx.call(user(owner), 'POST', '/devices', { platform: 'apns', token })
  if (r.status !== 201) throw new Error(JSON.stringify(r.json))
  return r.json.id
}

async function settled(fx: PushFixture, count: number, ms = 15000) {
  await eventually(async () => {
    const { rows } = await fx.admin(`select count(distinct queue_id)::int as n from push.delivery_log where status in ('sent', 'failed', 'expired')`)
    return rows[0].n >= count
  }, ms, `${count} settled deliveries`)
}

t.test('credentials: only service_role; the .p8 must be a P-256 signing key; never shown again', async (t) => {
  const { fx, key } = await setup(t)
  const body = { topic: TOPIC, key_id: key.keyId, team_id: key.teamId, keys: [{ p8: key.p8 }] }
  t.equal((await fx.call(user(newUserId()), 'PUT', '/credentials/apns', body)).json.code, 'service_role_required')
  t.equal((await fx.call({ kind: 'anon' }, 'PUT', '/credentials/apns', body)).status, 403)
  const rsa = (await import('node:crypto')).generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' })
  const wrongCurve = (await import('node:crypto')).generateKeyPairSync('ec', { namedCurve: 'secp384r1' }).privateKey.export({ type: 'pkcs8', format: 'pem' })
  for (const p8 of ['not a key', rsa, wrongCurve]) {
    const r = await fx.call(service, 'PUT', '/credentials/apns', { ...body, keys: [{ p8 }] })
    t.equal(r.status, 400)
    t.equal(r.json.code, 'invalid_apns_key', r.json.message)
  }
  t.equal((await fx.call(service, 'PUT', '/credentials/apns', { ...body, key_id: 'short' })).json.code, 'validation_failed')
  const listed = await fx.call<CredentialStatus>(service, 'GET', '/credentials')
  t.equal(listed.status, 200)
  t.match(listed.json.apns, { topic: TOPIC, key_id: key.keyId, team_id: key.teamId, environment: 'production', stopped_reason: null })
  t.notMatch(listed.body, /PRIVATE KEY/, 'the key is not returned')
  t.equal(listed.json.web.public_key.length > 80, true)
  // Not readable by the API roles from SQL.
  for (const role of ['anon', 'authenticated', 'service_role']) {
    await t.rejects(fx.admin(`begin; set local role ${role}; select secret from push.credentials; commit;`), /permission denied/, role)
  }
  await t.rejects(fx.owner('select secret from push.credentials'), /permission denied/, 'owner role')
})

t.test('a notification arrives with the JWT, topic, headers and a deterministic apns-id; streams follow the peer', async (t) => {
  const { fx, peer } = await setup(t, { plan: 'business', maxStreams: 10, latencyMs: 20 })
  await fx.startHost()
  const alice = newUserId()
  const tokens = Array.from({ length: 60 }, (_, i) => hex('a', i))
  for (const token of tokens) await device(fx, alice, token)
  const sent = await fx.call(service, 'POST', '/messages', { user_id: alice, title: 'T', body: 'B', data: { deep: 'link' }, collapse_key: 'c1', ttl: 3600 })
  t.equal(sent.status, 201)
  await settled(fx, 60)
  t.equal(peer.delivered.length, 60)
  const ids = await fx.admin(`select md5(m.id::text || d.id::text)::uuid::text as apns_id, d.token from push.messages m, push.devices d`)
  const expected = new Map(ids.rows.map((r) => [r.token, r.apns_id]))
  for (const d of peer.delivered) {
    t.equal(d.apnsId, expected.get(d.token))
    t.equal(d.topic, TOPIC)
    t.equal(d.pushType, 'alert')
    t.equal(d.priority, '10')
    t.equal(d.collapseId, 'c1')
    t.ok(Math.abs(Number(d.expiration) - (Date.now() / 1000 + 3600)) < 60)
    t.same(d.payload, { deep: 'link', aps: { alert: { title: 'T', body: 'B' } } })
  }
  t.equal(peer.stats.overLimit, 0, 'never more streams than the peer allowed')
  t.ok(peer.stats.maxConcurrent > 1 && peer.stats.maxConcurrent <= 10, `max concurrent ${peer.stats.maxConcurrent}`)
  t.equal(peer.jwtsSeen().size, 1, 'one provider token for all')
  const log = await fx.admin(`select status, provider, provider_id, http_status from push.delivery_log`)
  t.equal(log.rows.length, 60)
  const apnsIds = new Set(expected.values())
  t.ok(log.rows.every((r) => r.status === 'sent' && r.provider === 'apns' && r.http_status === 200 && apnsIds.has(r.provider_id)))
  // A data-only message is a background push at priority 5.
  await fx.call(service, 'POST', '/messages', { device_id: (await fx.admin('select id from push.devices limit 1')).rows[0].id, data: { sync: true } })
  await settled(fx, 61)
  const bg = peer.delivered.at(-1)!
  t.equal(bg.pushType, 'background')
  t.equal(bg.priority, '5')
  t.same(bg.payload, { sync: true, aps: { 'content-available': 1 } })
})

t.test('reasons: 410 deactivates (by timestamp), BadDeviceToken fails, ExpiredProviderToken refreshes once', async (t) => {
  const { fx, peer } = await setup(t)
  await fx.startHost()
  const alice = newUserId()
  const gone = await device(fx, alice, hex('dead', 1))
  const bad = await device(fx, alice, hex('bad0', 1))
  const ok = await device(fx, alice, hex('0', 1))
  const reRegistered = await device(fx, alice, hex('1', 2))
  // APNs says this token was unregistered before the device registered again: keep it.
  peer.script.set(hex('1', 2), [{ status: 410, reason: 'Unregistered', timestamp: Date.now() - 3600_000 }])
  await fx.call(service, 'POST', '/messages', { user_id: alice, title: 'x' })
  await settled(fx, 4)
  const log = await fx.admin(`select device_id, status, reason, http_status from push.delivery_log`)
  const by = (id: string) => log.rows.find((r) => r.device_id === id)
  t.match(by(gone), { status: 'failed', reason: 'APNs: Unregistered', http_status: 410 })
  t.match(by(bad), { status: 'failed', reason: 'APNs: BadDeviceToken', http_status: 400 })
  t.match(by(ok), { status: 'sent' })
  t.match(by(reRegistered), { status: 'failed', reason: 'APNs: Unregistered' })
  const devices = await fx.admin(`select id, active from push.devices`)
  const active = new Map(devices.rows.map((r) => [r.id, r.active]))
  t.equal(active.get(gone), false)
  t.equal(active.get(bad), true)
  t.equal(active.get(reRegistered), true, 'registered after the 410 timestamp: stays active')

  // The stand-in now calls every token seen so far expired: one new token, one retry each.
  peer.expireSeenTokens()
  const before = peer.jwtsSeen().size
  const many = Array.from({ length: 20 }, (_, i) => hex('c', i))
  const bob = newUserId()
  for (const token of many) await device(fx, bob, token)
  await fx.call(service, 'POST', '/messages', { user_id: bob, title: 'after expiry' })
  await settled(fx, 24)
  t.equal(peer.jwtsSeen().size, before + 1, 'a single new provider token (generation guard)')
  const after = await fx.admin(`select status from push.delivery_log where device_id = any($1)`, [
    (await fx.admin(`select id from push.devices where user_id = $1`, [bob])).rows.map((r) => r.id),
  ])
  t.equal(after.rows.length, 20)
  t.ok(after.rows.every((r) => r.status === 'sent'))
})

t.test('a credential-level refusal stops APNs for the project until the keys change', async (t) => {
  const { fx, peer, key } = await setup(t)
  const other = (await import('../../dev/push-peers/keys.ts')).makeApnsKey(key.keyId, key.teamId)
  // A valid P-256 key, but not the one Apple knows for this key id.
  const put = await fx.call(service, 'PUT', '/credentials/apns', { topic: TOPIC, key_id: key.keyId, team_id: key.teamId, keys: [{ p8: other.p8 }] })
  t.equal(put.status, 200)
  await fx.startHost()
  const alice = newUserId()
  for (let i = 0; i < 8; i++) await device(fx, alice, hex('e', i))
  await fx.call(service, 'POST', '/messages', { user_id: alice, title: 'held' })
  const stopped = await eventually(async () => (await fx.call<CredentialStatus>(service, 'GET', '/credentials')).json.apns!.stopped_reason, 10000, 'stop')
  t.equal(stopped, 'APNs: InvalidProviderToken')
  await new Promise((r) => setTimeout(r, 300))
  t.ok(peer.answers.length < 8, `stopped after ${peer.answers.length} refused request(s), not one per message`)
  const held = await fx.admin(`select count(*)::int as n from push.queue`)
  t.equal(held.rows[0].n, 8, 'messages are held in the queue, not failed')
  const logged = await fx.admin(`select status, reason from push.delivery_log`)
  t.ok(logged.rows.length >= 1 && logged.rows.every((r) => r.status === 'held' && r.reason === 'APNs: InvalidProviderToken'))

  // The right key: the stop clears and the held messages go out.
  await fx.call(service, 'PUT', '/credentials/apns', { topic: TOPIC, key_id: key.keyId, team_id: key.teamId, keys: [{ p8: key.p8 }] })
  await settled(fx, 8)
  t.equal(peer.delivered.length, 8)
  t.equal((await fx.call<CredentialStatus>(service, 'GET', '/credentials')).json.apns!.stopped_reason, null)

  // A wrong topic (BadTopic) stops it the same way.
  await fx.call(service, 'PUT', '/credentials/apns', { topic: 'com.example.other', key_id: key.keyId, team_id: key.teamId, keys: [{ p8: key.p8 }] })
  await fx.call(service, 'POST', '/messages', { user_id: alice, title: 'bad topic' })
  t.equal(await eventually(async () => (await fx.call<CredentialStatus>(service, 'GET', '/credentials')).json.apns!.stopped_reason), 'APNs: BadTopic')
})

t.test('retries: Free gives up after a few; paid plans retry as long as the provider asks', async (t) => {
  for (const plan of ['free', 'plus'] as const) {
    await t.test(plan, async (t) => {
      const { fx, peer } = await setup(t, { plan })
      // Delays at 1/100: Free's schedule (10 s, 60 s, 180 s within 5 minutes) takes about 2.5 s here.
      await fx.startHost({ retryDelayScale: 0.01 })
      const token = hex('f', 1)
      const unavailable = Array.from({ length: 6 }, () => ({ status: 503, reason: 'ServiceUnavailable', retryAfter: 1 }))
      peer.script.set(token, unavailable)
      const id = await device(fx, newUserId(), token)
      await fx.call(service, 'POST', '/messages', { device_id: id, title: 'retry me' })
      await settled(fx, 1, 20000)
      const log = await fx.admin(`select status, reason, attempt from push.delivery_log order by id`)
      if (plan === 'free') {
        t.same(log.rows.map((r) => r.status), ['retry', 'retry', 'retry', 'failed'], 'four attempts, then given up')
        t.equal(log.rows.at(-1).reason, 'APNs: ServiceUnavailable')
        t.equal(peer.delivered.length, 0)
      } else {
        t.same(log.rows.map((r) => r.status), ['retry', 'retry', 'retry', 'retry', 'retry', 'retry', 'sent'])
        t.same(log.rows.map((r) => r.attempt), [1, 2, 3, 4, 5, 6, 7])
        t.equal(peer.delivered.length, 1)
      }
    })
  }
})

t.test('provider tokens are reused for 50 minutes, never remade within 20, refreshed once per generation', async (t) => {
  let now = 1_700_000_000_000
  const tokens = new ApnsTokens(() => now)
  const key = makeApnsKey()
  const signer = tokens.signer(key.teamId, key.keyId, key.p8)
  const first = await signer.get()
  now += 19 * 60_000
  t.equal((await signer.get()).jwt, first.jwt)
  now += 30 * 60_000
  t.equal((await signer.get()).jwt, first.jwt, 'still the same at 49 minutes')
  now += 2 * 60_000
  const second = await signer.get()
  t.not(second.jwt, first.jwt, 'remade after 50 minutes')
  const payload = JSON.parse(Buffer.from(second.jwt.split('.')[1]!, 'base64url').toString())
  t.same(payload, { iss: key.teamId, iat: Math.floor(now / 1000) })
  const header = JSON.parse(Buffer.from(second.jwt.split('.')[0]!, 'base64url').toString())
  t.same(header, { alg: 'ES256', kid: key.keyId })
  // Two streams failing with ExpiredProviderToken for the same generation make one new token.
  const [a, b] = await Promise.all([signer.refresh(second.generation), signer.refresh(second.generation)])
  t.equal(a.jwt, b.jwt)
  t.not(a.jwt, second.jwt)
})

t.test('in-flight deliveries follow the plan: a larger plan sends more at once', async (t) => {
  const seen: Record<string, number> = {}
  for (const plan of ['free', 'plus'] as const) {
    const { fx, peer } = await setup(t, { plan, latencyMs: 40 })
    await fx.startHost()
    const owner = newUserId()
    await fx.admin(`insert into push.devices (platform, token, user_id) select 'apns', md5(i::text) || md5(i::text), $1 from generate_series(1, 300) i`, [owner])
    await fx.call(service, 'POST', '/messages', { user_id: owner, title: plan })
    await settled(fx, 300, 20000)
    seen[plan] = peer.stats.maxConcurrent
  }
  t.ok(seen.free! <= 32, `free: at most 32 in flight (saw ${seen.free})`)
  t.ok(seen.plus! > 32 && seen.plus! <= 128, `plus: more than free, at most 128 (saw ${seen.plus})`)
})
