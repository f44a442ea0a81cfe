// GET {platform}/metrics (issue 16 item 5): Prometheus' text format behind the
// admin token, parsed with a Prometheus text parser (prom2javascript), whose
// counts move by exactly what the test did: Auth through supabase-js (and its
// mail through a real SMTP server), GraphQL, Push delivered to the APNs
// stand-in, refusals and queue waits from a project's full fair share, 4xx
// answers, a ref that names no project; and the last hour per minute that the
// dashboard's Overview draws.
import { Readable } from 'node:stream'
import pg from 'pg'
import { getMetricsFromStream, type PromData, type PromHistogramData, type PromMetrics } from 'prom2javascript'
import t from 'tap'
import { ownerUrlOf } from '../../lib/catalogue.ts'
import { PLAN_LIMITS } from '../../lib/plans.ts'
import { LATENCY_BUCKETS, ProjectFigures, serviceIndexOf } from '../../lib/metrics/project-figures.ts'
import { packFigures, packetSeries } from '../../lib/metrics/figures-packet.ts'
import type { MinuteFigures } from '../../lib/metrics/recent-minutes.ts'
import { signJwt } from '../../lib/jwt.ts'
import { request, type ErrorBody, type Reply } from '../helpers/http.ts'
import { authFixture } from '../auth/helpers.ts'
import { eventually } from '../push/helpers.ts'
import { makeApnsKey } from '../../dev/push-peers/keys.ts'
import { startApnsPeer } from '../../dev/push-peers/apns-peer.ts'
import { setProjectProduct } from '../../control-plane/projects.ts'

const key = makeApnsKey()
const peer = await startApnsPeer({ teamId: key.teamId, keyId: key.keyId, publicKey: key.publicKey, topic: 'com.example.metrics' })
t.teardown(() => peer.close())
// Two task slots per thread: a free project runs one request at a time per service, so its queue fills predictably.
const fixture = await authFixture(t, { BASEPLANE_APNS_URL: peer.url, BASEPLANE_TASKS_PER_THREAD: '2', BASEPLANE_IDLE_CONNECTION_MS: '600000' })
const { test: platform, project: shop } = fixture
await setProjectProduct(platform.platform.controlPlane, shop.ref, 'push', true)
const busy = await platform.createProject({ name: 'busy', plan: 'free' })
const admin = { authorization: `Bearer ${platform.config.adminToken}` }

/** The labels the exposition may use: never a user, a path or a device. */
const ALLOWED_LABELS = new Set(['project', 'service', 'status_class', 'state', 'server', 'provider', 'outcome', 'kind', 'delivery', 'thread', 'le', 'quantile', 'version', 'major', 'minor', 'patch', 'space', 'type', 'engine', 'native'])

async function scrape(): Promise<PromMetrics> {
  const reply = await request(`${platform.origin}/metrics`, { headers: admin })
  if (reply.status !== 200) throw new Error(`scrape answered ${reply.status}: ${reply.text}`)
  if (!String(reply.headers['content-type']).startsWith('text/plain; version=0.0.4')) throw new Error(`content-type ${reply.headers['content-type']}`)
  // The text format allows NaN (prom-client writes it for an event-loop lag with no sample yet, as
  // Prometheus reads it); prom2javascript does not read it, so those samples are left out here.
  const samples = reply.text.split('\n')
  const nan = samples.filter((line) => / Nan$/.test(line))
  if (nan.some((line) => !line.startsWith('nodejs_eventloop_lag_'))) throw new Error(`NaN outside the event-loop lag: ${nan.join('; ')}`)
  return getMetricsFromStream(Readable.from([samples.filter((line) => !/ Nan$/.test(line)).join('\n')]))
}

function matches(labels: Record<string, string>, want: Record<string, string>): boolean {
  const names = Object.keys(labels).filter((name) => name !== 'le')
  return names.length === Object.keys(want).length && names.every((name) => labels[name] === want[name])
}

