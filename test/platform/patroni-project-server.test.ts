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

const missing = patroniMissing()
if (missing !== undefined) {
  t.plan(0, `${missing}; .ci/run installs them`)
  process.exit(0)
}

/** No request may take longer than this, outage or not (the longest round-trip deadline is a role's statement timeout plus 2 s). */
const ANSWER_BOUND_MS = 12_000
/** Load keeps running this long after both nodes answered again, to see that they stay up. */
const AFTER_MS = 2_000
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

const owner = new pg.Client({ connectionString: ownerUrlOf(record) })
await owner.connect()
await owner.query(`
  create table public.notes (id bigserial primary key, body text not null unique);
  alter table public.notes enable row level security;
  create policy notes_all on public.notes for all to anon using (true) with check (true);
  grant select, insert on public.notes to anon; grant usage on sequence public.notes_id_seq to anon;
  insert into public.notes (body) values ('before');
`)
await owner.end()

const key = makeApnsKey()
const apns = await startApnsPeer({ teamId: key.teamId, keyId: key.keyId, publicKey: key.publicKey, topic: TOPIC })
t.teardown(() => apns.close())
const env = { BASEPLANE_APNS_URL: apns.url }
const nodes: PlatformProcess[] = [await startPlatformProcess(t, catalogueUrl, env), await startPlatformProcess(t, catalogueUrl, env)]

const anon = { apikey: record.anonKey }
const service = { apikey: record.serviceRoleKey, authorization: `Bearer ${record.serviceRoleKey}` }
const sub = '00000000-0000-4000-8000-000000000043'
const userToken = signJwt(record.jwtSecret, { sub, role: 'authenticated', aud: 'authenticated', exp: Math.floor(Date.now() / 1000) + 3600 })

async function call(url: string, init: { method?: string; headers?: Record<string, string>; body?: unknown } = {}): Promise<{ status: number; retryAfter: string | null; text: string }> {
  const answer = await fetch(url, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers: { ...(init.body === undefined ? {} : { 'content-type': 'application/json' }), ...init.headers },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    signal: AbortSignal.timeout(ANSWER_BOUND_MS),
  })
  return { status: answer.status, retryAfter: answer.headers.get('retry-after'), text: await answer.text() }
}

const base = (node: PlatformProcess) => node.baseUrlOf(record.ref)
/** The read every load loop repeats: the statement REST prepares for it is prepared before the switch and used after. */
const preparedRead = (node: PlatformProcess) => `${base(node)}/rest/v1/notes?select=body&body=eq.before`

interface Answer {
  node: number
  kind: 'read' | 'write'
  started: number
  ended: number
  status: number
  retryAfter: string | null
  text: string
  body?: string
}

/** Numbers the writes of every load, so each acknowledged one can be looked for. */
let n = 0

