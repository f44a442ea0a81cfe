// Realtime on one node (issue 38 items 1 to 3, public channels) through the
// unmodified supabase-js: the socket on both protocol versions (2.0.0, the
// client's default, with binary broadcast frames; 1.0.0, JSON objects), the
// heartbeat, broadcast with and without `self` and `ack`, presence (state on
// join, diffs after, a closed socket's presence leaving), tokens checked at
// join and again with access_token, an expiring token ending the channel,
// two projects never sharing a topic, and the refusals a client is shown.
import http from 'node:http'
import { createClient } from '@supabase/supabase-js'
import t from 'tap'
import { signJwt } from '../../lib/jwt.ts'
import { request } from '../helpers/http.ts'
import { startTestPlatform, type TestProject } from '../helpers/platform.ts'
import { collect, realtimeClient, subscribed, wsTransport, type Vsn } from './helpers.ts'

const fixture = await startTestPlatform(t, { BASEPLANE_HTTP_ENGINE: 'uws' })
const project = await fixture.createProject({ name: 'Realtime' })
const other = await fixture.createProject({ name: 'Realtime elsewhere' })

const client = (t: { teardown(fn: () => unknown): void }, target: TestProject = project, vsn: Vsn = '2.0.0', options: Record<string, unknown> = {}) => realtimeClient(t, target, vsn, options)

const token = (claims: Record<string, unknown>, target: TestProject = project) => signJwt(target.record.jwtSecret, { aud: 'authenticated', role: 'authenticated', ...claims })
const inSeconds = (s: number) => Math.floor(Date.now() / 1000) + s

for (const [sender, receiver] of [
  ['2.0.0', '2.0.0'],
  ['1.0.0', '2.0.0'],
  ['2.0.0', '1.0.0'],
] as const) {
  t.test(`broadcast from a ${sender} client to a ${receiver} one`, async (t) => {
    const a = client(t, project, sender).channel('room-broadcast', { config: { broadcast: { ack: true } } })
    const b = client(t, project, receiver).channel('room-broadcast')
    const heard = collect<{ event: string; payload: unknown }>((take) => b.on('broadcast', { event: '*' }, (message) => take({ event: message.event, payload: message.payload })), 2)
    const echoed = collect((take) => a.on('broadcast', { event: '*' }, take), 1, 1000)
    t.same(await subscribed(a), { status: 'SUBSCRIBED' })
    t.same(await subscribed(b), { status: 'SUBSCRIBED' })
    t.equal(await a.send({ type: 'broadcast', event: 'moved', payload: { x: 1, name: 'Zoë ✓' } }), 'ok', 'acknowledged (config.broadcast.ack)')
    t.equal(await a.send({ type: 'broadcast', event: 'said', payload: { text: 'hi' } }), 'ok')
    t.same(await heard, [
      { event: 'moved', payload: { x: 1, name: 'Zoë ✓' } },
      { event: 'said', payload: { text: 'hi' } },
    ])
    t.same(await echoed, [], 'the sender does not hear itself without config.broadcast.self')
  })
}

t.test('self: the sender hears its own broadcast', async (t) => {
  const a = client(t).channel('room-self', { config: { broadcast: { self: true } } })
  const heard = collect<unknown>((take) => a.on('broadcast', { event: 'ping' }, (message) => take(message.payload)), 1)
  t.same(await subscribed(a), { status: 'SUBSCRIBED' })
  t.equal(await a.send({ type: 'broadcast', event: 'ping', payload: { n: 7 } }), 'ok')
  t.same(await heard, [{ n: 7 }])
})

t.test('a topic is the project\'s own: the same name in another project hears nothing', async (t) => {
  const here = client(t).channel('room-shared', { config: { broadcast: { ack: true } } })
  const there = client(t, other).channel('room-shared')
  const overheard = collect((take) => there.on('broadcast', { event: '*' }, take), 1, 1000)
  t.same(await subscribed(here), { status: 'SUBSCRIBED' })
  t.same(await subscribed(there), { status: 'SUBSCRIBED' })
  t.equal(await here.send({ type: 'broadcast', event: 'secret', payload: {} }), 'ok')
  t.same(await overheard, [])
})

