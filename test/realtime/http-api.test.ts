// Realtime's HTTP API (issue 38 item 2) through the unmodified supabase-js:
// httpSend() (JSON and binary, public and private under the project's insert
// policies, the service role past them), a channel's send() before it joins
// (the batch endpoint), and the errors of bad requests in Realtime's shape.
import { createClient } from '@supabase/supabase-js'
import pg from 'pg'
import t from 'tap'
import { ownerUrlOf } from '../../lib/catalogue.ts'
import { REALTIME_LIMITS } from '../../lib/plans.ts'
import { runCli } from '../helpers/cli.ts'
import { request } from '../helpers/http.ts'
import { startTestPlatform } from '../helpers/platform.ts'
import { collect, realtimeClient, subscribed, userToken, wsTransport } from './helpers.ts'

const fixture = await startTestPlatform(t, { BASEPLANE_HTTP_ENGINE: 'uws' })
const project = await fixture.createProject({ name: 'Realtime over HTTP' })
const owner = new pg.Client({ connectionString: ownerUrlOf(project.record) })
owner.on('error', () => {})
await owner.connect()
t.teardown(() => owner.end())
await owner.query(`
  create policy "anyone reads the lobby" on realtime.messages for select to authenticated using (realtime.topic() = 'lobby');
  create policy "hosts send to the lobby" on realtime.messages for insert to authenticated
    with check (realtime.topic() = 'lobby' and (select auth.jwt() ->> 'host') = 'yes');
`)
const api = `${project.baseUrl}/realtime/v1/api`

t.test('httpSend() on a public channel reaches its subscribers, JSON and binary', async (t) => {
  const listener = realtimeClient(t, project).channel('square')
  const heard = collect<{ event: string; payload: unknown }>((take) => listener.on('broadcast', { event: '*' }, (m) => take({ event: m.event, payload: m.payload })), 2)
  t.same(await subscribed(listener), { status: 'SUBSCRIBED' })
  const sender = realtimeClient(t, project).channel('square')
  t.same(await sender.httpSend('said', { text: 'hello' }), { success: true })
  t.same(await sender.httpSend('bytes', new Uint8Array([0, 1, 254, 255]).buffer), { success: true })
  const got = await heard
  t.same(got[0], { event: 'said', payload: { text: 'hello' } })
  t.equal(got[1]?.event, 'bytes')
  t.same([...new Uint8Array(got[1]?.payload as ArrayBuffer)], [0, 1, 254, 255], 'the bytes as sent (a binary frame on 2.0.0)')
})

t.test("a channel's send() before it joins goes through the batch endpoint", async (t) => {
  const listener = realtimeClient(t, project).channel('square-batch')
  const heard = collect<unknown>((take) => listener.on('broadcast', { event: 'early' }, (m) => take(m.payload)), 1)
  t.same(await subscribed(listener), { status: 'SUBSCRIBED' })
  const supabase = createClient(project.baseUrl, project.anonKey, { auth: { persistSession: false }, realtime: { transport: wsTransport } })
  t.teardown(() => supabase.realtime.disconnect())
  t.equal(await supabase.channel('square-batch').send({ type: 'broadcast', event: 'early', payload: { n: 1 } }), 'ok')
  t.same(await heard, [{ n: 1 }])
})

t.test("a private channel's httpSend() passes the insert policies; the service role's key passes by itself", async (t) => {
  const listener = realtimeClient(t, project, '2.0.0', {}, userToken(project, { sub: crypto.randomUUID() }))
  await listener.realtime.setAuth()
  const lobby = listener.channel('lobby', { config: { private: true } })
  const heard = collect<unknown>((take) => lobby.on('broadcast', { event: '*' }, (m) => take(m.payload)), 2, 2000)
  t.same(await subscribed(lobby), { status: 'SUBSCRIBED' })

  const guest = realtimeClient(t, project, '2.0.0', {}, userToken(project, { sub: crypto.randomUUID() }))
  await guest.realtime.setAuth()
  await t.rejects(guest.channel('lobby', { config: { private: true } }).httpSend('said', { from: 'guest' }), { message: 'You do not have permissions to write to this Channel topic: lobby' })
  const host = realtimeClient(t, project, '2.0.0', {}, userToken(project, { sub: crypto.randomUUID(), host: 'yes' }))
  await host.realtime.setAuth()
  t.same(await host.channel('lobby', { config: { private: true } }).httpSend('said', { from: 'host' }), { success: true })
  const service = await request(`${api}/broadcast`, {
    headers: { apikey: project.serviceRoleKey },
    body: { messages: [{ topic: 'lobby', event: 'said', payload: { from: 'service' }, private: true }] },
  })
  t.equal(service.status, 202)
  t.same(await heard, [{ from: 'host' }, { from: 'service' }])
})

