// Usage per project (issue 27 items 1 and 2) on one node: what a node counts
// lands in the catalogue at its flush, exactly; a catalogue that is away
// loses nothing; counts land in the month of their minute; rollups, pruning,
// the fleet's jobs and the database sizes; the admin API's answers, its
// export streamed for 5,000 projects in bounded memory, and bad input refused.
// The flush timer is an hour here: each test flushes when it means to
// (usage-fleet.test.ts has the timer, several nodes and a node stopping).
import t from 'tap'
import http from 'node:http'
import v8 from 'node:v8'
import vm from 'node:vm'
import pg from 'pg'
import { setAuthOptions } from '../../control-plane/auth-settings.ts'
import { openUsageExport, projectUsage, USAGE_EXPORT_COLUMNS } from '../../control-plane/usage.ts'
import { pruneUsage, rollUpUsage, runDueUsageJobs, sampleDatabaseSizes } from '../../control-plane/usage-upkeep.ts'
import { UsageRecorder } from '../../data-plane/usage-recorder.ts'
import { ActiveUsers } from '../../lib/metrics/active-users.ts'
import { ProjectFigures, serviceIndexOf } from '../../lib/metrics/project-figures.ts'
import { USAGE_COUNTERS } from '../../lib/metrics/usage-counters.ts'
import { UsageLedger } from '../../lib/metrics/usage-ledger.ts'
import { loadConfig } from '../../lib/config.ts'
import { withDatabase, serverUrl } from '../helpers/db.ts'
import { runCli } from '../helpers/cli.ts'
import { eventually } from '../helpers/eventually.ts'
import { request, type ErrorBody } from '../helpers/http.ts'
import { startTestPlatform } from '../helpers/platform.ts'
import type { ProjectUsageView } from '../../control-plane/usage.ts'

const fx = await startTestPlatform(t, { BASEPLANE_USAGE_FLUSH_MS: '3600000' })
const { controlPlane } = fx.platform
const catalogue = controlPlane.catalogue
const admin = `${fx.origin}/platform/v1`
const adminAuth = { authorization: `Bearer ${fx.config.adminToken}` }
const recorder = fx.platform.usage!

/** What one counter of a project adds up to in the catalogue's minute rows. */
async function minuteTotal(ref: string, counter: string): Promise<number> {
  const { rows } = await catalogue.query<{ value: string | null }>('select sum(value)::text as value from baseplane.usage_minutes where ref = $1 and counter = $2', [ref, counter])
  return Number(rows[0]!.value ?? 0)
}

