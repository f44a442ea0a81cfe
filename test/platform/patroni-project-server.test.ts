// Project databases on a Patroni-managed server of their own, the catalogue on
// another (issue 43 item 3): a PostgreSQL 15 pair under Patroni behind HAProxy
// (test/helpers/patroni.ts) added with `servers add`, its projects served by
// two real node processes under REST load. A planned switchover, then the
// leader's host killed: every answer meanwhile is 200/201 or 503 with
// Retry-After (never a 500, a 405 or a hang), both nodes answer again without a
// restart, statements prepared before the switch work on the new primary,
// every acknowledged write is there afterwards, and push's sender (its lease
// in the catalogue, its reader on the project's database) delivers a message
// sent after the switch. The figures (answered, 503s and their span, the first
// good answer after the kill) are printed for docs/fleet.md.
import { createClient } from '@supabase/supabase-js'
import pg from 'pg'
import t, { type Test } from 'tap'
import { ControlPlane } from '../../control-plane/control-plane.ts'
import { createProject, setProjectProduct } from '../../control-plane/projects.ts'
import { addDatabaseServer } from '../../control-plane/server-admin.ts'
import { ownerUrlOf, type ProjectRecord } from '../../lib/catalogue.ts'
import { signJwt } from '../../lib/jwt.ts'
import { makeApnsKey } from '../../dev/push-peers/keys.ts'
import { startApnsPeer } from '../../dev/push-peers/apns-peer.ts'
import { catalogueDatabase, dropCatalogue } from '../helpers/platform.ts'
import { startPlatformProcess, type PlatformProcess } from '../helpers/platform-process.ts'
import { HA_SETTINGS, patroniMissing, startPatroni } from '../helpers/patroni.ts'
import { wsTransport } from '../realtime/helpers.ts'
import { acknowledgedPresent, across, addNotes, call, preparedRead, report } from '../helpers/failover-load.ts'

const missing = patroniMissing()
if (missing !== undefined) {
  t.plan(0, `${missing}; .ci/run installs them`)
  process.exit(0)
}
// A pair to bootstrap and clone, two node processes and a leader TTL or two: about 100 s alone, more on a loaded machine than tap's 180 s.
t.setTimeout(400_000)

/** A switch longer than this is a failure: the leader's TTL, HAProxy's checks and a loaded machine's slack. */
const SWITCH_LIMIT_MS = (HA_SETTINGS.ttl + 30) * 1000
const TOPIC = 'com.example.patroni'

const ha = await startPatroni(t)
const catalogueUrl = await catalogueDatabase(t)
t.teardown(() => dropCatalogue(catalogueUrl))
const controlPlane = await ControlPlane.open(catalogueUrl)
t.teardown(() => controlPlane.close())
await addDatabaseServer(controlPlane, { url: ha.url, id: 'patroni' })
// A control plane that sees no room on the default server places on the added one.
const placing = await ControlPlane.open(catalogueUrl, { defaultServerBudget: 1 })
let record: ProjectRecord = await createProject(placing, { name: 'On Patroni' })
await setProjectProduct(placing, record.ref, 'auth', true)
record = await setProjectProduct(placing, record.ref, 'push', true)
await placing.close()
if (record.dbServer !== 'patroni') throw new Error(`the project was placed on ${record.dbServer}, not on the Patroni pair`)

await addNotes(ownerUrlOf(record))
{
  const owner = new pg.Client({ connectionString: ownerUrlOf(record) })
  await owner.connect()
  await owner.query(`create table public.pings (id serial primary key, title text not null);
    grant select on public.pings to anon;
    alter publication supabase_realtime add table public.pings`)
  await owner.end()
}

const key = makeApnsKey()
const apns = await startApnsPeer({ teamId: key.teamId, keyId: key.keyId, publicKey: key.publicKey, topic: TOPIC })
t.teardown(() => apns.close())
const env = { BASEPLANE_APNS_URL: apns.url }
const nodes: PlatformProcess[] = [await startPlatformProcess(t, catalogueUrl, env), await startPlatformProcess(t, catalogueUrl, env)]

const anon = { apikey: record.anonKey }
const service = { apikey: record.serviceRoleKey, authorization: `Bearer ${record.serviceRoleKey}` }
const sub = '00000000-0000-4000-8000-000000000043'
const userToken = signJwt(record.jwtSecret, { sub, role: 'authenticated', aud: 'authenticated', exp: Math.floor(Date.now() / 1000) + 3600 })

const bases = nodes.map((node) => node.baseUrlOf(record.ref))
const target = { ha, bases, anonKey: record.anonKey, switchLimitMs: SWITCH_LIMIT_MS }

// A Postgres Changes subscriber on node 1 (the project's reader runs where its channels are).
const realtime = createClient(bases[0]!, record.anonKey, { auth: { persistSession: false, autoRefreshToken: false }, realtime: { transport: wsTransport } })
t.teardown(async () => {
  await realtime.removeAllChannels()
  realtime.realtime.disconnect()
})
const heard: string[] = []

