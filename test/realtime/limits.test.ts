// A project's Realtime limits on one node (issue 38 item 6: lib/plans.ts
// REALTIME_LIMITS, data-plane/realtime/limits.ts), through the unmodified
// supabase-js where a client is involved: past the plan's concurrent
// connections a socket's joins are refused with Realtime's reason while the
// counted sockets keep working and another project is not affected, and once a
// place is free the refused client's own rejoin gets in; past the joins per
// second, joins are refused until the next second (realtime-js's own rejoin
// then gets in); past the channels of one socket, the join is refused; past the
// presence changes per second, the channel is told why and closed; a socket
// that stops reading while its channel is flooded has frames dropped past the
// 1 MB it may have waiting (uWS maxBackpressure), without the process's memory
// growing, while a subscriber that reads hears everything; and on a fleet of
// two, each node takes half of a figure (rounded up).
//
// No plan's figures can be lowered per project (the plan is the only input),
// so the connections test opens the smallest plan's (free) 200 sockets: raw
// `ws` sockets beside the supabase-js clients it looks at, since an open socket
// counts whether or not it joins. The platform runs in this process, so the
// memory measured is the server's and the clients' together.
import type { RealtimeChannel } from '@supabase/supabase-js'
import t from 'tap'
import WebSocket from 'ws'
import { baseUrlOf } from '../../lib/catalogue.ts'
import { REALTIME_LIMITS } from '../../lib/plans.ts'
import { eventually } from '../helpers/eventually.ts'
import { startTestPlatform, type TestProject } from '../helpers/platform.ts'
import { collect, realtimeClient, subscribed } from './helpers.ts'

const fixture = await startTestPlatform(t, { BASEPLANE_HTTP_ENGINE: 'uws' })
const hub = fixture.platform.dataPlane.realtime

/** Realtime's socket URL of `target` on protocol `vsn`. */
const socketUrl = (target: TestProject, vsn = '2.0.0') => `${target.baseUrl.replace(/^http/, 'ws')}/realtime/v1/websocket?apikey=${target.anonKey}&vsn=${vsn}`

/** A raw socket, open (closed when the test ends). */
async function rawSocket(t: { teardown(fn: () => unknown): void }, target: TestProject): Promise<WebSocket> {
  const ws = new WebSocket(socketUrl(target))
  t.teardown(() => ws.terminate())
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve())
    ws.once('error', reject)
  })
  return ws
}

/** Sockets of the project this node counts against its plan. */
const counted = (target: TestProject) => hub.limits.peek(target.ref)?.connections ?? 0

/** Resolves at the start of the next wall-clock second: the limits count per second of the clock (limits.ts PerSecond). */
async function nextSecond(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 5))
}

/** Every status subscribe()'s callback is handed, in order (a 1006 at once passed over, as helpers.ts subscribed does). */
function statusesOf(channel: RealtimeChannel): string[] {
  const statuses: string[] = []
  channel.subscribe((status, error) => {
    if (status === 'CHANNEL_ERROR' && error?.message === 'socket closed: 1006') return
    statuses.push(error ? `${status} ${error.message}` : status)
  })
  return statuses
}

