// npm run bench:push — end to end: rows inserted into push.messages until every
// response is logged in push.delivery_log, against the local APNs stand-in;
// and @parse/node-apn sending the same number straight to the same stand-in
// in the same run (batches of 500, its sweet spot). Each side sends 2000
// first, untimed, through the same provider or actor. Then the rate per plan
// with a 20 ms stand-in latency, to show that a larger plan sends faster.
// The stand-in runs in a child process, as APNs would not share the sender's
// event loop. Uses DATABASE_URL (or a temporary embedded PostgreSQL).
import { spawn } from 'node:child_process'
import readline from 'node:readline'
import crypto from 'node:crypto'
import pg from 'pg'
import type { Plan } from '../lib/catalogue.ts'
import { adminUrlFor } from '../lib/db/server-url.ts'
import { ControlPlane } from '../control-plane/control-plane.ts'
import { createProject, setProjectProduct } from '../control-plane/projects.ts'
import { setLogLevel } from '../lib/log.ts'
import { storeApns } from '../workers/push/credentials.ts'
import { startPushActorThread } from '../workers/push/actor-thread.ts'
import { PLAN_CONCURRENCY } from '../workers/push/actor-host.ts'
import { makeApnsKey } from '../dev/push-peers/keys.ts'
import { dropCatalogue } from '../dev/db.ts'
import { benchCatalogue, benchServer } from './lib/platform.ts'
import { importPeer } from './lib/peers.ts'
import { reportCase } from './lib/report.ts'

setLogLevel('silent')

// The parts of @parse/node-apn used here (it lives in bench/peers, outside the type-checked tree).
interface ApnProvider {
  send(note: unknown, tokens: string[]): Promise<{ failed: unknown[] }>
  shutdown(): void
}
interface Apn {
  Provider: new (options: Record<string, unknown>) => ApnProvider
  Notification: new (payload: Record<string, unknown>) => unknown
}
const apn = (await importPeer<{ default: Apn }>('@parse/node-apn')).default

const N = Number(process.env.BENCH_PUSH_N ?? 20000)
const TOPIC = 'com.example.bench'
const key = makeApnsKey()
const tokens = Array.from({ length: N }, (_, i) => crypto.createHash('sha256').update(`device-${i}`).digest('hex'))

interface Peer {
  url: string
  setLatency(ms: number): Promise<void>
  close(): void
}