t.test("a node's counts land in the catalogue at its flush, exactly, in one statement", async (t) => {
  const project = await fx.createProject({ auth: true })
  const { ref, baseUrl, anonKey } = project
  const headers = { apikey: anonKey, 'content-type': 'application/json' }
  let authBytes = 0
  let authRequests = 0
  const auth = async (path: string, body: object) => {
    const reply = await request<Record<string, unknown>>(`${baseUrl}/auth/v1${path}`, { headers, body })
    authBytes += Buffer.byteLength(reply.text)
    authRequests += 1
    return reply
  }
  // A sign-up that must be confirmed: a confirmation mail (to the outbox), no session.
  const pending = await auth('/signup', { email: 'pending@example.test', password: 'secret-password' })
  t.equal(pending.status, 200, 'signed up, to be confirmed')
  t.notOk(pending.json.access_token, 'no session before confirmation')
  await setAuthOptions(controlPlane, ref, { mailer_autoconfirm: true, external_anonymous_users_enabled: true })
  // A sign-up that signs in, a password sign-in and a refresh by the same user, an anonymous sign-in.
  const signedUp = await auth('/signup', { email: 'ada@example.test', password: 'secret-password' })
  t.ok(signedUp.json.access_token, 'signed up and in')
  const signedIn = await auth('/token?grant_type=password', { email: 'ada@example.test', password: 'secret-password' })
  t.equal(signedIn.status, 200, 'signed in')
  const refreshed = await auth('/token?grant_type=refresh_token', { refresh_token: signedIn.json.refresh_token })
  t.equal(refreshed.status, 200, 'refreshed')
  const anonymous = await auth('/signup', {})
  t.equal(anonymous.status, 200, 'signed in anonymously')
  t.equal((anonymous.json.user as { is_anonymous: boolean }).is_anonymous, true)
  // A wrong password: answered and counted as a request, no sign-in.
  const refused = await auth('/token?grant_type=password', { email: 'ada@example.test', password: 'wrong-password' })
  t.equal(refused.status, 400)
  const graphql = await request(`${baseUrl}/graphql/v1`, { headers, body: { query: '{ __typename }' } })
  t.equal(graphql.status, 200, graphql.text)
  const health = await request(`${baseUrl}/health`, { headers: { apikey: anonKey } })
  t.equal(health.status, 200)

  t.equal(await minuteTotal(ref, 'requests_auth'), 0, 'nothing is written before the flush')
  const before = recorder.stats()
  await recorder.flush()
  const after = recorder.stats()
  t.equal(after.statements - before.statements, 1, 'one statement')
  t.equal(after.failures, before.failures, 'the write did not fail')

  const expected: Record<string, number> = {
    requests_auth: authRequests,
    bytes_out_auth: authBytes,
    requests_graphql: 1,
    bytes_out_graphql: Buffer.byteLength(graphql.text),
    requests_other: 1,
    bytes_out_other: Buffer.byteLength(health.text),
    auth_sign_ins: 3,
    auth_token_refreshes: 1,
    mail_sent: 1,
  }
  for (const [counter, value] of Object.entries(expected)) t.equal(await minuteTotal(ref, counter), value, counter)
  const view = await projectUsage(controlPlane, ref)
  t.same(view.totals, { ...Object.fromEntries(USAGE_COUNTERS.map((name) => [name, 0])), ...expected })
  t.same(view.active_users, { total: 2, anonymous: 1, authenticated: 1 })
  t.equal(view.deleted, false)

  // A second flush with nothing new writes nothing; a user already written this month is not sent again.
  const quiet = recorder.stats().statements
  await recorder.flush()
  t.equal(recorder.stats().statements, quiet, 'nothing counted, no statement')
  await auth('/token?grant_type=password', { email: 'ada@example.test', password: 'secret-password' })
  await recorder.flush()
  t.equal(recorder.stats().users, after.users, 'the user known to be written is not sent again')
  t.equal((await projectUsage(controlPlane, ref)).totals.auth_sign_ins, 4)
})

t.test('a catalogue that is away: the counts are kept and written with the next flush; past the bound the oldest minute goes', async (t) => {
  const figures = new ProjectFigures({ known: () => true })
  const activeUsers = new ActiveUsers()
  let away = true
  const failing = {
    query: (config: pg.QueryConfig) => (away ? Promise.reject(new Error('connect ECONNREFUSED')) : catalogue.query(config)),
  } as unknown as Pick<pg.Pool, 'query'>
  const ref = 'awaycatalogue'
  const recorder = new UsageRecorder({ figures, activeUsers, catalogue: failing, flushMillis: 3600000 })
  figures.answered(ref, serviceIndexOf('graphql'), 200, 1, 100)
  activeUsers.seen(ref, '0b0c6f43-8f55-4bd4-9a51-3f1b7e2f0a01', false, Date.now())
  await recorder.flush()
  t.match(recorder.stats(), { statements: 1, failures: 1, heldEntries: 1, heldUsers: 1 })
  figures.answered(ref, serviceIndexOf('graphql'), 200, 1, 50)
  away = false
  await recorder.flush()
  t.match(recorder.stats(), { statements: 2, failures: 1, heldEntries: 0, heldUsers: 0 })
  t.equal(await minuteTotal(ref, 'requests_graphql'), 2)
  t.equal(await minuteTotal(ref, 'bytes_out_graphql'), 150)
  const { rows } = await catalogue.query('select user_id::text from baseplane.usage_active_users where ref = $1', [ref])
  t.same(rows, [{ user_id: '0b0c6f43-8f55-4bd4-9a51-3f1b7e2f0a01' }])

  const dropped: number[] = []
  const ledger = new UsageLedger({ maxEntries: 2, onDrop: (d) => dropped.push(d.minute) })
  ledger.add(60_000, 'a', 0, 1)
  ledger.add(120_000, 'a', 0, 1)
  ledger.add(180_000, 'a', 0, 1)
  ledger.add(0, 'b', 0, 1)
  t.same(dropped, [60_000, 0], 'the oldest minute is dropped, and a count older than all that is held')
  t.same(ledger.take().minutes, [120_000, 180_000])
})