t.test('concurrent connections: past the plan\'s figure a socket\'s joins are refused; the counted sockets and another project go on', async (t) => {
  const project = await fixture.createProject({ name: 'Realtime connections' })
  const other = await fixture.createProject({ name: 'Realtime connections elsewhere' })
  const limit = REALTIME_LIMITS[project.record.plan].connections
  t.equal(project.record.plan, 'free', 'the smallest plan')

  // Two clients that will go on working, then raw sockets up to the figure.
  const alice = realtimeClient(t, project).channel('room', { config: { broadcast: { ack: true } } })
  const bob = realtimeClient(t, project).channel('room')
  const heardByBob = collect<unknown>((take) => bob.on('broadcast', { event: 'said' }, ({ payload }) => take(payload)), 1)
  t.same(await subscribed(alice), { status: 'SUBSCRIBED' })
  t.same(await subscribed(bob), { status: 'SUBSCRIBED' })
  const fillers: WebSocket[] = []
  while (fillers.length < limit - 2) {
    const batch = await Promise.all(Array.from({ length: Math.min(50, limit - 2 - fillers.length) }, () => rawSocket(t, project)))
    fillers.push(...batch)
  }
  await eventually(`the node to count ${limit} sockets`, 5000, async () => counted(project) === limit)

  const late = realtimeClient(t, project)
  const refused = late.channel('room')
  const lateStatuses = statusesOf(refused)
  await eventually('the late socket to be answered', 5000, async () => lateStatuses.length > 0)
  t.same(lateStatuses, ['CHANNEL_ERROR ConnectionRateLimitReached: Too many connected users'], "Realtime's reason")
  t.equal(counted(project), limit, 'the refused socket is not counted')

  t.equal(await alice.send({ type: 'broadcast', event: 'said', payload: { text: 'still here' } }), 'ok')
  t.same(await heardByBob, [{ text: 'still here' }], 'the counted sockets keep working')
  const another = realtimeClient(t, project)
  t.same(await subscribed(another.channel('room-too')), { status: 'CHANNEL_ERROR', message: 'ConnectionRateLimitReached: Too many connected users' }, 'another new socket is refused too')
  another.realtime.disconnect()

  // Those waiting are bounded too: as many as the figure wait (the late client is one), then a socket is closed as it opens.
  await eventually('the other refused socket to be gone', 5000, async () => hub.limits.peek(project.ref)?.waiting === 1)
  const waiters: WebSocket[] = []
  while (waiters.length < limit - 1) {
    const batch = await Promise.all(Array.from({ length: Math.min(50, limit - 1 - waiters.length) }, () => rawSocket(t, project)))
    waiters.push(...batch)
  }
  await eventually(`${limit} sockets to wait`, 5000, async () => hub.limits.peek(project.ref)?.waiting === limit)
  const oneTooMany = await rawSocket(t, project)
  const close = await new Promise<{ code: number; reason: string }>((resolve) => oneTooMany.once('close', (code, reason) => resolve({ code, reason: reason.toString() })))
  t.same(close, { code: 4429, reason: 'ConnectionRateLimitReached: Too many connected users' }, 'past them, a socket is closed with the reason')
  t.equal(counted(project), limit, 'the counted sockets are as they were')
  for (const waiter of waiters) waiter.close()
  await eventually('the waiting sockets to be gone', 5000, async () => hub.limits.peek(project.ref)?.waiting === 1)

  const elsewhere = realtimeClient(t, other).channel('room', { config: { broadcast: { self: true, ack: true } } })
  const heardElsewhere = collect<unknown>((take) => elsewhere.on('broadcast', { event: 'said' }, ({ payload }) => take(payload)), 1)
  t.same(await subscribed(elsewhere), { status: 'SUBSCRIBED' }, 'another project on the same node is not affected')
  t.equal(await elsewhere.send({ type: 'broadcast', event: 'said', payload: { n: 1 } }), 'ok')
  t.same(await heardElsewhere, [{ n: 1 }])

  // A counted socket closes: the refused client's own rejoin (realtime-js joins a refused channel again after 1, 2, 5,
  // then 10 s) is let in, as on Supabase, where the figure is checked at every join.
  fillers.pop()!.close()
  await eventually('the refused channel to join on its own once a place is free', 20_000, async () => lateStatuses.includes('SUBSCRIBED'))
  t.equal(lateStatuses.at(-1), 'SUBSCRIBED', 'the refused client joined by itself, without a new socket from the test')
  t.equal(counted(project), limit, 'and is counted: the project is at its figure again')
  fillers.pop()!.close()
  await eventually('the closed socket to be uncounted', 5000, async () => counted(project) === limit - 1)
  t.same(await subscribed(realtimeClient(t, project).channel('room')), { status: 'SUBSCRIBED' }, 'a new socket joins once a counted one has closed')
})

