// Realtime across a fleet (issue 38 item 5, and presence's node-death part of
// item 3): three nodes on one catalogue and a real nats-server started here
// (Debian's package; the file skips, saying so, where it is missing), through
// the unmodified supabase-js. A and B run in this process, C in a process of
// its own so it can die with SIGKILL. A broadcast sent on each node is heard on
// the other two (both protocol versions, bytes included); a presence tracked on
// each node is in the others' state and diffs; C killed, its presences leave
// the others within the documented bound; a database change made once is heard
// on all three nodes, and the node running the project's change reader killed
// while inserts flow, a reader on another node takes its lease and a new slot
// within the documented bound, the dead one's slot gone with its connection;
// the bus killed and started again,
// the sockets stay open, each node's own sockets keep hearing each other, and
// delivery across nodes resumes; a node without BASEPLANE_NATS_URL is refused.
import { createClient, type RealtimeChannel, type SupabaseClient } from '@supabase/supabase-js'
import t from 'tap'
import WebSocket from 'ws'
import { baseUrlOf, ownerUrlOf } from '../../lib/catalogue.ts'
import { adminUrlFor } from '../../lib/db/server-url.ts'
import { LEASE_DEFAULTS } from '../../lib/leases/lease-keeper.ts'
import { DOWN_AFTER_MS, HEARTBEAT_MS } from '../../data-plane/realtime/fleet-presence.ts'
import { connectClient, serverUrl } from '../helpers/db.ts'
import { eventually } from '../helpers/eventually.ts'
import { natsServerBinary, startNats } from '../helpers/nats.ts'
import { request } from '../helpers/http.ts'
import { startPlatformProcess } from '../helpers/platform-process.ts'
import { startTestPlatform, type TestProject } from '../helpers/platform.ts'

const binary = natsServerBinary()
if (binary === undefined) {
  t.plan(0, 'nats-server is not installed (Debian: apt-get install nats-server; .ci/run installs it)')
  process.exit(0)
}

const nats = await startNats(t, binary)
const env = { BASEPLANE_HTTP_ENGINE: 'uws', BASEPLANE_NATS_URL: nats.url }
const fixture = await startTestPlatform(t, env)
const project = await fixture.createProject({ name: 'Realtime fleet' })
const nodeB = await fixture.startAnotherNode()
const nodeC = await startPlatformProcess(t, fixture.catalogueUrl, { ...env, BASEPLANE_ADMIN_TOKEN: fixture.config.adminToken! })
const urls = {
  A: project.baseUrl,
  B: baseUrlOf(project.ref, `http://127.0.0.1:${nodeB.port}`, undefined),
  C: nodeC.baseUrlOf(project.ref),
}
// Postgres Changes need logical decoding: the embedded PostgreSQL has it, a DATABASE_URL server may not (the local PG15).
const server = await serverUrl()
const admin = await connectClient(adminUrlFor(server, 'postgres'))
t.teardown(() => admin.end())
const walLevel = (await admin.query<{ wal_level: string }>('show wal_level')).rows[0]!.wal_level
const noLogical = walLevel === 'logical' ? false : `the database server has wal_level=${walLevel}: Postgres Changes need logical (the embedded server, used without DATABASE_URL, has it)`

type Node = keyof typeof urls
const NODES: Node[] = ['A', 'B', 'C']
type Vsn = '1.0.0' | '2.0.0'

// The `ws` package as realtime-js's transport, as in channels.test.ts.
const transport = WebSocket as never

function client(t: { teardown(fn: () => unknown): void }, node: Node, vsn: Vsn = '2.0.0'): SupabaseClient {
  const supabase = createClient(urls[node], project.anonKey, { auth: { persistSession: false, autoRefreshToken: false }, realtime: { vsn, transport } })
  t.teardown(async () => {
    await supabase.removeAllChannels()
    supabase.realtime.disconnect()
  })
  return supabase
}

/**
 * subscribe()'s first report, passing over a socket that failed at once with
 * 1006 (see channels.test.ts); every later report goes to `later`.
 */
function subscribed(channel: RealtimeChannel, later: string[] = []): Promise<{ status: string; message?: string }> {
  let reported = false
  return new Promise((resolve) =>
    channel.subscribe((status, error) => {
      if (reported) return void later.push(`${status}${error ? ` ${error.message}` : ''}`)
      if (status === 'CHANNEL_ERROR' && error?.message === 'socket closed: 1006') return
      reported = true
      resolve({ status, ...(error ? { message: error.message } : {}) })
    }),
  )
}