async function startPeerProcess(): Promise<Peer> {
  const child = spawn(process.execPath, ['--import', 'tsx', new URL('../dev/push-peers/apns-peer-process.ts', import.meta.url).pathname], {
    env: {
      ...process.env,
      APNS_TEAM_ID: key.teamId,
      APNS_KEY_ID: key.keyId,
      APNS_PUBLIC_KEY: key.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
      APNS_TOPIC: TOPIC,
    },
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  const lines = readline.createInterface({ input: child.stdout! })[Symbol.asyncIterator]()
  const url = (await lines.next()).value as string
  return {
    url,
    async setLatency(ms) {
      child.stdin!.write(`latency ${ms}\n`)
      await lines.next()
    },
    close: () => child.kill(),
  }
}

/** One provider for the warm-up and the run: its session is past APNs' one-stream start when measured. */
async function nodeApnRate(provider: ApnProvider, count: number, batch = 500): Promise<number> {
  const note = new apn.Notification({ alert: { title: 'Bench', body: 'node-apn' }, topic: TOPIC })
  const start = process.hrtime.bigint()
  let failed = 0
  for (let i = 0; i < count; i += batch) {
    const result = await provider.send(note, tokens.slice(i, Math.min(count, i + batch)))
    failed += result.failed.length
  }
  if (failed > 0 && count === N) console.log(`  node-apn: ${failed} of ${count} failed`)
  return count / (Number(process.hrtime.bigint() - start) / 1e9)
}

interface OursResult {
  /** Rows inserted into push.messages until every response is logged. */
  endToEnd: number
  /** The same rows committed in one transaction: from the commit on, the sending actor alone. */
  drain: number
}

/**
 * `warmUp`: deliveries sent through the same actor before the clock starts, as
 * node-apn gets its warm-up run: compiled code and open sessions on both sides.
 */
async function oursRate(server: string, peer: Peer, plan: Plan, count: number, measureDrain = false, warmUp = 0): Promise<OursResult> {
  const catalogueUrl = await benchCatalogue(server)
  const cp = await ControlPlane.open(catalogueUrl)
  try {
    const created = await createProject(cp, { name: 'bench', plan })
    const project = await setProjectProduct(cp, created.ref, 'push', true)
    const db = new pg.Client({ connectionString: adminUrlFor(server, project.dbName) })
    await db.connect()
    await storeApns(db, { topic: TOPIC, key_id: key.keyId, team_id: key.teamId, keys: [{ p8: key.p8, key_id: key.keyId }], environment: 'production' })
    const { rows: devices } = await db.query<{ id: string }>(
      `insert into push.devices (platform, token, user_id) select 'apns', t, gen_random_uuid() from unnest($1::text[]) t returning id`,
      [tokens.slice(0, count)],
    )
    // Inserted as the service_role, as an app's server would, 1000 rows per statement, each
    // statement its own transaction (or all in one: the actor sees them at once, at commit).
    const insertAll = async (to = devices, oneTransaction = false) => {
      if (oneTransaction) await db.query('begin')
      for (let i = 0; i < to.length; i += 1000) {
        const insert = `insert into push.messages (device_id, title, body) select id, 'Bench', 'Baseplane' from unnest('{${to
          .slice(i, i + 1000)
          .map((d) => d.id)
          .join(',')}}'::uuid[]) id`
        await db.query(oneTransaction ? `set local role service_role; ${insert}; reset role` : `begin; set local role service_role; ${insert}; commit;`)
      }
      if (oneTransaction) await db.query('commit')
    }
    // Settling deletes a row from the queue and logs its attempt in one transaction, so an empty
    // queue means every delivery is logged. (Counting the log instead costs PostgreSQL a scan of
    // a growing table every poll, time taken from the actor; the counts are checked once below.)
    const logged = async () =>
      waitFor(async () => (await db.query<{ done: boolean }>(`select not exists (select 1 from push.queue) as done`)).rows[0]!.done, 10)
    // The actor host on its own thread, as the platform runs it.
    const host = await startPushActorThread({ catalogueUrl, defaultServerUrl: server, endpoints: { apnsUrl: peer.url } })
    await waitFor(() => host.claimed().length === 1)
    if (warmUp > 0) {
      await insertAll(devices.slice(0, warmUp))
      await logged()
    }
    let start = process.hrtime.bigint()
    await insertAll()
    await logged()
    const endToEnd = count / (Number(process.hrtime.bigint() - start) / 1e9)
    let drain = 0
    if (measureDrain) {
      // All rows committed at once: from the commit on, the actor only drains the queue.
      await insertAll(devices, true)
      start = process.hrtime.bigint()
      await logged()
      drain = count / (Number(process.hrtime.bigint() - start) / 1e9)
    }
    const sent = (await db.query<{ n: number }>(`select count(*)::int as n from push.delivery_log where status = 'sent'`)).rows[0]!.n
    const expected = (measureDrain ? 2 : 1) * count + warmUp
    if (sent !== expected) console.log(`  ours: ${expected - sent} not sent`)
    await host.stop()
    await db.end()
    return { endToEnd, drain }
  } finally {
    await cp.close()
    await dropCatalogue(server, catalogueUrl)
  }
}

async function waitFor(check: () => boolean | Promise<boolean>, intervalMs = 20): Promise<void> {
  for (;;) {
    if (await check()) return
    await new Promise((r) => setTimeout(r, intervalMs))
  }
}

const database = await benchServer()
const server = database.url
const peer = await startPeerProcess()
try {
  console.log(`push benchmark: ${N} notifications to a local APNs stand-in (HTTP/2, h2c), Node ${process.version}`)
  const provider = new apn.Provider({ token: { key: key.p8, keyId: key.keyId, teamId: key.teamId }, production: true, address: '127.0.0.1', port: Number(new URL(peer.url).port) })
  // node-apn's own switch (used by its tests) to talk h2c to a local server instead of Apple.
  ;(provider as typeof provider & { client: { _mockOverrideUrl: string } }).client._mockOverrideUrl = peer.url
  await nodeApnRate(provider, 2000) // warm-up (node-apn does not wait for APNs' first SETTINGS: some of these fail)
  const peerRate = await nodeApnRate(provider, N)
  provider.shutdown()
  console.log(`  @parse/node-apn, batches of 500:                  ${peerRate.toFixed(0)}/s`)
  const ours = await oursRate(server, peer, 'business', N, true, 2000)
  console.log(`  Baseplane push, business, insert -> logged:        ${ours.endToEnd.toFixed(0)}/s`)
  console.log(`  ratio Baseplane / node-apn:                        ${(ours.endToEnd / peerRate).toFixed(2)} (goal >= 1)`)
  console.log(`  (the actor alone, all rows committed at once:      ${ours.drain.toFixed(0)}/s, ratio ${(ours.drain / peerRate).toFixed(2)})`)
  const notifications = (rate: number) => ({ notificationsPerSecond: rate })
  const report = { suite: 'push', peer: '@parse/node-apn, batches of 500', peerFigures: notifications(peerRate), what: 'notifications/s' }
  reportCase({ ...report, case: 'Baseplane / node-apn, business plan, insert to logged', figures: notifications(ours.endToEnd), ratio: ours.endToEnd / peerRate, goal: { atLeast: 1 } })
  reportCase({ ...report, case: 'the actor alone, all rows committed at once, / node-apn', figures: notifications(ours.drain), ratio: ours.drain / peerRate })
  // Each plan against node-apn held to the same requests in flight (its batches the plan's concurrency),
  // the same count, the stand-in 20 ms away: what a project of that plan gets against a sender of its own.
  console.log(`per plan, stand-in answering after 20 ms (like a real network round trip), node-apn with the plan's requests in flight:`)
  await peer.setLatency(20)
  const paced = new apn.Provider({ token: { key: key.p8, keyId: key.keyId, teamId: key.teamId }, production: true, address: '127.0.0.1', port: Number(new URL(peer.url).port) })
  ;(paced as typeof paced & { client: { _mockOverrideUrl: string } }).client._mockOverrideUrl = peer.url
  await nodeApnRate(paced, 2000)
  for (const plan of ['free', 'plus', 'pro', 'business'] as const) {
    const count = plan === 'free' ? 2000 : plan === 'plus' ? 5000 : Math.min(N, 10000)
    const theirs = await nodeApnRate(paced, count, PLAN_CONCURRENCY[plan])
    const rate = await oursRate(server, peer, plan, count)
    const ratio = rate.endToEnd / theirs
    console.log(`  ${plan.padEnd(9)} ${count.toString().padStart(6)} notifications: ${rate.endToEnd.toFixed(0)}/s, node-apn ${theirs.toFixed(0)}/s (${PLAN_CONCURRENCY[plan]} in flight): ratio ${ratio.toFixed(2)} (goal >= 1)`)
    reportCase({
      suite: 'push',
      case: `Baseplane / node-apn, ${plan} plan, ${PLAN_CONCURRENCY[plan]} in flight, stand-in 20 ms away`,
      figures: notifications(rate.endToEnd),
      peer: `@parse/node-apn, batches of ${PLAN_CONCURRENCY[plan]}`,
      peerFigures: notifications(theirs),
      what: 'notifications/s',
      ratio,
      goal: { atLeast: 1 },
    })
  }
  paced.shutdown()
} finally {
  peer.close()
  await database.stop()
}