t.test('channel joins per second: past the figure joins are refused, and the next second they are let in', async (t) => {
  const project = await fixture.createProject({ name: 'Realtime joins' })
  const limit = REALTIME_LIMITS[project.record.plan].joinsPerSecond
  const perSocket = Math.ceil((limit * 3) / 4)
  // Two sockets (one socket may hold 100 channels), open and warmed before the burst.
  const clients = [realtimeClient(t, project), realtimeClient(t, project)]
  for (const client of clients) t.same(await subscribed(client.channel('warm')), { status: 'SUBSCRIBED' })
  await nextSecond()
  const burst = clients.flatMap((client, c) => Array.from({ length: perSocket }, (_, i) => statusesOf(client.channel(`burst-${c}-${i}`))))
  await eventually('every join to be answered', 5000, async () => burst.every((statuses) => statuses.length > 0))
  const first = burst.map((statuses) => statuses[0])
  const refusal = 'CHANNEL_ERROR ClientJoinRateLimitReached: Too many joins per second'
  t.equal(first.filter((s) => s === 'SUBSCRIBED').length, limit, `${limit} joins of the second let in`)
  t.equal(first.filter((s) => s === refusal).length, burst.length - limit, "the others refused with Realtime's reason")
  t.same(first.filter((s) => s !== 'SUBSCRIBED' && s !== refusal), [], 'no other answer')
  // realtime-js joins a refused channel again a second later (its rejoinAfterMs): the next second has room.
  await eventually('the refused channels to join on their own again', 6000, async () => burst.every((statuses) => statuses.at(-1) === 'SUBSCRIBED'))
  t.pass('every refused channel joined once a second had passed')
})

t.test('channels per socket: past the plan\'s figure the join is refused', async (t) => {
  const project = await fixture.createProject({ name: 'Realtime channels' })
  const { channelsPerConnection, joinsPerSecond } = REALTIME_LIMITS[project.record.plan]
  const client = realtimeClient(t, project)
  t.same(await subscribed(client.channel('warm')), { status: 'SUBSCRIBED' })
  const joined: string[][] = []
  // Within the joins per second: a second's share at a time.
  while (joined.length < channelsPerConnection - 1) {
    await nextSecond()
    const now = Array.from({ length: Math.min(joinsPerSecond / 2, channelsPerConnection - 1 - joined.length) }, (_, i) => statusesOf(client.channel(`ch-${joined.length + i}`)))
    joined.push(...now)
    await eventually('the joins to be answered', 5000, async () => now.every((statuses) => statuses.length > 0))
  }
  t.same(new Set(joined.map((statuses) => statuses[0])), new Set(['SUBSCRIBED']), `${channelsPerConnection} channels joined`)
  t.same(await subscribed(client.channel('one-too-many')), { status: 'CHANNEL_ERROR', message: 'ChannelRateLimitReached: Too many channels' })
  t.same(await subscribed(realtimeClient(t, project).channel('one-too-many')), { status: 'SUBSCRIBED' }, 'the figure is per socket: another socket joins')
})