/** A counter's or gauge's value for exactly these labels; 0 when the series is absent. */
function value(metrics: PromMetrics, name: string, labels: Record<string, string>): number {
  const family = metrics[name]
  if (family === undefined) return 0
  const found = (family.data as PromData[]).filter((d) => matches(d.labels, labels))
  if (found.length > 1) throw new Error(`${name} has ${found.length} series for ${JSON.stringify(labels)}`)
  return found[0]?.value ?? 0
}

function histogram(metrics: PromMetrics, name: string, labels: Record<string, string>): PromHistogramData | undefined {
  return (metrics[name]?.data as PromHistogramData[] | undefined)?.find((d) => matches(d.labels, labels))
}

t.test('the scrape needs the admin token and a GET', async (t) => {
  for (const headers of [{}, { authorization: 'Bearer wrong' }, { authorization: platform.config.adminToken! }] as Array<Record<string, string>>) {
    const reply = await request<ErrorBody>(`${platform.origin}/metrics`, { headers })
    t.same({ status: reply.status, body: reply.json }, { status: 401, body: { code: 'unauthorized', message: 'A valid platform admin token is required' } })
    t.equal(reply.headers['x-sb-error-code'], 'unauthorized')
  }
  const posted = await request<ErrorBody>(`${platform.origin}/metrics`, { method: 'POST', headers: admin, body: {} })
  t.same({ status: posted.status, body: posted.json }, { status: 405, body: { code: 'method_not_allowed', message: 'POST is not allowed on /metrics' } })
})