/**
 * Rows inserted every 0.5 s until the subscriber hears one: the reader's slot is temporary, so what is
 * committed between the old reader's end and the new slot is not delivered (docs/realtime.md).
 */
async function changeHeard(t: Test, label: string, since: number): Promise<void> {
  const owner = new pg.Client({ connectionString: ownerUrlOf(record) })
  await owner.connect()
  try {
    const deadline = performance.now() + 40_000
    for (let i = 0; performance.now() < deadline; i++) {
      await owner.query('insert into public.pings (title) values ($1)', [`${label} ${i}`])
      await new Promise((resolve) => setTimeout(resolve, 500))
      if (heard.some((title) => title.startsWith(`${label} `))) break
    }
  } finally {
    await owner.end()
  }
  t.ok(heard.some((title) => title.startsWith(`${label} `)), `Postgres Changes: a row inserted ${label} is heard (${((performance.now() - since) / 1000).toFixed(2)} s after it)`)
}

async function pushDelivered(t: Test, title: string): Promise<void> {
  const before = apns.delivered.length
  const sent = await call(`${bases[0]}/push/v1/messages`, { headers: service, body: { user_id: sub, title } })
  t.equal(sent.status, 201, `the message is taken: ${sent.text}`)
  const deadline = performance.now() + 30_000
  while (performance.now() < deadline && !apns.delivered.slice(before).some((d) => JSON.stringify(d.payload).includes(title))) {
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  t.ok(apns.delivered.slice(before).some((d) => JSON.stringify(d.payload).includes(title)), `"${title}" delivered to the APNs peer`)
}

t.test('set up: push credentials and a device; both nodes serve the project', async (t) => {
  const put = await call(`${bases[0]}/push/v1/credentials/apns`, {
    method: 'PUT',
    headers: service,
    body: { topic: TOPIC, key_id: key.keyId, team_id: key.teamId, keys: [{ p8: key.p8 }] },
  })
  t.equal(put.status, 200, put.text)
  const device = await call(`${bases[0]}/push/v1/devices`, { headers: { ...anon, authorization: `Bearer ${userToken}` }, body: { platform: 'apns', token: 'a'.repeat(64) } })
  t.equal(device.status, 201, device.text)
  for (const base of bases) t.same([(await call(preparedRead(base), { headers: anon })).text], ['[{"body":"before"}]'])
  await pushDelivered(t, 'before any switch')
  const joined = await new Promise<string>((resolve) => {
    const channel = realtime.channel('pings')
    channel.on('postgres_changes' as never, { event: 'INSERT', schema: 'public', table: 'pings' } as never, ((payload: { new: { title: string } }) => heard.push(payload.new.title)) as never)
    channel.on('system', {}, (payload: { extension?: string; status?: string; message?: string }) => {
      if (payload.extension === 'postgres_changes') resolve(`${payload.status}: ${payload.message}`)
    })
    channel.subscribe()
    setTimeout(() => resolve('no postgres_changes system message within 15 s'), 15_000)
  })
  t.equal(joined, 'ok: Subscribed to PostgreSQL', 'the subscriber joins Postgres Changes')
  await changeHeard(t, 'before any switch', performance.now())
})

t.test('a planned switchover under load', async (t) => {
  const { answers, at } = await across(t, target, async () => {
    const { from, at } = await ha.switchover()
    return { at, from }
  })
  report(t, 'switchover', answers, at, nodes.length)
  await acknowledgedPresent(t, answers, ownerUrlOf(record))
  await pushDelivered(t, 'after the switchover')
  await changeHeard(t, 'after the switchover', at)
})

t.test("the leader's host killed under load", async (t) => {
  const { answers, at, firstGood } = await across(t, target, async () => {
    const killed = await ha.killLeader()
    return { at: killed.at, from: killed.name }
  })
  report(t, 'kill', answers, at, nodes.length)
  t.comment(`each node's first good answer polled on the side: ${firstGood.map((ms) => `${((ms - at) / 1000).toFixed(2)} s`).join(', ')} after the kill`)
  await acknowledgedPresent(t, answers, ownerUrlOf(record))
  for (const base of bases) {
    const read = await call(preparedRead(base), { headers: anon })
    t.same([read.status, read.text], [200, '[{"body":"before"}]'], 'the read prepared before the switch answers on the new primary')
    const fresh = await call(`${base}/rest/v1/notes?select=id&order=id.desc&limit=1&body=neq.never`, { headers: anon })
    t.equal(fresh.status, 200, `a read never prepared before answers too: ${fresh.text}`)
  }
  await pushDelivered(t, 'after the kill')
  await changeHeard(t, 'after the kill', at)
})