t.test('presence changes per second: past the figure the channel is told why and closed; the next second a channel tracks again', async (t) => {
  const project = await fixture.createProject({ name: 'Realtime presence' })
  const limit = REALTIME_LIMITS[project.record.plan].presencePerSecond
  const channel = realtimeClient(t, project).channel('lobby', { config: { presence: { key: 'alice' } } })
  channel.on('presence', { event: 'sync' }, () => {})
  const system = collect<{ status: string; message: string; extension: string }>((take) => channel.on('system', {}, take), 1, 5000)
  const statuses = statusesOf(channel)
  await eventually('the channel to join', 5000, async () => statuses.includes('SUBSCRIBED'))
  await nextSecond()
  const tracks = Array.from({ length: limit + 1 }, (_, i) => channel.track({ i }, { timeout: 2000 }))
  const answers = await Promise.all(tracks)
  t.equal(answers.filter((a) => a === 'ok').length, limit, `${limit} tracks of the second answered`)
  t.match(await system, [{ status: 'error', extension: 'system', message: 'Too many presence messages per second' }], "the channel is told Realtime's reason")
  await eventually('the channel to close', 5000, async () => statuses.includes('CLOSED'))
  t.same(statuses, ['SUBSCRIBED', 'CLOSED'])

  await nextSecond()
  const again = realtimeClient(t, project).channel('lobby', { config: { presence: { key: 'alice' } } })
  again.on('presence', { event: 'sync' }, () => {})
  t.same(await subscribed(again), { status: 'SUBSCRIBED' })
  t.equal(await again.track({ back: true }), 'ok', 'a channel tracks again the next second')
})

/** A broadcast's bytes: its number in the first four, then `size` in all. */
function numbered(n: number, size: number): ArrayBuffer {
  const bytes = new ArrayBuffer(size)
  new DataView(bytes).setUint32(0, n)
  return bytes
}

/** A raw vsn 2.0.0 socket joined to `topic`, counting the user broadcasts of bytes it is sent (their numbers). */
async function rawSubscriber(t: { teardown(fn: () => unknown): void }, target: TestProject, topic: string) {
  const ws = await rawSocket(t, target)
  const heard: number[] = []
  let replied = false
  ws.on('message', (data: Buffer, isBinary: boolean) => {
    if (!isBinary) {
      const [, , , event] = JSON.parse(data.toString()) as [unknown, unknown, string, string]
      if (event === 'phx_reply') replied = true
      return
    }
    // A kind 4 frame: [4, topic, event and meta lengths, encoding (0: bytes)], the three strings, then the payload.
    if (data[0] !== 4 || data[4] !== 0) return
    heard.push(data.readUInt32BE(5 + data[1]! + data[2]! + data[3]!))
  })
  ws.send(JSON.stringify(['1', '1', `realtime:${topic}`, 'phx_join', { config: { broadcast: { self: false }, presence: { enabled: false }, postgres_changes: [], private: false } }]))
  await eventually('the raw socket to join', 5000, async () => replied)
  return { ws, heard }
}