t.test('counts move by exactly the requests made', async (t) => {
  const before = await scrape()
  const graphql = (project: { baseUrl: string }, headers: Record<string, string>, query: string) =>
    request<{ data?: unknown; errors?: unknown }>(`${project.baseUrl}/graphql/v1`, { headers, body: { query } })

  // GraphQL: three answers, one refusal without a key (4xx).
  for (let i = 0; i < 3; i++) {
    const reply = await graphql(shop, { apikey: shop.anonKey }, '{ __typename }')
    t.same({ status: reply.status, body: reply.json }, { status: 200, body: { data: { __typename: 'Query' } } })
  }
  const noKey = await graphql(shop, {}, '{ __typename }')
  t.equal(noKey.status, 401)

  // Auth through supabase-js: a sign-up (its confirmation mail goes to the SMTP stand-in) and a refused sign-in.
  const email = `metrics-${Date.now()}@example.test`
  const signUp = await fixture.anon().auth.signUp({ email, password: 'correct horse battery' })
  t.equal(signUp.error, null)
  t.equal(signUp.data.user?.email, email)
  await fixture.mail.next(email)
  const signIn = await fixture.anon().auth.signInWithPassword({ email, password: 'wrong password!' })
  t.equal(signIn.error?.status, 400, 'a wrong password is a 4xx')

  // Push: a device, the keys, one message, delivered by the actor thread to the APNs stand-in.
  const sub = crypto.randomUUID()
  const userToken = await signJwt(shop.record.jwtSecret, { sub, role: 'authenticated', aud: 'authenticated', exp: Math.floor(Date.now() / 1000) + 600 })
  const push = (path: string, headers: Record<string, string>, body: object, method = 'POST') => request<{ id?: string }>(`${shop.baseUrl}/push/v1${path}`, { method, headers, body })
  const device = await push('/devices', { apikey: shop.anonKey, authorization: `Bearer ${userToken}` }, { platform: 'apns', token: 'cd'.repeat(32) })
  t.equal(device.status, 201, device.text)
  const keys = await push('/credentials/apns', { apikey: shop.serviceRoleKey }, { topic: 'com.example.metrics', key_id: key.keyId, team_id: key.teamId, keys: [{ p8: key.p8 }] }, 'PUT')
  t.equal(keys.status, 200, keys.text)
  const message = await push('/messages', { apikey: shop.serviceRoleKey }, { user_id: sub, title: 'Counted' })
  t.equal(message.status, 201, message.text)
  await eventually(() => peer.delivered.length === 1, 10000, 'the delivery')

  // A full fair share: the busy project's one slot held by a statement waiting on a lock the test holds.
  const owner = new pg.Client({ connectionString: ownerUrlOf(busy.record) })
  await owner.connect()
  t.teardown(() => owner.end())
  await owner.query(`create function hold() returns int language sql stable as $$ select pg_advisory_xact_lock_shared(4242); select 1 $$`)
  await owner.query('select pg_advisory_lock(4242)')
  const { queuedRequests } = PLAN_LIMITS.free
  const flood = 1 + queuedRequests + 2
  let refusedSoFar = 0
  const answers: Array<Promise<Reply<{ data?: unknown; errors?: unknown }>>> = []
  for (let i = 0; i < flood; i++) {
    answers.push(
      graphql(busy, { apikey: busy.anonKey }, '{ hold }').then((reply) => {
        if (reply.status === 503) refusedSoFar++
        return reply
      }),
    )
  }
  await eventually(() => refusedSoFar === 2, 10000, 'the two refusals')
  await owner.query('select pg_advisory_unlock(4242)')
  const replies = await Promise.all(answers)
  t.equal(replies.filter((r) => r.status === 503).length, 2, 'two refused')
  for (const reply of replies.filter((r) => r.status !== 503)) t.same({ status: reply.status, body: reply.json }, { status: 200, body: { data: { hold: 1 } } })

  // A ref that names no project is counted apart, never under its ref.
  const nowhere = await request(`${platform.origin}/project/nosuchproject/graphql/v1`, { headers: { apikey: 'x' }, body: { query: '{ __typename }' } })
  t.equal(nowhere.status, 404)

  // The actor commits its batch after the stand-in answered: wait for the count rather than guess.
  const after = await eventually(async () => {
    const metrics = await scrape()
    return value(metrics, 'baseplane_push_deliveries_total', { project: shop.ref, provider: 'apns', outcome: 'sent' }) > value(before, 'baseplane_push_deliveries_total', { project: shop.ref, provider: 'apns', outcome: 'sent' }) && metrics
  }, 10000, 'the delivery count')

  const moved = (name: string, labels: Record<string, string>) => value(after, name, labels) - value(before, name, labels)
  const requests = (project: string, service: string, statusClass: string) => moved('baseplane_requests_total', { project, service, status_class: statusClass })
  t.equal(requests(shop.ref, 'graphql', '2xx'), 3)
  t.equal(requests(shop.ref, 'graphql', '4xx'), 1)
  t.equal(requests(shop.ref, 'auth', '2xx'), 1, 'the sign-up')
  t.equal(requests(shop.ref, 'auth', '4xx'), 1, 'the refused sign-in')
  t.equal(requests(shop.ref, 'push', '2xx'), 3, 'device, keys, message')
  t.equal(requests(shop.ref, 'push', '4xx') + requests(shop.ref, 'push', '5xx') + requests(shop.ref, 'graphql', '5xx'), 0)
  t.equal(requests(busy.ref, 'graphql', '2xx'), flood - 2)
  t.equal(requests(busy.ref, 'graphql', '5xx'), 2)
  t.equal(moved('baseplane_unrouted_requests_total', { status_class: '4xx' }), 1)
  t.notOk(JSON.stringify(after).includes('nosuchproject'), 'an unknown ref is no label value')

  t.equal(moved('baseplane_fair_share_refusals_total', { project: busy.ref, service: 'graphql' }), 2)
  t.equal(moved('baseplane_fair_share_refusals_total', { project: shop.ref, service: 'graphql' }), 0)
  const waits = histogram(after, 'baseplane_fair_share_queue_wait_seconds', { project: busy.ref, service: 'graphql' })
  t.equal(waits?.count, queuedRequests, 'every queued request waited once (the first ran at once)')
  t.equal(waits?.buckets['+Inf'], queuedRequests)

  const latency = histogram(after, 'baseplane_request_duration_seconds', { project: busy.ref, service: 'graphql' })
  t.equal(latency?.count, flood, 'every answer, refusals too, has a latency')
  t.ok(latency!.sum! > 0)
  // Integer-like keys ("1", "5") come first in a JS object: order the bounds by value.
  const bounds = Object.keys(latency!.buckets).sort((a, b) => Number(a.replace('+Inf', 'Infinity')) - Number(b.replace('+Inf', 'Infinity')))
  t.same(bounds, ['0.001', '0.0025', '0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10', '30', '60', '+Inf'])
  const counts = bounds.map((b) => latency!.buckets[b]!)
  t.same(counts, [...counts].sort((a, b) => a - b), 'buckets are cumulative')
  const shopGraphql = histogram(after, 'baseplane_request_duration_seconds', { project: shop.ref, service: 'graphql' })
  t.equal(shopGraphql!.count - (histogram(before, 'baseplane_request_duration_seconds', { project: shop.ref, service: 'graphql' })?.count ?? 0), 4)

  t.equal(moved('baseplane_push_deliveries_total', { project: shop.ref, provider: 'apns', outcome: 'sent' }), 1)
  t.equal(moved('baseplane_mail_sent_total', { kind: 'confirmation', delivery: 'smtp' }), 1)
  t.equal(moved('baseplane_mail_failures_total', { kind: 'confirmation' }), 0)

  // Each project's pool holds one connection per service it used (one slot each), idle now.
  t.equal(value(after, 'baseplane_project_connections', { project: busy.ref, service: 'graphql', state: 'idle' }), 1)
  t.equal(value(after, 'baseplane_project_connections', { project: busy.ref, service: 'graphql', state: 'busy' }), 0)
  t.equal(value(after, 'baseplane_project_connections', { project: shop.ref, service: 'graphql', state: 'idle' }), 1)
  const serverConnections = (after.baseplane_server_connections?.data as PromData[]).reduce((sum, d) => sum + d.value, 0)
  t.ok(serverConnections >= 3, `the budget counts the open connections (${serverConnections})`)

  // Per process: the threads' busy time and utilisation, the event loop's lag.
  for (const thread of ['main', 'auth-0', 'graphql-0', 'push-0', 'push-actors']) {
    t.ok(value(after, 'baseplane_thread_busy_seconds_total', { thread }) > 0, `${thread} was busy`)
    const utilisation = value(after, 'baseplane_thread_utilization', { thread })
    t.ok(utilisation >= 0 && utilisation <= 1, `${thread} utilisation ${utilisation}`)
  }
  t.equal(after.nodejs_eventloop_lag_seconds?.type, 'gauge')

  const labels = new Set(Object.values(after).flatMap((family) => (family.data as Array<{ labels: Record<string, string> }>).flatMap((d) => Object.keys(d.labels))))
  t.same([...labels].filter((name) => !ALLOWED_LABELS.has(name)), [], 'no label names a user, a path or a device')
})