/** Reads and writes on every node, 3 loops each, until `done` resolves; every answer kept. */
function load(done: Promise<unknown>): Promise<Answer[]> {
  const answers: Answer[] = []
  let stop = false
  void done.finally(() => (stop = true))
  const loop = async (node: number) => {
    while (!stop) {
      const write = n % 2 === 0
      const body = write ? `w-${process.pid}-${n}` : undefined
      n++
      const started = performance.now()
      const answer = await (write
        ? call(`${base(nodes[node]!)}/rest/v1/notes`, { headers: { ...anon, prefer: 'return=minimal' }, body: { body } })
        : call(preparedRead(nodes[node]!), { headers: anon })
      ).catch((error: Error) => ({ status: 0, retryAfter: null, text: `${error.name}: ${error.message}` }))
      answers.push({ node, kind: write ? 'write' : 'read', started, ended: performance.now(), ...answer, body })
      // A 503 is retried after a pause, as a client honouring Retry-After would (not its full length: the test measures).
      if (answer.status === 503) await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  return Promise.all(nodes.flatMap((_, i) => [loop(i), loop(i), loop(i)])).then(() => answers)
}

const good = (a: Answer) => a.status === 200 || a.status === 201

/** Load across `cause` (a kill or a switchover): the answers, the moment of the cause, and when each node answered again. */
async function across(t: Test, cause: () => Promise<{ at: number; from: string }>): Promise<{ answers: Answer[]; at: number; firstGood: number[] }> {
  let finish!: () => void
  const done = new Promise<void>((resolve) => (finish = resolve))
  const running = load(done)
  try {
    await new Promise((resolve) => setTimeout(resolve, 1000))
    const { at, from } = await cause()
    const leader = await ha.waitForLeader({ not: from, limitMs: SWITCH_LIMIT_MS })
    t.not(leader, from, `${leader} leads now`)
    // Each node answers the prepared read again (polled beside the load), then the load runs a little longer.
    const deadline = performance.now() + SWITCH_LIMIT_MS
    const firstGood: number[] = []
    for (const node of nodes) {
      while (performance.now() < deadline) {
        const answer = await call(preparedRead(node), { headers: anon }).catch(() => undefined)
        if (answer?.status === 200) break
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      firstGood.push(performance.now())
    }
    await new Promise((resolve) => setTimeout(resolve, AFTER_MS))
    finish()
    return { answers: await running, at, firstGood }
  } finally {
    finish()
    await running
  }
}

function report(t: Test, what: string, answers: Answer[], at: number): void {
  const after = answers.filter((a) => a.ended >= at)
  const unavailable = after.filter((a) => a.status === 503)
  const others = answers.filter((a) => !good(a) && a.status !== 503)
  t.same(others.map((a) => `${a.kind} ${a.status} ${a.text.slice(0, 200)}`), [], 'every answer is 200, 201 or 503: no 500, no 405, no hang')
  t.same(unavailable.filter((a) => !(Number(a.retryAfter) > 0)).map((a) => a.text.slice(0, 200)), [], 'every 503 has Retry-After')
  const slowest = Math.max(...answers.map((a) => a.ended - a.started))
  t.ok(slowest < ANSWER_BOUND_MS, `the slowest answer took ${(slowest / 1000).toFixed(2)} s (bound ${ANSWER_BOUND_MS / 1000} s)`)
  for (const node of [0, 1]) {
    const last = answers.filter((a) => a.node === node).at(-1)
    t.ok(last && good(last), `node ${node + 1}'s last answer under load was good (${last?.status})`)
  }
  const firstGoodAfter = after.filter((a) => good(a) && a.started > (unavailable.at(-1)?.started ?? at)).map((a) => a.ended)
  const span = unavailable.length === 0 ? 0 : Math.max(...unavailable.map((a) => a.ended)) - Math.min(...unavailable.map((a) => a.started))
  const firstGood = firstGoodAfter.length === 0 ? undefined : Math.min(...firstGoodAfter) - at
  t.comment(
    `${what}: ${answers.length} answered (${answers.filter(good).length} good), ${unavailable.length} x 503 over ${(span / 1000).toFixed(2)} s, ` +
      `first good answer after the last 503 ${firstGood === undefined ? 'n/a' : `${(firstGood / 1000).toFixed(2)} s`} after the ${what}`,
  )
}

async function acknowledgedPresent(t: Test, answers: Answer[]): Promise<void> {
  const acknowledged = answers.filter((a) => a.kind === 'write' && a.status === 201).map((a) => a.body!)
  t.ok(acknowledged.length > 0, `${acknowledged.length} writes acknowledged`)
  const check = new pg.Client({ connectionString: ownerUrlOf(record) })
  await check.connect()
  try {
    const { rows } = await check.query<{ body: string }>('select body from public.notes where body = any($1)', [acknowledged])
    const present = new Set(rows.map((r) => r.body))
    t.same(acknowledged.filter((body) => !present.has(body)), [], 'every acknowledged write is on the new primary')
  } finally {
    await check.end()
  }
}

async function pushDelivered(t: Test, title: string): Promise<void> {
  const before = apns.delivered.length
  const sent = await call(`${base(nodes[0]!)}/push/v1/messages`, { headers: service, body: { user_id: sub, title } })
  t.equal(sent.status, 201, `the message is taken: ${sent.text}`)
  const deadline = performance.now() + 30_000
  while (performance.now() < deadline && !apns.delivered.slice(before).some((d) => JSON.stringify(d.payload).includes(title))) {
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  t.ok(apns.delivered.slice(before).some((d) => JSON.stringify(d.payload).includes(title)), `"${title}" delivered to the APNs peer`)
}

t.test('set up: push credentials and a device; both nodes serve the project', async (t) => {
  const put = await call(`${base(nodes[0]!)}/push/v1/credentials/apns`, {
    method: 'PUT',
    headers: service,
    body: { topic: TOPIC, key_id: key.keyId, team_id: key.teamId, keys: [{ p8: key.p8 }] },
  })
  t.equal(put.status, 200, put.text)
  const device = await call(`${base(nodes[0]!)}/push/v1/devices`, { headers: { ...anon, authorization: `Bearer ${userToken}` }, body: { platform: 'apns', token: 'a'.repeat(64) } })
  t.equal(device.status, 201, device.text)
  for (const node of nodes) t.same([(await call(preparedRead(node), { headers: anon })).text], ['[{"body":"before"}]'])
  await pushDelivered(t, 'before any switch')
})

t.test('a planned switchover under load', async (t) => {
  const { answers, at } = await across(t, async () => {
    const { from, at } = await ha.switchover()
    return { at, from }
  })
  report(t, 'switchover', answers, at)
  await acknowledgedPresent(t, answers)
  await pushDelivered(t, 'after the switchover')
})

t.test("the leader's host killed under load", async (t) => {
  const { answers, at, firstGood } = await across(t, async () => {
    const killed = await ha.killLeader()
    return { at: killed.at, from: killed.name }
  })
  report(t, 'kill', answers, at)
  t.comment(`each node's first good answer polled on the side: ${firstGood.map((ms) => `${((ms - at) / 1000).toFixed(2)} s`).join(', ')} after the kill`)
  await acknowledgedPresent(t, answers)
  for (const node of nodes) {
    const read = await call(preparedRead(node), { headers: anon })
    t.same([read.status, read.text], [200, '[{"body":"before"}]'], 'the read prepared before the switch answers on the new primary')
    const fresh = await call(`${base(node)}/rest/v1/notes?select=id&order=id.desc&limit=1&body=neq.never`, { headers: anon })
    t.equal(fresh.status, 200, `a read never prepared before answers too: ${fresh.text}`)
  }
  await pushDelivered(t, 'after the kill')
})