t.test("push deliveries: the push actor thread's tally grows, and a thread started again counts from zero", async (t) => {
  const figures = new ProjectFigures({ known: () => true })
  const ref = 'pushtally'
  let tally = [
    { labels: [ref, 'web', 'sent'], count: 3 },
    { labels: [ref, 'fcm', 'failed'], count: 1 },
    { labels: [ref, 'carrier-pigeon', 'sent'], count: 9 },
  ]
  const recorder = new UsageRecorder({ figures, activeUsers: new ActiveUsers(), catalogue, flushMillis: 3600000, pushDeliveries: async () => tally })
  await recorder.flush()
  tally = [{ labels: [ref, 'web', 'sent'], count: 5 }, { labels: [ref, 'fcm', 'failed'], count: 1 }]
  await recorder.flush()
  // The thread died and came back: its tally starts again.
  tally = [{ labels: [ref, 'web', 'sent'], count: 2 }]
  await recorder.flush()
  // Its last tally, handed over at stop.
  await recorder.stop([{ labels: [ref, 'web', 'sent'], count: 4 }, { labels: [ref, 'apns', 'expired'], count: 1 }])
  t.equal(recorder.stats().failures, 0)
  const view = await projectUsage(controlPlane, ref)
  t.match(view.totals, { push_web_sent: 3 + 2 + 2 + 2, push_fcm_failed: 1, push_apns_expired: 1, push_apns_sent: 0 })
})