/** Resolves once `check()` holds (checked on every event the test records), or rejects after `ms`. */
async function until(check: () => boolean, what: string, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

t.test('presence: the state on join, diffs after, and a closed socket leaves', async (t) => {
  const alice = client(t)
  const bob = client(t, project, '1.0.0')
  const a = alice.channel('room-presence', { config: { presence: { key: 'alice' } } })
  const b = bob.channel('room-presence', { config: { presence: { key: 'bob' } } })
  const seenByAlice: string[] = []
  a.on('presence', { event: 'join' }, ({ key }) => seenByAlice.push(`join ${key}`))
  a.on('presence', { event: 'leave' }, ({ key }) => seenByAlice.push(`leave ${key}`))
  b.on('presence', { event: 'sync' }, () => {})
  t.same(await subscribed(a), { status: 'SUBSCRIBED' })
  t.equal(await a.track({ status: 'online' }), 'ok')
  t.same(await subscribed(b), { status: 'SUBSCRIBED' })
  await until(() => Object.keys(b.presenceState()).includes('alice'), 'bob to be sent the state with alice in it')
  t.equal(await b.track({ status: 'away' }), 'ok')
  await until(() => seenByAlice.includes('join bob'), 'alice to see bob join')
  t.same(seenByAlice, ['join alice', 'join bob'], 'alice sees herself, then bob')
  await until(() => Object.keys(b.presenceState()).length === 2, 'bob to see both')
  const state = a.presenceState<{ status: string }>()
  t.same(Object.keys(state).sort(), ['alice', 'bob'])
  t.equal(state.bob![0]!.status, 'away')
  t.match(state.bob![0]!.presence_ref, /^[\w-]+$/, 'each meta has its ref')

  bob.realtime.disconnect()
  await until(() => seenByAlice.includes('leave bob'), "bob's presence to leave")
  t.same(Object.keys(a.presenceState()), ['alice'], "bob's socket closed: his presence left")

  t.equal(await a.untrack(), 'ok')
  await until(() => seenByAlice.includes('leave alice'), 'alice to leave')
  t.same(a.presenceState(), {})
})

t.test('a user token at join runs the channel as that user; a bad or expired one is refused with Realtime\'s reason', async (t) => {
  const user = client(t)
  await user.realtime.setAuth(token({ sub: '11111111-1111-4111-8111-111111111111', exp: inSeconds(3600) }))
  t.same(await subscribed(user.channel('room-user')), { status: 'SUBSCRIBED' })

  const expired = client(t)
  await expired.realtime.setAuth(token({ exp: inSeconds(-30) }))
  const refused = await subscribed(expired.channel('room-expired'))
  t.equal(refused.status, 'CHANNEL_ERROR')
  t.match(refused.message, /^InvalidJWTToken: Token has expired \d+ seconds ago$/)

  const forged = client(t)
  await forged.realtime.setAuth(token({ exp: inSeconds(3600) }, other))
  t.same(await subscribed(forged.channel('room-forged')), { status: 'CHANNEL_ERROR', message: 'JwtSignatureError: Failed to validate JWT signature' }, "another project's token")
})

t.test('a token that expires ends the channel: a system message, then the channel closes', async (t) => {
  const supabase = client(t)
  await supabase.realtime.setAuth(token({ exp: inSeconds(2) }))
  const channel = supabase.channel('room-expiring')
  const system = collect<{ status: string; message: string; extension: string }>((take) => channel.on('system', {}, take), 1, 6000)
  const closed = new Promise<string>((resolve) => channel.subscribe((status) => status !== 'SUBSCRIBED' && resolve(status)))
  t.same(await system, [{ status: 'error', extension: 'system', channel: 'room-expiring', message: 'Token has expired 0 seconds ago' }])
  t.equal(await closed, 'CLOSED')
})

t.test('the refusals a client is shown', async (t) => {
  const supabase = client(t)
  const privateJoin = await subscribed(supabase.channel('room-private', { config: { private: true } }))
  t.same(privateJoin, { status: 'CHANNEL_ERROR', message: 'Unauthorized: You do not have permissions to read from this Channel topic: room-private' }, 'a private channel without a policy (test/realtime/private.test.ts has them)')

  const changes = supabase.channel('room-changes').on('postgres_changes', { event: 'INSERT', schema: 'public', table: 'notes' }, () => {})
  const system = collect<{ status: string; extension: string }>((take) => changes.on('system', {}, take), 1)
  t.same(await subscribed(changes), { status: 'SUBSCRIBED' }, 'the bindings are answered with their ids, as the client checks them')
  t.match(await system, [{ status: 'error', extension: 'postgres_changes', message: /^Unable to subscribe to changes with given parameters/ }])

  const wrongKey = createClient(project.baseUrl, `${project.anonKey.slice(0, -4)}AAAA`, { auth: { persistSession: false }, realtime: { transport: wsTransport } })
  const refused = await subscribed(wrongKey.channel('room'))
  wrongKey.realtime.disconnect()
  t.same(refused, { status: 'CHANNEL_ERROR', message: 'socket closed: 4401 (invalid_api_key: Invalid API key)' }, "the data plane's refusal, as over HTTP")

  const plain = await request<{ code: string }>(`${project.baseUrl}/realtime/v1/websocket?vsn=2.0.0`, { headers: { apikey: project.anonKey } })
  t.same([plain.status, plain.json.code], [426, 'upgrade_required'], 'a GET that is not an upgrade')
  const rest = await request(`${project.baseUrl}/rest/v1/`, { headers: { apikey: project.anonKey, connection: 'Upgrade', upgrade: 'h2c' } })
  t.equal(rest.status, 200, 'another upgrade asked for elsewhere is a request')
})

t.test('the heartbeat is answered', async (t) => {
  const beats: string[] = []
  const supabase = client(t, project, '2.0.0', { heartbeatIntervalMs: 300, heartbeatCallback: (status: string) => beats.push(status) })
  t.same(await subscribed(supabase.channel('room-heartbeat')), { status: 'SUBSCRIBED' })
  await new Promise((resolve) => setTimeout(resolve, 1000))
  t.ok(beats.includes('ok'), `heartbeats answered: ${beats.join(', ')}`)
  t.notOk(beats.includes('timeout'))
})

/** A raw upgrade: the status line and the close frame the server sends (code and reason). */
function rawUpgrade(port: number, path: string, host: string): Promise<{ status: number; code: number; reason: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: '127.0.0.1',
      port,
      path,
      headers: { host, connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==' },
    })
    req.on('upgrade', (res, socket, head: Buffer) => {
      let frame = head
      const read = () => {
        if (frame.length < 2 || frame.length < 2 + frame[1]!) return
        socket.destroy()
        resolve({ status: res.statusCode!, code: frame.readUInt16BE(2), reason: frame.subarray(4, 2 + frame[1]!).toString() })
      }
      socket.on('data', (chunk: Buffer) => {
        frame = Buffer.concat([frame, chunk])
        read()
      })
      read()
    })
    req.on('response', (res) => reject(new Error(`answered ${res.statusCode} instead of upgrading`)))
    req.on('error', reject)
    req.end()
  })
}

t.test('vsn other than 1.0.0 and 2.0.0 is refused; the node:http engine says Realtime is not served there', async (t) => {
  const port = fixture.platform.port
  const badVersion = await rawUpgrade(port, `/realtime/v1/websocket?vsn=3.0.0&apikey=${project.anonKey}`, `${project.ref}.localhost:${port}`)
  t.same(badVersion, { status: 101, code: 4400, reason: 'bad_request: vsn must be 1.0.0 or 2.0.0' }, 'the ref in the Host')

  const node = await fixture.startAnotherNode({ env: { BASEPLANE_HTTP_ENGINE: 'node' } })
  t.equal(node.httpEngine.name, 'node:http')
  const onNode = createClient(`http://127.0.0.1:${node.port}/project/${project.ref}`, project.anonKey, { auth: { persistSession: false }, realtime: { transport: wsTransport } })
  const report = await subscribed(onNode.channel('room'))
  onNode.realtime.disconnect()
  t.same(report, { status: 'CHANNEL_ERROR', message: 'socket closed: 4501 (service_not_offered: Realtime is served on the uWebSockets.js engine, not BASEPLANE_HTTP_ENGINE=node)' })
})