t.test('the last hour per minute, for the dashboard', async (t) => {
  type Recent = { ref: string; minute_ms: number; minutes: MinuteFigures[] }
  const reply = await request<Recent>(`${platform.origin}/platform/v1/projects/${busy.ref}/metrics/recent`, { headers: admin })
  t.equal(reply.status, 200)
  const { minutes } = reply.json
  t.equal(reply.json.ref, busy.ref)
  t.equal(reply.json.minute_ms, 60000)
  t.equal(minutes.length, 60)
  const starts = minutes.map((m) => Date.parse(m.start))
  t.ok(starts.every((s, i) => i === 0 || s - starts[i - 1]! === 60000), 'consecutive minutes, oldest first')
  t.ok(Date.now() - starts[59]! < 60000, 'the last is the current minute')
  const sum = (pick: (m: MinuteFigures) => number) => minutes.reduce((total, m) => total + pick(m), 0)
  const flood = 1 + PLAN_LIMITS.free.queuedRequests + 2
  t.same(
    { '2xx': sum((m) => m.requests['2xx']), '3xx': sum((m) => m.requests['3xx']), '4xx': sum((m) => m.requests['4xx']), '5xx': sum((m) => m.requests['5xx']) },
    { '2xx': flood - 2, '3xx': 0, '4xx': 0, '5xx': 2 },
  )
  t.equal(sum((m) => m.refusals), 2)
  t.equal(sum((m) => m.queued), PLAN_LIMITS.free.queuedRequests)
  const active = minutes.filter((m) => m.requests['2xx'] + m.requests['5xx'] > 0)
  t.ok(active.length >= 1 && active.length <= 2)
  for (const m of active) {
    t.ok(m.latency_ms !== null && m.latency_ms.p50 > 0 && m.latency_ms.p95 >= m.latency_ms.p50, `percentiles ${JSON.stringify(m.latency_ms)}`)
  }
  for (const m of minutes.filter((m) => m.queued > 0)) t.ok(m.queue_wait_ms! > 0)
  for (const m of minutes.filter((m) => m.requests['2xx'] + m.requests['5xx'] === 0)) {
    t.same({ latency: m.latency_ms, wait: m.queue_wait_ms, refusals: m.refusals, queued: m.queued }, { latency: null, wait: null, refusals: 0, queued: 0 })
  }

  const quiet = await platform.createProject({ name: 'quiet' })
  const empty = await request<Recent>(`${platform.origin}/platform/v1/projects/${quiet.ref}/metrics/recent`, { headers: admin })
  t.equal(empty.status, 200)
  t.equal(empty.json.minutes.length, 60)
  t.ok(empty.json.minutes.every((m) => m.requests['2xx'] === 0 && m.latency_ms === null), 'a project without traffic has 60 empty minutes')

  const unknown = await request<ErrorBody>(`${platform.origin}/platform/v1/projects/nosuchproject/metrics/recent`, { headers: admin })
  t.same({ status: unknown.status, body: unknown.json }, { status: 404, body: { code: 'project_not_found', message: 'Project "nosuchproject" not found' } })
  const badRef = await request<ErrorBody>(`${platform.origin}/platform/v1/projects/NOT-A-REF/metrics/recent`, { headers: admin })
  t.same({ status: badRef.status, body: badRef.json }, { status: 404, body: { code: 'not_found', message: 'No route for /platform/v1/projects/NOT-A-REF/metrics/recent' } })
  const anonymous = await request<ErrorBody>(`${platform.origin}/platform/v1/projects/${busy.ref}/metrics/recent`)
  t.same({ status: anonymous.status, body: anonymous.json }, { status: 401, body: { code: 'unauthorized', message: 'A valid platform admin token is required' } })
})