t.test('counts land in the month of their minute; rollups keep the figures; retention prunes', async (t) => {
  // A ref with no project: its usage is kept as a deleted project's would be.
  const ref = 'monthboundary'
  const user = 'f1d2c3b4-0000-4000-8000-000000000001'
  const figures = new ProjectFigures({ known: () => true })
  const activeUsers = new ActiveUsers()
  const endOfJanuary = Date.parse('2026-01-31T23:59:10Z')
  let now = endOfJanuary
  const recorder = new UsageRecorder({ figures, activeUsers, catalogue, flushMillis: 60000, now: () => now })
  for (let i = 0; i < 5; i++) figures.answered(ref, serviceIndexOf('auth'), 200, 1, 10)
  figures.used(ref, { session: 'sign_in' })
  activeUsers.seen(ref, user, false, now)
  now = Date.parse('2026-02-01T00:00:00.020Z')
  await recorder.flush()
  for (let i = 0; i < 7; i++) figures.answered(ref, serviceIndexOf('auth'), 200, 1, 10)
  figures.used(ref, { session: 'refresh' })
  activeUsers.seen(ref, user, false, now)
  now = Date.parse('2026-02-01T00:01:00.010Z')
  await recorder.flush()
  t.equal(recorder.stats().failures, 0)

  const january = await projectUsage(controlPlane, ref, '2026-01', Date.parse('2026-03-01T00:00:00Z'))
  const february = await projectUsage(controlPlane, ref, '2026-02', Date.parse('2026-03-01T00:00:00Z'))
  t.equal(january.deleted, true, 'no such project: its usage is still answered')
  t.match(january, { month: '2026-01', totals: { requests_auth: 5, bytes_out_auth: 50, auth_sign_ins: 1, auth_token_refreshes: 0 }, active_users: { total: 1 } })
  t.match(february, { month: '2026-02', totals: { requests_auth: 7, bytes_out_auth: 70, auth_sign_ins: 0, auth_token_refreshes: 1 }, active_users: { total: 1 } })
  t.equal(january.days.length, 31)
  t.equal(february.days.length, 28)
  t.match(january.days.at(-1), { date: '2026-01-31', counters: { requests_auth: 5 } })
  t.match(february.days[0], { date: '2026-02-01', counters: { requests_auth: 7 } })

  const rolled = await rollUpUsage(controlPlane, Date.parse('2026-02-02T00:00:00Z'))
  t.ok(rolled.minutes >= 6, `minutes moved: ${rolled.minutes}`)
  const { rows: left } = await catalogue.query('select 1 from baseplane.usage_minutes where ref = $1', [ref])
  t.equal(left.length, 0, 'the minute rows are gone once rolled up')
  const { rows: hours } = await catalogue.query<{ hour: string; value: string }>(
    `select to_char(hour at time zone 'UTC', 'YYYY-MM-DD"T"HH24') as hour, value::text from baseplane.usage_hours where ref = $1 and counter = 'requests_auth' order by hour`,
    [ref],
  )
  t.same(hours, [{ hour: '2026-01-31T23', value: '5' }, { hour: '2026-02-01T00', value: '7' }])
  t.same(await projectUsage(controlPlane, ref, '2026-01', Date.parse('2026-03-01T00:00:00Z')), january, 'the same figures from the rollups')
  t.same(await projectUsage(controlPlane, ref, '2026-02', Date.parse('2026-03-01T00:00:00Z')), february)

  // 2027-01 keeping 13 months keeps 2026-01 on; hours are kept 3 months (2026-11 on).
  const pruned = await pruneUsage(controlPlane, { retentionMonths: 13, hourlyRetentionMonths: 3 }, Date.parse('2027-01-15T00:00:00Z'))
  t.ok(pruned.hours >= 2, 'the hours are pruned')
  t.same((await projectUsage(controlPlane, ref, '2026-01', Date.parse('2027-01-15T00:00:00Z'))).totals.requests_auth, 5, 'the days are kept')
  await pruneUsage(controlPlane, { retentionMonths: 13, hourlyRetentionMonths: 3 }, Date.parse('2027-02-15T00:00:00Z'))
  const gone = await projectUsage(controlPlane, ref, '2026-02', Date.parse('2027-02-15T00:00:00Z'))
  t.equal(gone.totals.requests_auth, 7, 'February 2026 is the oldest month kept in February 2027')
  const { rows: januaryLeft } = await catalogue.query(`select 1 from baseplane.usage_days where ref = $1 and day < '2026-02-01'`, [ref])
  const { rows: usersLeft } = await catalogue.query(`select month::text from baseplane.usage_active_users where ref = $1`, [ref])
  t.same({ days: januaryLeft.length, users: usersLeft }, { days: 0, users: [{ month: '2026-02-01' }] }, 'January 2026 is pruned, days and users alike')
})

t.test("the fleet's jobs: one node claims a due job; database sizes sampled per project", async (t) => {
  const project = await fx.createProject({})
  await catalogue.query(`update baseplane.usage_jobs set due_at = '-infinity'`)
  const settings = { retentionMonths: 13, hourlyRetentionMonths: 3, sizeSampleMillis: 3600000 }
  const first = await runDueUsageJobs(controlPlane, 'node-a', settings)
  const second = await runDueUsageJobs(controlPlane, 'node-b', settings)
  t.same({ first: first.sort(), second }, { first: ['database_sizes', 'quotas', 'retention', 'rollup'], second: [] })
  const { rows: jobs } = await catalogue.query<{ job: string; holder: string; ahead: boolean }>(
    `select job, holder, due_at > now() + interval '50 seconds' as ahead from baseplane.usage_jobs order by job`,
  )
  t.same(jobs, [
    { job: 'database_sizes', holder: 'node-a', ahead: true },
    { job: 'quotas', holder: 'node-a', ahead: true },
    { job: 'retention', holder: 'node-a', ahead: true },
    { job: 'rollup', holder: 'node-a', ahead: true },
  ])

  const sampledAt = new Date()
  t.ok((await sampleDatabaseSizes(controlPlane, sampledAt)) >= 1)
  const admin = new pg.Client({ connectionString: withDatabase(await serverUrl(), 'postgres') })
  await admin.connect()
  const { rows } = await admin.query<{ bytes: string }>('select pg_database_size($1)::text as bytes', [project.record.dbName])
  await admin.end()
  const view = await projectUsage(controlPlane, project.ref)
  t.ok(view.database_size.bytes! > 1_000_000, `a database has some size: ${view.database_size.bytes}`)
  t.ok(Math.abs(view.database_size.bytes! - Number(rows[0]!.bytes)) < 1_000_000, 'the size sampled is pg_database_size')
  t.equal(view.database_size.sampled_at, sampledAt.toISOString())
  t.equal(view.days.at(-1)!.database_size_bytes, view.database_size.peak_bytes)
})

