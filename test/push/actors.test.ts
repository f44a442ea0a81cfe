// One actor per project across nodes (a lease in the catalogue), and at-least-once
// delivery when an actor dies mid-batch.
import { spawn } from 'node:child_process'
import t, { type Test } from 'tap'
import { eventually, newUserId, pushFixture, service, user } from './helpers.ts'
import { makeApnsKey } from '../../dev/push-peers/keys.ts'
import { startApnsPeer } from '../../dev/push-peers/apns-peer.ts'

const TOPIC = 'com.example.app'
const hex = (prefix: string, n: number) => (prefix + n.toString(16).padStart(8, '0')).padEnd(64, '0')

async function setup(t: Test, latencyMs = 0) {
  const key = makeApnsKey()
  const peer = await startApnsPeer({ teamId: key.teamId, keyId: key.keyId, publicKey: key.publicKey, topic: TOPIC, latencyMs })
  t.teardown(() => peer.close())
  const fx = await pushFixture(t, { plan: 'pro', endpoints: { apnsUrl: peer.url } })
  const put = await fx.call(service, 'PUT', '/credentials/apns', { topic: TOPIC, key_id: key.keyId, team_id: key.teamId, keys: [{ p8: key.p8 }] })
  if (put.status !== 200) throw new Error(put.body)
  return { peer, fx, key }
}

t.test('an actor killed mid-batch loses nothing: its claimed rows are sent by the next one', async (t) => {
  const { peer, fx } = await setup(t, 300)
  const alice = newUserId()
  const tokens = Array.from({ length: 200 }, (_, i) => hex('a', i))
  for (const token of tokens) {
    const r = await fx.call(user(alice), 'POST', '/devices', { platform: 'apns', token })
    t.equal(r.status, 201)
  }
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/push/peers/actor-process.ts'], {
    env: { ...process.env, CATALOGUE_URL: fx.catalogueUrl, SERVER_URL: fx.server, APNS_URL: peer.url, BASEPLANE_LOG_LEVEL: 'silent' },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  t.teardown(() => child.kill('SIGKILL'))
  await new Promise<void>((resolve) => child.stdout!.on('data', (d) => String(d).includes('claimed') && resolve()))
  await fx.call(service, 'POST', '/messages', { user_id: alice, title: 'crash test' })
  await eventually(() => peer.stats.requests >= 50, 10000, 'requests in flight')
  child.kill('SIGKILL')
  await new Promise((resolve) => child.on('exit', resolve))
  const logged = await fx.admin(`select count(*)::int as n from push.delivery_log`)
  t.ok(logged.rows[0].n < peer.stats.requests, `${peer.stats.requests} requests reached APNs, ${logged.rows[0].n} were acknowledged before the crash`)
  t.ok((await fx.admin(`select count(*)::int as n from push.queue`)).rows[0].n > 0, 'unacknowledged rows are still queued')

  peer.setLatency(0)
  await fx.startHost()
  await eventually(async () => (await fx.admin(`select count(*)::int as n from push.queue`)).rows[0].n === 0, 15000, 'all sent')
  const deliveredTokens = new Set(peer.delivered.map((d) => d.token))
  t.equal(deliveredTokens.size, 200, 'every device got the notification')
  // Duplicates are possible (at-least-once) but carry the same apns-id.
  const idsByToken = new Map<string, Set<string>>()
  for (const d of peer.delivered) idsByToken.set(d.token, (idsByToken.get(d.token) ?? new Set()).add(d.apnsId))
  t.ok([...idsByToken.values()].every((ids) => ids.size === 1), 'one apns-id per message and device')
  const sentLog = await fx.admin(`select count(distinct queue_id)::int as n from push.delivery_log where status = 'sent'`)
  t.equal(sentLog.rows[0].n, 200)
})

t.test('two nodes, one actor per project; the other takes over when the first goes', async (t) => {
  const { peer, fx } = await setup(t)
  const a = await fx.startHost()
  const b = await fx.startHost()
  await eventually(() => a.claimed().length + b.claimed().length === 1, 5000, 'one claim')
  t.equal(a.claimed().length + b.claimed().length, 1, 'exactly one node runs the actor')
  const alice = newUserId()
  for (let i = 0; i < 100; i++) await fx.call(user(alice), 'POST', '/devices', { platform: 'apns', token: hex('b', i) })
  for (let i = 0; i < 3; i++) await fx.call(service, 'POST', '/messages', { user_id: alice, title: `m${i}` })
  await eventually(async () => (await fx.admin(`select count(*)::int as n from push.delivery_log where status = 'sent'`)).rows[0].n === 300, 15000, '300 sent')
  t.equal(peer.delivered.length, 300, 'each delivery sent once')
  t.equal(new Set(peer.delivered.map((d) => d.apnsId)).size, 300)

  const [holder, other] = a.claimed().length === 1 ? [a, b] : [b, a]
  await holder.stop()
  await eventually(() => other.claimed().length === 1, 5000, 'take-over')
  await fx.call(service, 'POST', '/messages', { user_id: alice, title: 'after take-over' })
  await eventually(() => peer.delivered.length === 400, 10000, '400 delivered')
  t.pass('the other node sends')
})
