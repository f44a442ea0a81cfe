// Sending is held by a lease that expires (workers/push/lease-keeper.ts): a
// holder frozen with SIGSTOP is replaced within the lease length plus a scan,
// sends nothing more once resumed, and nothing is lost on the way; nodes that
// do not send for an idle project keep no connection to its database.
import { spawn } from 'node:child_process'
import pg from 'pg'
import t, { type Test } from 'tap'
import { LEASE_DEFAULTS } from '../../lib/leases/lease-keeper.ts'
import { eventually, newUserId, pushFixture, service, user } from './helpers.ts'
import { makeApnsKey } from '../../dev/push-peers/keys.ts'
import { startApnsPeer } from '../../dev/push-peers/apns-peer.ts'

const TOPIC = 'com.example.lease'
const hex = (prefix: string, n: number) => (prefix + n.toString(16).padStart(8, '0')).padEnd(64, '0')
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function setup(t: Test) {
  const key = makeApnsKey()
  const peerOptions = { teamId: key.teamId, keyId: key.keyId, publicKey: key.publicKey, topic: TOPIC }
  // One peer per node, so each request is known by who sent it.
  const frozenPeer = await startApnsPeer({ ...peerOptions, latencyMs: 300 })
  const otherPeer = await startApnsPeer(peerOptions)
  t.teardown(() => frozenPeer.close())
  t.teardown(() => otherPeer.close())
  // Free plan: 32 in flight, claims of at most 64 rows (the window and one batch read ahead).
  const fx = await pushFixture(t, { plan: 'free' })
  const put = await fx.call(service, 'PUT', '/credentials/apns', { topic: TOPIC, key_id: key.keyId, team_id: key.teamId, keys: [{ p8: key.p8 }] })
  if (put.status !== 200) throw new Error(put.body)
  return { fx, frozenPeer, otherPeer }
}