t.test("the admin API: a project's month, every project's month, and bad input refused", async (t) => {
  const project = await fx.createProject({})
  await request(`${project.baseUrl}/graphql/v1`, { headers: { apikey: project.anonKey }, body: { query: '{ __typename }' } })
  await recorder.flush()
  const month = new Date().toISOString().slice(0, 7)
  const one = await request<ProjectUsageView>(`${admin}/projects/${project.ref}/usage?month=${month}`, { headers: adminAuth })
  t.equal(one.status, 200, one.text)
  t.match(one.json, { ref: project.ref, month, deleted: false, totals: { requests_graphql: 1 }, active_users: { total: 0, anonymous: 0, authenticated: 0 } })
  const current = await request<ProjectUsageView>(`${admin}/projects/${project.ref}/usage`, { headers: adminAuth })
  t.same(current.json, one.json, 'the current month by default')

  const lines = await request(`${admin}/usage?month=${month}`, { headers: adminAuth })
  t.equal(lines.status, 200)
  t.equal(lines.headers['content-type'], 'application/x-ndjson')
  t.equal(lines.headers['transfer-encoding'], 'chunked')
  const rows = lines.text.trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>)
  t.match(rows.find((row) => row.ref === project.ref), { ref: project.ref, month, requests_graphql: 1, active_users: 0 })
  t.same(Object.keys(rows[0]!), USAGE_EXPORT_COLUMNS)
  const asks: Array<{ query: string; headers: Record<string, string> }> = [
    { query: '&format=csv', headers: {} },
    { query: '', headers: { accept: 'text/csv' } },
  ]
  for (const ask of asks) {
    const csv = await request(`${admin}/usage?month=${month}${ask.query}`, { headers: { ...adminAuth, ...ask.headers } })
    t.equal(csv.headers['content-type'], 'text/csv; charset=utf-8')
    const [head, ...body] = csv.text.trimEnd().split('\r\n')
    t.equal(head, USAGE_EXPORT_COLUMNS.join(','))
    t.equal(body.length, rows.length)
    const mine = body.find((line) => line.startsWith(`${project.ref},`))!.split(',')
    t.equal(mine[USAGE_EXPORT_COLUMNS.indexOf('requests_graphql')], '1')
  }

  const refusals: Array<[string, number, ErrorBody]> = [
    [`/projects/${project.ref}/usage?month=2026-13`, 400, { code: 'invalid_argument', message: 'month must be written YYYY-MM (such as 2026-11), got "2026-13"' }],
    [`/projects/${project.ref}/usage?month=`, 400, { code: 'invalid_argument', message: 'month must be written YYYY-MM (such as 2026-11), got ""' }],
    [`/usage?month=November`, 400, { code: 'invalid_argument', message: 'month must be written YYYY-MM (such as 2026-11), got "November"' }],
    [`/usage?format=xml`, 400, { code: 'invalid_argument', message: 'format must be csv or jsonl, got "xml"' }],
    [`/projects/nosuchproject/usage`, 404, { code: 'project_not_found', message: 'Project "nosuchproject" not found' }],
  ]
  for (const [path, status, body] of refusals) {
    const reply = await request<ErrorBody>(`${admin}${path}`, { headers: adminAuth })
    t.same({ status: reply.status, body: reply.json }, { status, body }, path)
  }
  const unauthorized = await request<ErrorBody>(`${admin}/usage`)
  t.equal(unauthorized.status, 401)
  t.equal(catalogue.waitingCount, 0)
})