t.test('figures by minute: status classes, percentiles, refs that name nothing, an hour later', async (t) => {
  let clock = Date.parse('2026-11-23T10:00:30Z')
  const figures = new ProjectFigures({ known: (ref) => ref === 'known', now: () => clock })
  const graphql = serviceIndexOf('graphql')
  for (let ms = 1; ms <= 100; ms++) figures.answered('known', graphql, 200, ms)
  for (const status of [101, 302, 404, 503, 599]) figures.answered('known', serviceIndexOf('auth'), status, 1)
  figures.answered('stranger', graphql, 404, 1)
  figures.refused('known', graphql)
  figures.waited('known', graphql, 10)
  figures.waited('known', graphql, 30)
  t.same([...figures.series()].map((s) => s.ref), ['known'], 'a ref that names no project gets no series')
  t.same([...figures.unrouted], [0, 0, 1, 0])
  const series = [...figures.series()][0]!
  t.same([...series.requests.slice(graphql * 4, graphql * 4 + 4)], [100, 0, 0, 0])
  t.same([...series.requests.slice(0, 4)], [1, 1, 1, 2], 'auth: 101 counts as 2xx, then 302, 404, and 503 and 599 as 5xx')
  t.equal(series.latency[graphql]!.count, 100)
  t.equal(series.waits[graphql]!.count, 2)

  const now = figures.recent('known').at(-1)!
  t.same(now.requests, { '2xx': 101, '3xx': 1, '4xx': 1, '5xx': 2 })
  t.same({ refusals: now.refusals, queued: now.queued, wait: now.queue_wait_ms }, { refusals: 1, queued: 2, wait: 20 })
  // 100 answers of 1..100 ms, plus 5 of 1 ms: the true p50 is 48 ms, p95 95 ms; the estimate is within √2.
  t.ok(now.latency_ms!.p50 >= 48 / Math.SQRT2 && now.latency_ms!.p50 <= 48 * Math.SQRT2, `p50 ${now.latency_ms!.p50}`)
  t.ok(now.latency_ms!.p95 >= 95 / Math.SQRT2 && now.latency_ms!.p95 <= 95 * Math.SQRT2, `p95 ${now.latency_ms!.p95}`)
  t.equal(now.start, '2026-11-23T10:00:00.000Z')

  clock += 61 * 60_000
  const later = figures.recent('known')
  t.ok(later.every((m) => m.requests['2xx'] === 0 && m.latency_ms === null), 'an hour later the minute has left the window')
  figures.answered('known', graphql, 200, 5)
  t.same(figures.recent('known').at(-1)!.requests, { '2xx': 1, '3xx': 0, '4xx': 0, '5xx': 0 }, 'its slot is reused from zero')
  t.equal(figures.recent('stranger').length, 60, 'a ref never seen has 60 empty minutes')
})