/** Resolves once `check()` holds, or rejects after `ms`. */
async function until(check: () => boolean, what: string, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

for (const vsn of ['2.0.0', '1.0.0'] as const) {
  t.test(`vsn ${vsn}: a broadcast sent on each node is heard on the other two`, async (t) => {
    const heard: Record<Node, string[]> = { A: [], B: [], C: [] }
    const channels = {} as Record<Node, RealtimeChannel>
    for (const node of NODES) {
      const channel = client(t, node, vsn).channel(`fleet-broadcast-${vsn}`, { config: { broadcast: { ack: true } } })
      channel.on('broadcast', { event: 'said' }, ({ payload }) => heard[node].push(`${(payload as { from: string }).from} ${(payload as { text: string }).text}`))
      t.same(await subscribed(channel), { status: 'SUBSCRIBED' }, `subscribed on ${node}`)
      channels[node] = channel
    }
    for (const node of NODES) t.equal(await channels[node].send({ type: 'broadcast', event: 'said', payload: { from: node, text: 'Zoë ✓' } }), 'ok', `sent on ${node}`)
    for (const node of NODES) {
      const others = NODES.filter((other) => other !== node)
      await until(() => heard[node].length === others.length, `${node} to hear the other two`)
      t.same(heard[node].sort(), others.map((other) => `${other} Zoë ✓`), `${node} hears the other nodes, not itself`)
    }
  })
}

t.test('a broadcast of bytes crosses nodes as bytes', async (t) => {
  const sender = client(t, 'A').channel('fleet-bytes', { config: { broadcast: { ack: true } } })
  const receiver = client(t, 'C').channel('fleet-bytes')
  const heard: unknown[] = []
  receiver.on('broadcast', { event: 'blob' }, ({ payload }) => heard.push(payload))
  t.same(await subscribed(sender), { status: 'SUBSCRIBED' })
  t.same(await subscribed(receiver), { status: 'SUBSCRIBED' })
  const bytes = new Uint8Array([0, 1, 2, 250, 255])
  t.equal(await sender.send({ type: 'broadcast', event: 'blob', payload: bytes.buffer }), 'ok')
  await until(() => heard.length === 1, 'the bytes to reach C')
  t.ok(heard[0] instanceof ArrayBuffer, 'received as an ArrayBuffer')
  t.same([...new Uint8Array(heard[0] as ArrayBuffer)], [...bytes])
})

/** A project whose table `events` is in the supabase_realtime publication, readable by anon. */
async function changesProject(name: string): Promise<TestProject> {
  const target = await fixture.createProject({ name })
  const owner = await connectClient(ownerUrlOf(target.record))
  try {
    await owner.query(`
      create table public.events (id serial primary key, n int not null);
      grant select on public.events to anon;
      alter publication supabase_realtime add table public.events;
    `)
  } finally {
    await owner.end()
  }
  return target
}

async function insertEvent(target: TestProject, n: number): Promise<void> {
  const owner = await connectClient(ownerUrlOf(target.record))
  try {
    await owner.query('insert into public.events (n) values ($1)', [n])
  } finally {
    await owner.end()
  }
}

/** The project's replication slots on its server. */
async function slotsOf(target: TestProject): Promise<{ slot_name: string; temporary: boolean; active: boolean }[]> {
  return (await admin.query('select slot_name, temporary, active from pg_replication_slots where database = $1 order by slot_name', [target.record.dbName])).rows
}

/** Who holds the project's change-reader lease (baseplane.realtime_leases), and its generation. */
async function leaseOf(target: TestProject): Promise<{ holder: string; generation: string } | undefined> {
  const catalogue = await connectClient(fixture.catalogueUrl)
  try {
    return (await catalogue.query<{ holder: string; generation: string }>('select holder, generation::text from baseplane.realtime_leases where ref = $1 and expires_at > now()', [target.ref])).rows[0]
  } finally {
    await catalogue.end()
  }
}

/** A channel at `baseUrl` hearing the INSERTs of `events` (their `n`) and the postgres_changes `system` messages. */
function insertsHeard(t: { teardown(fn: () => unknown): void }, target: TestProject, baseUrl: string, topic: string) {
  const supabase = createClient(baseUrl, target.anonKey, { auth: { persistSession: false, autoRefreshToken: false }, realtime: { transport } })
  t.teardown(async () => {
    await supabase.removeAllChannels()
    supabase.realtime.disconnect()
  })
  const channel = supabase.channel(topic)
  const heard: number[] = []
  const systems: string[] = []
  channel.on('postgres_changes', { event: 'INSERT', schema: 'public', table: 'events' }, ({ new: row }) => heard.push((row as { n: number }).n))
  channel.on('system', {}, (payload: { extension?: string; status: string; message: string }) => {
    if (payload.extension === 'postgres_changes') systems.push(`${payload.status} ${payload.message}`)
  })
  return { channel, heard, systems, streaming: () => systems.filter((s) => s === 'ok Subscribed to PostgreSQL').length }
}

t.test('a database change made once is heard by the subscribers of all three nodes, once each', { skip: noLogical }, async (t) => {
  const target = await changesProject('Realtime fleet changes')
  const on = {
    A: insertsHeard(t, target, target.baseUrl, 'fleet-changes'),
    B: insertsHeard(t, target, baseUrlOf(target.ref, `http://127.0.0.1:${nodeB.port}`, undefined), 'fleet-changes'),
    C: insertsHeard(t, target, nodeC.baseUrlOf(target.ref), 'fleet-changes'),
  }
  for (const node of NODES) t.same(await subscribed(on[node].channel), { status: 'SUBSCRIBED' }, `subscribed on ${node}`)
  // Each node hears that changes flow once the fleet's one reader streams (its node tells the others on the bus).
  for (const node of NODES) await until(() => on[node].streaming() > 0, `"Subscribed to PostgreSQL" on ${node}`, 15_000)
  t.match(await slotsOf(target), [{ temporary: true, active: true }], "one reader across the fleet: one temporary slot, streaming")
  await insertEvent(target, 1)
  await insertEvent(target, 2)
  for (const node of NODES) {
    await until(() => on[node].heard.includes(2), `${node} to hear the inserts`)
    t.same(on[node].heard, [1, 2], `${node} heard each insert once, in commit order`)
  }
  for (const node of NODES) t.same(on[node].systems, ['ok Subscribed to PostgreSQL'], `${node}: no error`)
})

/** A presence channel on `node` under `key`, recording the joins and leaves it is sent. */
function presenceOn(t: { teardown(fn: () => unknown): void }, node: Node, key: string, room: string, vsn: Vsn = '2.0.0') {
  const channel = client(t, node, vsn).channel(room, { config: { presence: { key } } })
  const events: string[] = []
  let firstSync: string[] | undefined
  channel.on('presence', { event: 'join' }, ({ key }) => events.push(`join ${key}`))
  channel.on('presence', { event: 'leave' }, ({ key }) => events.push(`leave ${key}`))
  channel.on('presence', { event: 'sync' }, () => (firstSync ??= Object.keys(channel.presenceState()).sort()))
  return { channel, events, keys: () => Object.keys(channel.presenceState()).sort(), firstSync: () => firstSync }
}

t.test('presence: tracked on each node, seen in the state and diffs of the others; a killed node leaves within the bound', async (t) => {
  const room = 'fleet-presence'
  const people = { A: presenceOn(t, 'A', 'alice', room), B: presenceOn(t, 'B', 'bob', room, '1.0.0'), C: presenceOn(t, 'C', 'carol', room) }
  for (const node of NODES) {
    t.same(await subscribed(people[node].channel), { status: 'SUBSCRIBED' })
    t.equal(await people[node].channel.track({ on: node }), 'ok', `tracked on ${node}`)
  }
  for (const node of NODES) await until(() => people[node].keys().length === 3, `${node} to see all three`)
  t.same(people.A.keys(), ['alice', 'bob', 'carol'])
  t.ok(people.A.events.includes('join bob') && people.A.events.includes('join carol'), 'A is sent the joins made on B and C')
  t.ok(people.C.events.includes('join alice') || (people.C.firstSync() ?? []).includes('alice'), "C hears alice's presence")

  // A socket joining later, on any node, is sent the fleet's whole state in its presence_state.
  const dave = presenceOn(t, 'B', 'dave', room)
  t.same(await subscribed(dave.channel), { status: 'SUBSCRIBED' })
  await until(() => dave.firstSync() !== undefined, "dave's presence_state")
  t.same(dave.firstSync(), ['alice', 'bob', 'carol'], "presence_state on join holds the other nodes' presences")

  const killedAt = Date.now()
  await nodeC.kill()
  const bound = DOWN_AFTER_MS + HEARTBEAT_MS
  await until(() => people.A.events.includes('leave carol') && people.B.events.includes('leave carol'), "carol's presence to leave A and B", bound + 2000)
  const took = Date.now() - killedAt
  t.ok(took <= bound + 1000, `carol left within the documented ${bound} ms (took ${took} ms)`)
  t.same(people.A.keys(), ['alice', 'bob'])
  t.same(dave.keys(), ['alice', 'bob'])
})

t.test("the change reader's node killed mid-stream: a reader on another node takes over within the bound, and the dead node's slot is gone", { skip: noLogical }, async (t) => {
  // C died above: a fourth node, in a process of its own, is made the reader and killed.
  const nodeD = await startPlatformProcess(t, fixture.catalogueUrl, { ...env, BASEPLANE_ADMIN_TOKEN: fixture.config.adminToken! })
  const target = await changesProject('Realtime fleet reader killed')
  const inProcess = [fixture.platform.directory.nodeId, nodeB.directory.nodeId]
  // The reader starts where the project's first channel joins: on D.
  const onD = insertsHeard(t, target, nodeD.baseUrlOf(target.ref), 'fleet-reader')
  t.same(await subscribed(onD.channel), { status: 'SUBSCRIBED' })
  await until(() => onD.streaming() > 0, '"Subscribed to PostgreSQL" on D', 15_000)
  const before = await leaseOf(target)
  t.ok(before !== undefined && !inProcess.includes(before.holder), `D holds the project's lease (${before?.holder})`)
  const [deadSlot, ...more] = await slotsOf(target)
  t.match(deadSlot, { temporary: true, active: true }, "D's reader streams through a temporary slot")
  t.same(more, [], 'and no other')

  const on = {
    A: insertsHeard(t, target, target.baseUrl, 'fleet-reader'),
    B: insertsHeard(t, target, baseUrlOf(target.ref, `http://127.0.0.1:${nodeB.port}`, undefined), 'fleet-reader'),
  }
  for (const node of ['A', 'B'] as const) {
    t.same(await subscribed(on[node].channel), { status: 'SUBSCRIBED' }, `subscribed on ${node}`)
    await until(() => on[node].streaming() > 0, `"Subscribed to PostgreSQL" on ${node}`, 15_000)
  }
  t.equal((await leaseOf(target))?.holder, before?.holder, 'A and B did not take the lease from D')

  // Inserts flow, one every 200 ms, each marked with when it was begun (it commits later).
  const begunAt = new Map<number, number>()
  let flowing = true
  let n = 0
  const inserts = (async () => {
    while (flowing) {
      const next = ++n
      begunAt.set(next, Date.now())
      await insertEvent(target, next)
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
  })()
  t.teardown(async () => {
    flowing = false
    await inserts
  })
  await until(() => on.A.heard.length >= 3 && on.B.heard.length >= 3, 'A and B to hear the inserts read on D', 10_000)
  const killedAt = Date.now()
  await nodeD.kill()

  // Heard again: an insert begun after the kill (so committed after it) reaches A and B.
  const afterKill = (heard: number[]) => heard.some((m) => (begunAt.get(m) ?? 0) > killedAt)
  const bound = LEASE_DEFAULTS.leaseMs + LEASE_DEFAULTS.scanMs
  await until(() => afterKill(on.A.heard) && afterKill(on.B.heard), 'A and B to hear changes again', bound + 10_000)
  const took = Date.now() - killedAt
  t.ok(took <= bound + 3000, `changes flow again within the lease's ${bound} ms and the new slot's start (took ${took} ms)`)
  flowing = false
  await inserts

  const after = await leaseOf(target)
  t.ok(after !== undefined && inProcess.includes(after.holder), `the lease is held by A or B now (${after?.holder})`)
  t.ok(BigInt(after?.generation ?? 0) > BigInt(before?.generation ?? 0), 'taken anew (a later generation)')
  const slots = await eventually('one slot, the new reader\'s', 5000, async () => {
    const now = await slotsOf(target)
    return now.length === 1 && now[0]!.slot_name !== deadSlot!.slot_name && now
  })
  t.match(slots, [{ temporary: true, active: true }], "D's slot went with its connection; the new reader's is temporary and streaming: no slot retains WAL")
  for (const node of ['A', 'B'] as const) {
    const heard = on[node].heard
    t.same(heard, [...heard].sort((x, y) => x - y), `${node} heard the changes in commit order, each once`)
    t.equal(new Set(heard).size, heard.length, `${node}: no change twice`)
    t.ok(on[node].streaming() >= 2, `${node} was told "Subscribed to PostgreSQL" again once the new reader streamed (${on[node].systems.join('; ')})`)
  }
})

/** Node A's /metrics. */
async function busGauge(): Promise<string> {
  const scraped = await request(`${fixture.origin}/metrics`, { headers: { authorization: `Bearer ${fixture.platform.adminToken}` } })
  if (scraped.status !== 200) throw new Error(`/metrics answered ${scraped.status}: ${scraped.text}`)
  return scraped.text
}

t.test('the bus killed and started again: sockets stay open, each node keeps its own delivery, and delivery across nodes resumes', async (t) => {
  const room = 'fleet-outage'
  const heardOnA: string[] = []
  const heardOnB: string[] = []
  const a1 = client(t, 'A')
  const a2 = client(t, 'A')
  const b = client(t, 'B')
  const statuses: string[] = []
  const sender = a1.channel(room, { config: { broadcast: { ack: true } } })
  const local = a2.channel(room)
  const remote = b.channel(room)
  local.on('broadcast', { event: 'n' }, ({ payload }) => heardOnA.push(String((payload as { n: number }).n)))
  remote.on('broadcast', { event: 'n' }, ({ payload }) => heardOnB.push(String((payload as { n: number }).n)))
  for (const channel of [sender, local, remote]) t.same(await subscribed(channel, statuses), { status: 'SUBSCRIBED' })
  const alice = presenceOn(t, 'A', 'alice', `${room}-presence`)
  t.same(await subscribed(alice.channel), { status: 'SUBSCRIBED' })
  t.equal(await alice.channel.track({}), 'ok')
  const bob = presenceOn(t, 'B', 'bob', `${room}-presence`)
  t.same(await subscribed(bob.channel), { status: 'SUBSCRIBED' })
  await until(() => bob.keys().includes('alice'), 'bob to see alice before the outage')

  t.equal(await sender.send({ type: 'broadcast', event: 'n', payload: { n: 1 } }), 'ok')
  await until(() => heardOnB.includes('1'), 'B to hear 1 before the outage')

  t.match(await busGauge(), /^baseplane_realtime_bus_connected 1$/m, '/metrics says the bus is connected')
  await nats.stop()
  await until(() => !fixture.platform.dataPlane.realtime.bus.connected, 'A to see the bus gone')
  t.match(await busGauge(), /^baseplane_realtime_bus_connected 0$/m, '/metrics says it is not')
  t.equal(await sender.send({ type: 'broadcast', event: 'n', payload: { n: 2 } }), 'ok', 'sent while the bus is away')
  await until(() => heardOnA.includes('2'), "A's own sockets to keep hearing each other")

  await nats.start()
  await until(() => fixture.platform.dataPlane.realtime.bus.connected && nodeB.dataPlane.realtime.bus.connected, 'both nodes back on the bus', 10_000)
  // The subscriptions are sent again on reconnection; a broadcast is sent until it is heard.
  let n = 3
  const deadline = Date.now() + 10_000
  while (!heardOnB.some((heard) => Number(heard) >= 3)) {
    if (Date.now() > deadline) throw new Error('delivery across nodes did not resume')
    t.equal(await sender.send({ type: 'broadcast', event: 'n', payload: { n: n++ } }), 'ok')
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  t.pass('delivery across nodes resumed')
  t.notOk(heardOnB.includes('2'), 'what was sent while the bus was away did not cross (dropped, not queued)')
  await until(() => bob.keys().includes('alice'), 'presence whole again after the outage', 10_000)
  t.same(statuses, [], 'no channel was closed or errored')
  for (const supabase of [a1, a2, b]) t.ok(supabase.realtime.isConnected(), 'the socket is still open')
})

t.test('a node without BASEPLANE_NATS_URL is refused while the fleet has it, with one line saying what to set', async (t) => {
  const refused = await fixture.startAnotherNode({ env: { BASEPLANE_NATS_URL: '' } }).then(
    () => undefined,
    (error: unknown) => error as Error & { code?: string },
  )
  t.ok(refused, 'the node did not start')
  t.equal(refused?.code, 'invalid_config')
  t.match(refused?.message, /BASEPLANE_NATS_URL is unset here but set on the running nodes/)
  t.notMatch(refused?.message, /\n/, 'one line')
})