t.test('the export streams 5,000 projects: every line arrives, memory does not grow with the count, the connection comes back', async (t) => {
  const month = '2025-06'
  const refs = Array.from({ length: 5000 }, (_, i) => `bulk${String(i).padStart(5, '0')}`)
  await catalogue.query(
    `insert into baseplane.usage_days (ref, day, counter, value)
     select r.ref, ('2025-06-' || lpad((1 + r.i % 28)::text, 2, '0'))::date, c.counter, r.i
       from unnest($1::text[]) with ordinality as r(ref, i),
            unnest(array['requests_auth', 'requests_graphql', 'bytes_out_graphql', 'push_web_sent']) as c(counter)`,
    [refs],
  )
  await catalogue.query(
    `insert into baseplane.usage_active_users (ref, month, user_id, anonymous)
     select ref, '2025-06-01', gen_random_uuid(), i % 2 = 0 from unnest($1::text[]) with ordinality as r(ref, i)`,
    [refs],
  )
  t.teardown(async () => {
    await catalogue.query(`delete from baseplane.usage_days where ref like 'bulk%'`)
    await catalogue.query(`delete from baseplane.usage_active_users where ref like 'bulk%'`)
  })

  v8.setFlagsFromString('--expose-gc')
  const gc = vm.runInNewContext('gc') as () => void
  const heap = () => {
    gc()
    return process.memoryUsage().heapUsed
  }
  const base = heap()
  let peak = 0
  // Sampled all along (the server's side runs in this process): a server holding the whole month would show at some moment.
  const sampler = setInterval(() => (peak = Math.max(peak, heap() - base)), 10)
  const answer = await fetch(`${admin}/usage?month=${month}&format=jsonl`, { headers: adminAuth })
  t.equal(answer.status, 200)
  const reader = answer.body!.pipeThrough(new TextDecoderStream()).getReader()
  let pending = ''
  let bytes = 0
  let index = 0
  let misplaced = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    bytes += value.length
    pending += value
    let end
    while ((end = pending.indexOf('\n')) !== -1) {
      const row = JSON.parse(pending.slice(0, end)) as Record<string, number | string>
      pending = pending.slice(end + 1)
      const i = index++
      if (row.ref !== refs[i] || row.requests_auth !== i + 1 || row.push_web_sent !== i + 1 || row.active_users !== 1) misplaced++
      // Slower than the server: it must wait for this reader, not gather the rest meanwhile.
      if (i % 250 === 0) await new Promise((resolve) => setTimeout(resolve, 5))
    }
  }
  clearInterval(sampler)
  t.equal(index, 5000, 'every line arrived')
  t.equal(misplaced, 0, 'each in ref order with its figures')
  t.equal(pending, '')
  t.ok(peak < bytes, `the heap grew by ${(peak / 1e6).toFixed(2)} MB at most while ${(bytes / 1e6).toFixed(2)} MB streamed`)
  // The cursor's connection is released as the answer ends, a moment after its last line (later on a busy machine).
  await eventually('the connection is idle again', 5000, async () => catalogue.idleCount === catalogue.totalCount, 10).catch(() => undefined)
  t.equal(catalogue.idleCount, catalogue.totalCount, "the cursor's connection is back in the pool")

  // A client that stops reading, with more than the sockets' buffers hold (20,000 projects, some 13 MB): the server
  // waits for it, holding one batch and its cursor, and goes on when it reads again.
  const more = Array.from({ length: 15000 }, (_, i) => `bulk${String(5000 + i).padStart(5, '0')}`)
  await catalogue.query(
    `insert into baseplane.usage_days (ref, day, counter, value)
     select r.ref, '2025-06-02'::date, c.counter, 1
       from unnest($1::text[]) as r(ref), unnest(array['requests_auth', 'requests_graphql', 'bytes_out_graphql', 'push_web_sent']) as c(counter)`,
    [more],
  )
  const busy = () => catalogue.totalCount - catalogue.idleCount
  const paused = await new Promise<{ lines: number; held: number[] }>((resolve, reject) => {
    const held: number[] = []
    http
      .get(`${admin}/usage?month=${month}`, { headers: adminAuth }, (res) => {
        let lines = 0
        res.on('data', (chunk: Buffer) => {
          for (const byte of chunk) if (byte === 10) lines++
        })
        res.on('end', () => resolve({ lines, held }))
        res.once('data', () => {
          res.pause()
          setTimeout(() => {
            held.push(busy())
            setTimeout(() => {
              held.push(busy())
              res.resume()
            }, 1000)
          }, 1000)
        })
      })
      .on('error', reject)
  })
  t.same(paused, { lines: 20000, held: [1, 1] }, 'held its cursor for the 2 s the client did not read, then every line')
  await new Promise((resolve) => setTimeout(resolve, 50))
  t.equal(busy(), 0, 'the cursor is closed at the end')

  // A client that leaves after the first chunk: the cursor is closed and its connection given back.
  const early = await fetch(`${admin}/usage?month=${month}`, { headers: adminAuth })
  const partial = early.body!.getReader()
  await partial.read()
  await partial.cancel()
  const deadline = Date.now() + 5000
  while (catalogue.idleCount !== catalogue.totalCount && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
  t.equal(catalogue.idleCount, catalogue.totalCount, 'the connection is back after the client went away')

  // The operation itself, ended before its first batch is read: nothing is left open.
  const opened = await openUsageExport(controlPlane, month, 100)
  await opened.batches.return!()
  t.equal(catalogue.idleCount, catalogue.totalCount)
})