t.test('a slow consumer: frames to a socket that stops reading are dropped past 1 MB waiting; memory stays flat and a reading subscriber hears everything', async (t) => {
  // A plan whose payload size and messages per second let one sender flood (free's are 256 KB and 100 a second).
  const project = await fixture.createProject({ name: 'Realtime slow consumer', plan: 'pro' })
  const topic = 'flood'
  const slow = await rawSubscriber(t, project, topic)
  const closed: number[] = []
  slow.ws.on('close', (code) => closed.push(code))
  // The client reads no more: what the server sends it fills the kernel's buffers, then uWS's.
  ;(slow.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket.pause()

  const reader = realtimeClient(t, project).channel(topic)
  const heard: number[] = []
  reader.on('broadcast', { event: 'blob' }, ({ payload }) => heard.push(new DataView(payload as ArrayBuffer).getUint32(0)))
  const sender = realtimeClient(t, project).channel(topic, { config: { broadcast: { ack: true } } })
  t.same(await subscribed(reader), { status: 'SUBSCRIBED' })
  t.same(await subscribed(sender), { status: 'SUBSCRIBED' })

  // Bytes, so what the clients in this process make and parse weighs little beside what the server could buffer.
  const size = 256 * 1024
  const total = 560
  const group = 8
  const rssBefore = process.memoryUsage.rss()
  let rssPeak = rssBefore
  const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage.rss())), 50)
  t.teardown(() => clearInterval(sampler))
  let slowest = 0
  const acks = new Set<string>()
  for (let n = 0; n < total; n += group) {
    const sentAt = Date.now()
    for (const ack of await Promise.all(Array.from({ length: group }, (_, i) => sender.send({ type: 'broadcast', event: 'blob', payload: numbered(n + i, size) })))) acks.add(ack)
    // The reading subscriber keeps up: each group is heard within a bound before the next is sent.
    await eventually(`the reader to hear ${n + group}`, 5000, async () => heard.length >= n + group, 5)
    slowest = Math.max(slowest, Date.now() - sentAt)
  }
  clearInterval(sampler)
  const grown = rssPeak - rssBefore
  t.same([...acks], ['ok'], 'every broadcast acknowledged')
  t.same(heard, Array.from({ length: total }, (_, i) => i), `the reading subscriber heard all ${total} (${(total * size) / 2 ** 20} MB), in order; slowest group ${slowest} ms`)
  t.ok(grown < 200 * 2 ** 20, `the process's RSS grew by ${Math.round(grown / 2 ** 20)} MB at most during the flood (bound 200 MB)`)

  // The slow socket reads again: it was sent what fit in the buffers, the rest was dropped, and it was not closed.
  ;(slow.ws as unknown as { _socket: { resume(): void } })._socket.resume()
  let before = -1
  await eventually('the slow socket to drain', 10_000, async () => {
    const settled = slow.heard.length === before
    before = slow.heard.length
    return settled
  }, 500)
  t.ok(slow.heard.length > 0 && slow.heard.length < total / 4, `the slow socket was sent ${slow.heard.length} of ${total}: the rest dropped`)
  t.same(slow.heard, Array.from({ length: slow.heard.length }, (_, i) => i), 'what it got is the start of the flood, in order: nothing after the drop')
  t.same(closed, [], 'the slow socket was not closed')
  t.equal(await sender.send({ type: 'broadcast', event: 'blob', payload: numbered(total, 4) }), 'ok')
  await eventually('the slow socket, caught up, to hear what is sent next', 5000, async () => slow.heard.at(-1) === total)
  t.pass('once caught up, the slow socket is sent frames again')
})

// Last: from here on the fleet has two nodes, and every figure is halved.
t.test('on a fleet, each node takes its share of a figure: half of the joins per second on each of two nodes', async (t) => {
  const project = await fixture.createProject({ name: 'Realtime fleet share' })
  const limit = REALTIME_LIMITS[project.record.plan].joinsPerSecond
  const nodeB = await fixture.startAnotherNode()
  await eventually('node A to count two live nodes', 10_000, async () => fixture.platform.fleetNodes() === 2)
  await eventually('node B to count two live nodes', 10_000, async () => nodeB.fleetNodes() === 2)
  const share = Math.ceil(limit / 2)
  const onA = realtimeClient(t, project)
  const onB = realtimeClient(t, { ...project, baseUrl: baseUrlOf(project.ref, `http://127.0.0.1:${nodeB.port}`, undefined) })
  for (const client of [onA, onB]) t.same(await subscribed(client.channel('warm')), { status: 'SUBSCRIBED' })
  await nextSecond()
  const burstA = Array.from({ length: share + 10 }, (_, i) => statusesOf(onA.channel(`a-${i}`)))
  const burstB = Array.from({ length: share }, (_, i) => statusesOf(onB.channel(`b-${i}`)))
  await eventually('every join to be answered', 5000, async () => [...burstA, ...burstB].every((statuses) => statuses.length > 0))
  const firstA = burstA.map((statuses) => statuses[0])
  t.equal(firstA.filter((s) => s === 'SUBSCRIBED').length, share, `node A lets in its share, ceil(${limit} / 2) = ${share}`)
  t.same(new Set(firstA.filter((s) => s !== 'SUBSCRIBED')), new Set(['CHANNEL_ERROR ClientJoinRateLimitReached: Too many joins per second']), 'and refuses the rest')
  t.same(new Set(burstB.map((statuses) => statuses[0])), new Set(['SUBSCRIBED']), 'node B lets in its own share in the same second')
})