t.test('a frozen holder is replaced within the lease, sends nothing once resumed, and nothing is lost', async (t) => {
  const { fx, frozenPeer, otherPeer } = await setup(t)
  const alice = newUserId()
  const tokens = Array.from({ length: 200 }, (_, i) => hex('c', i))
  for (const token of tokens) t.equal((await fx.call(user(alice), 'POST', '/devices', { platform: 'apns', token })).status, 201)

  // A real process with the default lease timing, so SIGSTOP freezes all of it (renewals included).
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/push/peers/actor-process.ts'], {
    env: { ...process.env, CATALOGUE_URL: fx.catalogueUrl, SERVER_URL: fx.server, APNS_URL: frozenPeer.url, BASEPLANE_LOG_LEVEL: 'silent' },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  t.teardown(() => {
    child.kill('SIGCONT')
    child.kill('SIGKILL')
  })
  await new Promise<void>((resolve) => child.stdout!.on('data', (d) => String(d).includes('claimed') && resolve()))
  const lease = async () => {
    const catalogue = new pg.Client({ connectionString: fx.catalogueUrl })
    await catalogue.connect()
    try {
      const { rows } = await catalogue.query(`select holder, generation::int as generation from baseplane.push_leases where ref = $1`, [fx.project.ref])
      return rows[0] as { holder: string; generation: number } | undefined
    } finally {
      await catalogue.end()
    }
  }
  const first = await lease()
  t.match(first?.holder, new RegExp(`^${child.pid}\\.`), 'the child process holds the lease')

  const other = await fx.startHost({ endpoints: { apnsUrl: otherPeer.url }, nodeId: 'lease-other' })
  await sleep(500)
  t.same(other.claimed(), [], 'the other node does not send while the lease is held')

  t.equal((await fx.call(service, 'POST', '/messages', { user_id: alice, title: 'frozen' })).status, 201)
  await eventually(() => frozenPeer.stats.requests >= 32, 10000, 'the holder sending')
  child.kill('SIGSTOP')
  const frozenAt = Date.now()
  // Requests already on the wire arrive; nothing more can leave a stopped process.
  await sleep(200)
  const sentBeforeFreeze = new Set(frozenPeer.delivered.map((d) => d.token))
  const requestsBeforeFreeze = frozenPeer.stats.requests
  t.ok(requestsBeforeFreeze < 200, `the holder froze mid-send (${requestsBeforeFreeze} of 200 sent)`)

  // Documented bound: the lease (10 s by default, the child's) plus the other node's scan (300 ms here).
  const bound = LEASE_DEFAULTS.leaseMs + 300
  await eventually(() => other.claimed().includes(fx.project.ref), bound + 3000, 'the other node takes over')
  const tookOverMs = Date.now() - frozenAt
  t.ok(tookOverMs <= bound + 3000, `taken over ${tookOverMs} ms after the freeze (bound ${bound} ms plus start-up)`)
  await eventually(async () => (await fx.admin(`select count(*)::int as n from push.queue`)).rows[0].n === 0, 20000, 'the queue drained by the other node')
  const delivered = new Set([...frozenPeer.delivered, ...otherPeer.delivered].map((d) => d.token))
  t.equal(delivered.size, 200, 'every device got the notification: nothing lost')
  const sentLog = await fx.admin(`select count(distinct queue_id)::int as n from push.delivery_log where status = 'sent'`)
  t.equal(sentLog.rows[0].n, 200, 'one sent row per delivery in the log')
  const twice = otherPeer.delivered.filter((d) => sentBeforeFreeze.has(d.token)).length
  t.ok(twice <= 64, `${twice} deliveries sent twice, all from the frozen holder's open batch (at most 64)`)

  // Resumed: its timers fire late, its lease is gone, its claims were ended by the server.
  child.kill('SIGCONT')
  await sleep(LEASE_DEFAULTS.renewMs + 1000)
  t.equal(frozenPeer.stats.requests, requestsBeforeFreeze, 'the resumed holder sent nothing more')
  t.equal(child.exitCode, null, 'and it is still running')
  const now = await lease()
  t.equal(now?.holder, 'lease-other', 'the other node still holds the lease')
  t.ok(now!.generation > first!.generation, 'under a later generation')
  t.equal((await fx.admin(`select count(*)::int as n from push.queue`)).rows[0].n, 0, 'nothing queued again')
  t.equal((await fx.admin(`select count(distinct queue_id)::int as n from push.delivery_log where status = 'sent'`)).rows[0].n, 200)

  // The other node goes on sending for the project.
  t.equal((await fx.call(service, 'POST', '/messages', { user_id: alice, title: 'after' })).status, 201)
  await eventually(() => otherPeer.delivered.filter((d) => (d.payload.aps as { alert?: { title?: string } }).alert?.title === 'after').length === 200, 15000, 'the next message delivered')
  t.equal(frozenPeer.stats.requests, requestsBeforeFreeze, 'by the new holder alone')
})

t.test('an idle push project holds no connection on the nodes that do not send for it', async (t) => {
  const { fx } = await setup(t)
  const second = await fx.newProject()
  const timing = { leaseMs: 1500, renewMs: 300, claimRetryMs: 200 }
  const a = await fx.startHost({ ...timing, nodeId: 'lease-idle-a' })
  const b = await fx.startHost({ ...timing, nodeId: 'lease-idle-b' })
  const refs = [fx.project.ref, second.ref]
  await eventually(() => refs.every((ref) => [...a.claimed(), ...b.claimed()].filter((r) => r === ref).length === 1), 10000, 'each project sent for by one node')
  // Past a few renewals, so that nothing is counted in the middle of a takeover.
  await sleep(1000)
  const databases = new Map([
    [fx.project.ref, fx.project.dbName],
    [second.ref, second.dbName],
  ])
  const connections = async (node: string, ref: string) => {
    const { rows } = await fx.admin(`select count(*)::int as n from pg_stat_activity where datname = $1 and application_name like $2`, [
      databases.get(ref),
      `% ${node}`,
    ])
    return rows[0].n as number
  }
  for (const ref of refs) {
    const [holder, idle] = a.claimed().includes(ref) ? (['lease-idle-a', 'lease-idle-b'] as const) : (['lease-idle-b', 'lease-idle-a'] as const)
    t.equal(await connections(idle, ref), 0, `${idle} keeps no connection to ${ref}, which it does not send for`)
    t.ok((await connections(holder, ref)) >= 1, `${holder}, its holder, listens on it`)
  }
  t.same([...a.claimed(), ...b.claimed()].sort(), [...refs].sort(), 'both projects still sent for, once each')
})