t.test('the CLI: baseplane usage [REF] [--month YYYY-MM] [--json]', async (t) => {
  const project = await fx.createProject({ name: 'Cli usage' })
  await request(`${project.baseUrl}/graphql/v1`, { headers: { apikey: project.anonKey }, body: { query: '{ __typename }' } })
  await recorder.flush()
  const month = new Date().toISOString().slice(0, 7)
  const baseplane = (args: string[]) => runCli(args, { DATABASE_URL: fx.catalogueUrl })

  const json = await baseplane(['usage', project.ref, '--json'])
  t.equal(json.code, 0, json.stderr)
  t.same(JSON.parse(json.stdout), await projectUsage(controlPlane, project.ref), 'what the admin API answers')
  const human = await baseplane(['usage', project.ref, '--month', month])
  t.equal(human.code, 0, human.stderr)
  t.match(human.stdout, `Usage of ${project.ref} in ${month} (UTC)\nrequests        auth 0, graphql 1, push 0, rest 0, other 0\n`)
  t.match(human.stdout, /\nactive users    0 \(0 signed up, 0 anonymous\)\n/)

  const all = await baseplane(['usage', '--json'])
  t.equal(all.code, 0, all.stderr)
  const listed = JSON.parse(all.stdout) as { month: string; projects: Array<Record<string, unknown>> }
  t.equal(listed.month, month)
  t.match(listed.projects.find((row) => row.ref === project.ref), { ref: project.ref, requests_graphql: 1 })
  const table = await baseplane(['usage'])
  t.match(table.stdout, /^REF\s+REQUESTS\s+BYTES OUT\s+ACTIVE USERS\s+SIGN-INS\s+PUSH SENT\s+MAIL\s+REALTIME\s+DB SIZE\n/)
  t.match(table.stdout, new RegExp(`\\n${project.ref}\\s+1\\s`))
  const none = await baseplane(['usage', '--month', '1999-01'])
  t.same({ code: none.code, stdout: none.stdout, stderr: none.stderr }, { code: 0, stdout: 'No usage in 1999-01.\n', stderr: '' })

  const refusals: Array<[string[], number, string]> = [
    [['usage', project.ref, '--month', '2026-13'], 1, 'baseplane: --month must be written YYYY-MM (such as 2026-11), got "2026-13"\n'],
    [['usage', '--month', '11/2026'], 1, 'baseplane: --month must be written YYYY-MM (such as 2026-11), got "11/2026"\n'],
    [['usage', '--month'], 2, 'baseplane: --month needs a value (usage: baseplane usage [REF] [--month YYYY-MM] [--json])\n'],
    [['usage', 'nosuchproject'], 1, 'baseplane: Project "nosuchproject" not found\n'],
    [['usage', 'a', 'b'], 2, 'baseplane: unexpected argument "b" (usage: baseplane usage [REF] [--month YYYY-MM] [--json])\n'],
  ]
  for (const [args, code, stderr] of refusals) {
    const run = await baseplane(args)
    t.same({ code: run.code, stdout: run.stdout, stderr: run.stderr }, { code, stdout: '', stderr }, args.join(' '))
  }
})