t.test('bad requests: Realtime\'s statuses and a message saying what is wrong', async (t) => {
  const headers = { apikey: project.anonKey }
  const empty = await request<{ message: string }>(`${api}/broadcast`, { headers, body: { messages: [] } })
  t.same({ status: empty.status, message: empty.json.message }, { status: 422, message: 'messages must be a list of one or more messages' })
  const missing = await request<{ message: string }>(`${api}/broadcast`, { headers, body: { messages: [{ topic: 'a', payload: {} }] } })
  t.same({ status: missing.status, message: missing.json.message }, { status: 422, message: 'messages[0]: event required' })
  const text = await request<{ message: string }>(`${api}/broadcast/square/events/said`, { headers: { ...headers, 'content-type': 'text/plain' }, body: 'hi' })
  t.same({ status: text.status, message: text.json.message }, { status: 415, message: 'Content-Type text/plain is not served: send application/json or application/octet-stream' })
  const publicPersist = await request<{ message: string }>(`${api}/broadcast/square/events/said?persist=true`, { headers, body: {} })
  t.equal(publicPersist.status, 400)
  const big = await request<{ message: string }>(`${api}/broadcast/square/events/said`, { headers, body: { blob: 'x'.repeat(REALTIME_LIMITS.free.payloadBytes) } })
  t.same({ status: big.status, message: big.json.message }, { status: 413, message: 'Payload size exceeded' })
  const noKey = await request<{ code: string }>(`${api}/broadcast`, { body: { messages: [] } })
  t.equal(noKey.status, 401, 'the key is checked as for every service')
})

t.test('usage and metrics: each broadcast taken counts as a Realtime message of its project', async (t) => {
  const counted = await fixture.createProject({ name: 'Realtime counted' })
  const headers = { apikey: counted.anonKey }
  // Two sockets open at once: the minute's peak.
  for (const name of ['one', 'two']) t.same(await subscribed(realtimeClient(t, counted).channel(name)), { status: 'SUBSCRIBED' })
  for (let i = 0; i < 3; i++) {
    const sent = await request(`${counted.baseUrl}/realtime/v1/api/broadcast/tally/events/n`, { headers, body: { i } })
    t.equal(sent.status, 202)
  }
  const batch = await request(`${counted.baseUrl}/realtime/v1/api/broadcast`, { headers, body: { messages: [{ topic: 'tally', event: 'n', payload: {} }, { topic: 'tally', event: 'n', payload: {} }] } })
  t.equal(batch.status, 202)
  await fixture.platform.usage!.flush()
  const catalogue = new pg.Client({ connectionString: fixture.catalogueUrl })
  await catalogue.connect()
  t.teardown(() => catalogue.end())
  const minutes = await catalogue.query(`select sum(value)::int as n from baseplane.usage_minutes where ref = $1 and counter = 'realtime_messages'`, [counted.ref])
  t.same(minutes.rows, [{ n: 5 }], 'five messages in the usage minutes')
  const peak = await catalogue.query(`select max(value)::int as n from baseplane.usage_minutes where ref = $1 and counter = 'realtime_peak_connections'`, [counted.ref])
  t.same(peak.rows, [{ n: 2 }], 'two connections at once')
  const scrape = await request(`${fixture.origin}/metrics`, { headers: { authorization: `Bearer ${fixture.config.adminToken}` } })
  t.match(scrape.text, new RegExp(`^baseplane_realtime_messages_total\\{project="${counted.ref}"\\} 5$`, 'm'))

  const cli = await runCli(['realtime', counted.ref], { DATABASE_URL: fixture.catalogueUrl })
  t.equal(cli.code, 0, cli.stderr)
  t.match(cli.stdout, /^concurrent connections\s+200$/m, "the plan's limits")
  t.match(cli.stdout, /^broadcast payload\s+256 KB$/m)
  t.match(cli.stdout, /^messages in \d{4}-\d{2} \(UTC\): 5$/m, 'the month\'s messages')
  t.match(cli.stdout, /^peak connections in \d{4}-\d{2}: 2 /m, 'and its peak')
})