t.test('the figures handed to the exposition thread are the figures counted', async (t) => {
  const figures = new ProjectFigures({ known: () => true })
  const [auth, graphql, push] = ['auth', 'graphql', 'push'].map(serviceIndexOf) as [number, number, number]
  for (let ms = 1; ms <= 30; ms++) figures.answered('first', graphql, ms % 3 === 0 ? 500 : 200, ms)
  figures.answered('first', auth, 401, 2)
  figures.refused('first', graphql)
  figures.waited('first', graphql, 7)
  figures.answered('second', push, 200, 40000)
  figures.unrouted[2] = 3
  const counted = [...figures.series()]
  const packet = packFigures(figures)
  t.same(packet.refs, ['first', 'second'])
  t.same([...packet.unrouted], [0, 0, 3, 0])
  const read = [...packetSeries(packet)]
  t.equal(read.length, 2)
  read.forEach((series, i) => {
    const source = counted[i]!
    t.equal(series.ref, source.ref)
    t.same([...series.requests], [...source.requests], `${source.ref}: requests by service and status class`)
    t.same([...series.refusals], [...source.refusals], `${source.ref}: refusals`)
    for (const part of ['latency', 'waits'] as const) {
      series[part].forEach((histogram, s) => {
        const counted = source[part][s]
        const want = counted ? { counts: [...counted.counts], sum: counted.sum, count: counted.count } : { counts: new Array(histogram.counts.length).fill(0), sum: 0, count: 0 }
        t.same({ counts: [...Array.from(histogram.counts)], sum: histogram.sum, count: histogram.count }, want, `${source.ref}: ${part} of service ${s}`)
      })
    }
  })
  t.equal(read[0]!.latency[graphql]!.count, 30)
  t.equal(read[1]!.latency[push]!.counts[LATENCY_BUCKETS.indexOf(60)], 1, '40 s lands in the 60 s bucket')
  t.equal(read[1]!.latency[auth]!.count, 0, 'a service never used reads as empty')
})