t.test('configuration: the usage knobs are validated once, at start', async (t) => {
  const base = { DATABASE_URL: 'postgres://localhost/x' }
  t.match(loadConfig(base).usage, { enabled: true, flushMillis: 60000, retentionMonths: 13, hourlyRetentionMonths: 3, sizeSampleMillis: 3600000 })
  t.equal(loadConfig({ ...base, BASEPLANE_USAGE: 'false' }).usage.enabled, false)
  const refusals: Array<[Record<string, string>, string]> = [
    [{ BASEPLANE_USAGE_FLUSH_MS: '50' }, 'BASEPLANE_USAGE_FLUSH_MS must be between 100 and 3600000, got 50'],
    [{ BASEPLANE_USAGE: 'maybe' }, 'BASEPLANE_USAGE must be true or false, got "maybe"'],
    [{ BASEPLANE_USAGE_RETENTION_MONTHS: '0' }, 'BASEPLANE_USAGE_RETENTION_MONTHS must be between 1 and 120, got 0'],
    [{ BASEPLANE_USAGE_RETENTION_MONTHS: '2', BASEPLANE_USAGE_HOURLY_RETENTION_MONTHS: '3' }, 'BASEPLANE_USAGE_HOURLY_RETENTION_MONTHS must not exceed BASEPLANE_USAGE_RETENTION_MONTHS (2), got 3'],
    [{ BASEPLANE_USAGE_SIZE_SAMPLE_MS: 'hourly' }, 'BASEPLANE_USAGE_SIZE_SAMPLE_MS must be a whole number, got "hourly"'],
  ]
  for (const [env, message] of refusals) t.throws(() => loadConfig({ ...base, ...env }), { message }, message)
})

t.test('a peak counter: the nodes of a minute add up, a longer period keeps its largest minute', async (t) => {
  const ref = 'peakpeakpeakpeakpeak'
  // Two nodes' minutes (each added to the row), then another minute, another hour, another day.
  const rows: Array<[string, number]> = [
    ['2026-05-01T10:00:00Z', 3],
    ['2026-05-01T10:00:00Z', 4],
    ['2026-05-01T10:01:00Z', 5],
    ['2026-05-01T11:00:00Z', 2],
    ['2026-05-02T09:00:00Z', 6],
  ]
  for (const [minute, value] of rows) {
    await catalogue.query(
      `insert into baseplane.usage_minutes as m (ref, minute, counter, value) values ($1, $2, 'realtime_peak_connections', $3), ($1, $2, 'realtime_messages', $3)
       on conflict (ref, minute, counter) do update set value = m.value + excluded.value`,
      [ref, minute, value],
    )
  }
  const before = await projectUsage(controlPlane, ref, '2026-05', Date.parse('2026-05-03T00:00:00Z'))
  t.equal(before.totals.realtime_peak_connections, 7, 'the month: its largest minute (3 + 4 at 10:00)')
  t.equal(before.totals.realtime_messages, 20, 'a count sums')
  t.match(before.days.slice(0, 2), [{ counters: { realtime_peak_connections: 7 } }, { counters: { realtime_peak_connections: 6 } }])
  await rollUpUsage(controlPlane, Date.parse('2026-05-03T00:00:00Z'))
  const { rows: hours } = await catalogue.query<{ hour: string; value: number }>(
    `select to_char(hour at time zone 'UTC', 'DD"T"HH24') as hour, value::int from baseplane.usage_hours where ref = $1 and counter = 'realtime_peak_connections' order by hour`,
    [ref],
  )
  t.same(hours, [{ hour: '01T10', value: 7 }, { hour: '01T11', value: 2 }, { hour: '02T09', value: 6 }], 'an hour keeps its largest minute')
  t.same(await projectUsage(controlPlane, ref, '2026-05', Date.parse('2026-05-03T00:00:00Z')), before, 'the same figures from the rollups')
})
