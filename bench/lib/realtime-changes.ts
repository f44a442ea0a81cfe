// bench:realtime's Postgres Changes case: `rate` inserts a second (one row a
// statement, plain `pg`, paced by the clock: realtime-changes-inserter.ts)
// into a table of the supabase_realtime publication, read by `subscribers`
// sockets (realtime-changes-subscribers.ts), each a distinct user with a
// token signed with the project's JWT secret (role authenticated, `sub` a
// uuid). The shape is a team chat: the users are in teams of `teamSize`
// (public.bench_members), a row belongs to a team (posted by one of its
// members), and the table's select policy lets a team's members read its
// rows:
//   exists (select 1 from bench_members m where m.team = bench_items.team and m.user_id = (select auth.uid()))
// Each subscriber's binding is INSERT on public.bench_items with the filter
// team=eq.<its team> (the room it shows), so every row reaches its team's
// `teamSize` members and nobody else, and the node checks RLS for every
// claims group (each user is one) in each batch of changes.
//
// Sides, each its own table with the same columns, its own 100 sockets and
// the same bindings, so that every side delivers the same changes to the same
// number of sockets, all connected at once and measured in rounds that take
// the sides in turn:
// - rls: the table above, the users' tokens;
// - open: the table with RLS disabled, the users' tokens (the visibility
//   statement still runs for each of the 100 claims groups, without policies);
// - service: the table under the same policy, every socket with the project's
//   service_role key, which bypasses RLS (BYPASSRLS) and is one claims group:
//   the same changes delivered without RLS checks.
// Before any socket joins (so with no change reader, no walsender), the limit:
// the same inserts by plain pg with nobody reading.
//
// Measured per side: deliveries, lost, wrong (a row of another team), the
// latency from the row's sent_at (the insert's send: a bound on commit to
// delivery from above) and from commit_timestamp; the CPU of the PostgreSQL
// server's processes (lib/pg-cpu.ts: every backend, the walsender, the
// exited ones) over each round, by kind, divided by the changes; this
// process's CPU (the platform: the reader's thread and the main thread's
// checks and sends); and the node's visibility statements, watched on
// pg.Pool in this process (how many, how many changes and caller groups each,
// how long each took: no product code is changed for it).
import crypto from 'node:crypto'
import pg from 'pg'
import { createProject } from '../../control-plane/projects.ts'
import { ownerUrlOf, type ProjectRecord } from '../../lib/catalogue.ts'
import { signJwt } from '../../lib/jwt.ts'
import { adminQuery } from '../../dev/db.ts'
import { addPgCpu, pgCpu, pgCpuSince, postmasterOf, type PgCpu } from './pg-cpu.ts'
import type { BenchPlatform } from './platform.ts'
import type { ChangesOpen, ChangesReport, ChangesReportRequest, ChangesSocket } from './realtime-changes-subscribers.ts'
import type { InsertPhase, InsertResult, InserterArg } from './realtime-changes-inserter.ts'
import { emptyCounts, mergeCounts, percentileMs, type LatencyCounts } from './realtime-histogram.ts'
import { cpuSeconds, onCleanUp, startChild, type Child } from './realtime-process.ts'
import { tally, thousands } from './realtime-rounds.ts'
import { reportCase } from './report.ts'

export type ChangesSide = 'rls' | 'open' | 'service'
export const CHANGES_SIDES: Record<ChangesSide, string> = { rls: 'under RLS', open: 'RLS disabled', service: 'service_role' }
const TABLES: Record<ChangesSide, string> = { rls: 'bench_items', open: 'bench_items_open', service: 'bench_items_service' }

export interface ChangesOptions {
  seconds: number
  rate: number
  subscribers: number
  teamSize: number
  rounds: number
  sides: ChangesSide[]
}

const WARM_SECONDS = 2
/** How long a round's last change may take to reach everyone before the round ends without it. */
const DRAIN_MS = 5000
const BODY_BYTES = 100
/** A walsender left from an earlier case (a project whose reader has not stopped yet) would decode these inserts too. */
const NO_READER_MS = 30_000
const TOKEN_SECONDS = 3600

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** The node's visibility statements so far (realtime.visible_rows, data-plane/realtime/changes/visibility.ts). */
interface Checks {
  count: number
  keys: number
  groups: number
  ms: number
}

const VISIBILITY = 'baseplane_realtime_visible_rows'

/** Occurrences of `part` in `text`. */
function occurrences(text: string, part: string): number {
  let n = 0
  for (let at = text.indexOf(part); at !== -1; at = text.indexOf(part, at + part.length)) n++
  return n
}

/**
 * Watches pg.Pool.query in this process (where the platform runs) for the
 * node's visibility statement: counts it, the changed rows' keys and the
 * caller groups it carries, and its time to answer. Undone by the answer's stop().
 */
function watchChecks(): { checks: Checks; stop(): void } {
  const checks: Checks = { count: 0, keys: 0, groups: 0, ms: 0 }
  const prototype = pg.Pool.prototype as unknown as { query: (...args: unknown[]) => unknown }
  const original = prototype.query
  prototype.query = function (this: unknown, ...args: unknown[]): unknown {
    const answer = original.apply(this, args)
    const config = args[0] as { name?: unknown; values?: unknown[] } | undefined
    if (typeof config === 'object' && config !== null && config.name === VISIBILITY && answer instanceof Promise) {
      const started = performance.now()
      const [, , , keys, groups] = config.values as string[]
      answer.then(
        () => {
          checks.count++
          checks.ms += performance.now() - started
          // keys: [{"id":1},...]; groups: [{"role":...,"claims":...},...]
          checks.keys += occurrences(keys!, '{')
          checks.groups += occurrences(groups!, '{"role":')
        },
        () => {},
      )
    }
    return answer
  }
  return { checks, stop: () => void (prototype.query = original) }
}

/** The tables, the teams and their members, as the project's owner. */
async function setUp(project: ProjectRecord, users: string[], teams: number): Promise<void> {
  const owner = new pg.Client({ connectionString: ownerUrlOf(project) })
  await owner.connect()
  try {
    await owner.query(`
      create table public.bench_members (team int not null, user_id uuid not null, primary key (team, user_id));
      grant select on public.bench_members to authenticated;`)
    for (const [side, table] of Object.entries(TABLES) as [ChangesSide, string][]) {
      await owner.query(`
        create table public.${table} (id bigserial primary key, team int not null, owner uuid not null, body text not null, sent_at bigint not null, seq bigint not null);
        grant select on public.${table} to authenticated, service_role;`)
      if (side === 'open') continue
      await owner.query(`
        alter table public.${table} enable row level security;
        create policy team_members_read on public.${table} for select to authenticated
          using (exists (select 1 from public.bench_members m where m.team = ${table}.team and m.user_id = (select auth.uid())));`)
    }
    await owner.query(`alter publication supabase_realtime add table ${Object.values(TABLES).map((t) => `public.${t}`).join(', ')}`)
    await owner.query('insert into public.bench_members (team, user_id) select (i - 1) % $2, u from unnest($1::uuid[]) with ordinality as x(u, i)', [users, teams])
    await owner.query('analyze public.bench_members')
  } finally {
    await owner.end()
  }
}

/** A side's figures over its rounds. */
interface Measured {
  inserts: number
  failed: number
  deliveries: number
  expected: number
  wrong: number
  /** From each round's first insert to its last delivery (or its last insert's answer, if later). */
  seconds: number
  /** The inserts' own time: from each round's first send to its last answer. */
  insertSeconds: number
  latency: LatencyCounts
  commitLatency: LatencyCounts
  insertP99Ms: number[]
  pg: PgCpu
  nodeCpu: number
  checks: Checks
  lost: number
  /** Rows that reached fewer than their team's subscribers, and the first few of them ([seq, sockets reached]). */
  shortRows: number
  short: Array<[number, number]>
}

const emptyMeasured = (): Measured => ({
  inserts: 0,
  failed: 0,
  deliveries: 0,
  expected: 0,
  wrong: 0,
  seconds: 0,
  insertSeconds: 0,
  latency: emptyCounts(),
  commitLatency: emptyCounts(),
  insertP99Ms: [],
  pg: { total: 0, kinds: {} },
  nodeCpu: 0,
  checks: { count: 0, keys: 0, groups: 0, ms: 0 },
  lost: 0,
  shortRows: 0,
  short: [],
})

export async function runChanges(bench: BenchPlatform, options: ChangesOptions): Promise<void> {
  const { rate, seconds, subscribers, teamSize } = options
  const level = (await adminQuery<{ wal_level: string }>(bench.serverUrl, 'show wal_level')).rows[0]!.wal_level
  if (level !== 'logical') {
    console.log(`Postgres Changes: skipped: the database server's wal_level is ${level}, and Postgres Changes need logical (leave DATABASE_URL unset for the embedded PostgreSQL, which has it)`)
    return
  }
  const teams = subscribers / teamSize
  console.log(
    `Postgres Changes: ${rate} inserts/s (a row a statement, plain pg) into a table read by ${subscribers} subscribers a side, each a distinct user (vsn 2.0.0, ` +
      `INSERT with filter team=eq.<team>); ${teams} teams of ${teamSize}, a team's rows readable by its members (RLS): each row reaches ${teamSize} subscribers; ${options.rounds} rounds`,
  )

  const project = await createProject(bench.platform.controlPlane, { name: 'realtime changes bench', plan: 'business' })
  const users = Array.from({ length: subscribers }, () => crypto.randomUUID())
  await setUp(project, users, teams)
  const exp = Math.floor(Date.now() / 1000) + TOKEN_SECONDS
  const tokens = users.map((sub) => signJwt(project.jwtSecret, { aud: 'authenticated', role: 'authenticated', sub, exp }))
  const postmaster = await postmasterOf(bench.serverUrl)
  const kindOf = (title: string) =>
    / walsender /.test(title) ? 'walsender' : title.startsWith(`postgres: ${project.dbApiRole} `) ? 'checks' : title.startsWith(`postgres: ${project.dbOwnerRole} `) ? 'inserts' : 'other'
  const readPg = () => pgCpu(postmaster, kindOf) ?? { total: NaN, kinds: {} }

  const stops: Array<() => Promise<void>> = []
  const watched = watchChecks()
  stops.push(async () => watched.stop())
  const measured = new Map<ChangesSide, Measured>(options.sides.map((side) => [side, emptyMeasured()]))
  const limit = emptyMeasured()
  let connected = { retries: [] as string[], seconds: 0 }
  let readersLeft = 0
  try {
    const inserter = startChild(new URL('./realtime-changes-inserter.ts', import.meta.url), { url: ownerUrlOf(project), teams, users, bodyBytes: BODY_BYTES } satisfies InserterArg)
    stops.push(onCleanUp(async () => (inserter.send({ type: 'stop' }), await inserter.stop())))
    await inserter.next('ready')
    let nextSeq = 1

    // No reader yet for any project of the server (one left from the fan-out case would decode these inserts too).
    const deadline = performance.now() + NO_READER_MS
    const readers = async () => Number((await adminQuery<{ n: string }>(bench.serverUrl, 'select count(*) as n from pg_stat_replication')).rows[0]!.n)
    while ((readersLeft = await readers()) > 0 && performance.now() < deadline) await sleep(200)

    /** Inserts for `seconds` into `table`; with `subscribers`, waits for their deliveries and adds everything to `into`. */
    async function measure(table: string, secondsOf: number, into: Measured, subs?: Child): Promise<void> {
      const fromSeq = nextSeq
      let deliveries = 0
      let lastDelivery = 0
      if (subs) {
        subs.on<{ type: 'progress'; deliveries: number }>('progress', (message) => {
          deliveries = message.deliveries
          lastDelivery = performance.now()
        })
        subs.send({ type: 'reset', table, fromSeq })
        await subs.next('reset')
      }
      const pgBefore = readPg()
      const nodeBefore = cpuSeconds(process.pid)
      const checksBefore = { ...watched.checks }
      const started = performance.now()
      inserter.send({ type: 'phase', table, rate, seconds: secondsOf, fromSeq } satisfies InsertPhase)
      const result = await inserter.next<InsertResult>('phase')
      nextSeq = result.lastSeq + 1
      const expected = subs ? (result.sent - result.failed) * teamSize : 0
      const drained = performance.now() + DRAIN_MS
      while (deliveries < expected && performance.now() < drained) await sleep(2)
      // To the last delivery (a row lost would otherwise count the drain's wait), or the inserts' end if later.
      const elapsed = (Math.max(lastDelivery, started + result.seconds * 1000) - started) / 1000
      addPgCpu(into.pg, pgCpuSince(pgBefore, readPg()))
      into.nodeCpu += cpuSeconds(process.pid) - nodeBefore
      for (const key of ['count', 'keys', 'groups', 'ms'] as const) into.checks[key] += watched.checks[key] - checksBefore[key]
      into.inserts += result.sent
      into.failed += result.failed
      into.expected += expected
      into.seconds += elapsed
      into.insertSeconds += result.seconds
      into.insertP99Ms.push(result.p99Ms)
      if (!subs) return
      subs.send({ type: 'report', lastSeq: result.lastSeq, members: teamSize } satisfies ChangesReportRequest)
      const report = await subs.next<ChangesReport>('report')
      if (report.shortRows > 0) {
        into.shortRows += report.shortRows
        if (into.short.length === 0) into.short = report.short
      }
      into.deliveries += report.deliveries
      into.wrong += report.wrong
      into.lost = report.lost
      mergeCounts(into.latency, report.latency)
      mergeCounts(into.commitLatency, report.commitLatency)
    }

    // The limit: nobody reading.
    await measure(TABLES.rls, 1, emptyMeasured())
    await measure(TABLES.rls, seconds, limit)

    const baseUrl = `${bench.origin.replace(/^http/, 'ws')}/project/${project.ref}/realtime/v1/websocket`
    const sockets: ChangesSocket[] = options.sides.flatMap((side) =>
      users.map((_, i) => {
        const key = side === 'service' ? project.serviceRoleKey : project.anonKey
        return { url: `${baseUrl}?apikey=${key}&vsn=2.0.0`, token: side === 'service' ? project.serviceRoleKey : tokens[i]!, table: TABLES[side], team: i % teams }
      }),
    )
    const subs = startChild(new URL('./realtime-changes-subscribers.ts', import.meta.url), null)
    stops.push(onCleanUp(async () => (subs.send({ type: 'stop' }), await subs.stop())))
    await subs.next('listening')
    subs.send({ type: 'open', sockets } satisfies ChangesOpen)
    connected = await subs.next<{ type: 'ready'; retries: string[]; seconds: number }>('ready')

    for (const side of options.sides) await measure(TABLES[side], WARM_SECONDS, emptyMeasured(), subs)
    for (let round = 0; round < options.rounds; round++) {
      for (let i = 0; i < options.sides.length; i++) {
        const side = options.sides[(round + i) % options.sides.length]!
        await measure(TABLES[side], seconds / options.rounds, measured.get(side)!, subs)
      }
    }
  } finally {
    for (const stop of stops.reverse()) await stop()
  }

  if (readersLeft > 0) console.log(`  (${readersLeft} walsender(s) of an earlier case still streaming during the limit's inserts: its PostgreSQL CPU includes their decoding)`)
  console.log(
    `  ${options.sides.length * subscribers} sockets subscribed (${options.sides.length} sides of ${subscribers}) in ${connected.seconds.toFixed(1)} s` +
      `${connected.retries.length ? ` (${connected.retries.length} opened again: ${tally(connected.retries)})` : ''}`,
  )
  const width = 14
  const ms = (counts: LatencyCounts, q: number) => percentileMs(counts, q).toFixed(2).padStart(8)
  console.log(`delivery: ${rate} inserts/s for ${seconds} s a side (${thousands(rate * teamSize)} deliveries/s offered), after ${WARM_SECONDS} s of warm-up`)
  console.log(
    `  ${'side'.padEnd(width)}${'inserts/s'.padStart(10)}${'deliveries/s'.padStart(13)}${'delivered'.padStart(10)}${'wrong'.padStart(6)}` +
      `${'p50 ms'.padStart(8)}${'p99 ms'.padStart(8)}${'max ms'.padStart(8)}${'commit p50'.padStart(11)}${'commit p99'.padStart(11)}${'insert p99'.padStart(11)}`,
  )
  for (const [side, m] of measured) {
    const notes = []
    if (m.deliveries < m.expected) notes.push(`${thousands(m.expected - m.deliveries)} lost: ${m.shortRows} rows short, first ${m.short.map(([seq, got]) => `#${seq} ${got}/${teamSize}`).join(', ')}`)
    if (m.failed > 0) notes.push(`${m.failed} inserts failed`)
    if (m.lost > 0) notes.push(`${m.lost} sockets lost`)
    console.log(
      `  ${CHANGES_SIDES[side].padEnd(width)}${thousands(m.inserts / m.insertSeconds).padStart(10)}${thousands(m.deliveries / m.seconds).padStart(13)}` +
        `${`${((100 * m.deliveries) / m.expected).toFixed(2)}%`.padStart(10)}${String(m.wrong).padStart(6)}` +
        `${ms(m.latency, 0.5)}${ms(m.latency, 0.99)}${ms(m.latency, 1)}${ms(m.commitLatency, 0.5).padStart(11)}${ms(m.commitLatency, 0.99).padStart(11)}` +
        `${Math.max(...m.insertP99Ms).toFixed(2).padStart(11)}${notes.length ? `  (${notes.join(', ')})` : ''}`,
    )
  }
  console.log('  (p50, p99, max: from the row\'s sent_at, the insert\'s send; commit: from commit_timestamp, to the millisecond; insert p99: the statements\' round trip, the worst round\'s)')

  const kinds = ['walsender', 'checks', 'inserts', 'other']
  const µs = (seconds: number, per: number) => ((seconds * 1e6) / per).toFixed(1)
  console.log(`cost: CPU a change (µs), PostgreSQL's processes by kind and this process (the platform)`)
  console.log(
    `  ${'side'.padEnd(width)}${'PostgreSQL'.padStart(11)}${kinds.map((k) => k.padStart(10)).join('')}${'node'.padStart(9)}` +
      `${'checks/s'.padStart(10)}${'changes/check'.padStart(14)}${'groups/check'.padStart(13)}${'ms/check'.padStart(9)}`,
  )
  const costRow = (name: string, m: Measured) => {
    const per = m.inserts - m.failed
    const checks = m.checks
    return (
      `  ${name.padEnd(width)}${µs(m.pg.total, per).padStart(11)}${kinds.map((k) => µs(m.pg.kinds[k] ?? 0, per).padStart(10)).join('')}${µs(m.nodeCpu, per).padStart(9)}` +
      (checks.count > 0
        ? `${(checks.count / m.seconds).toFixed(1).padStart(10)}${(checks.keys / checks.count).toFixed(1).padStart(14)}${(checks.groups / checks.count).toFixed(1).padStart(13)}${(checks.ms / checks.count).toFixed(2).padStart(9)}`
        : '')
    )
  }
  for (const [side, m] of measured) console.log(costRow(CHANGES_SIDES[side], m))
  console.log(costRow('plain pg', limit) + '  (nobody reading: no reader, no walsender; CPU an insert)')
  console.log("  (walsender: the reader's logical decoding; checks: the node's visibility statements and binding checks (its API role); inserts: the inserter's backends; other: the rest of the server (catalogue, background, exited backends))")

  const rls = measured.get('rls')
  const perChange = (m: Measured) => m.pg.total / (m.inserts - m.failed)
  const changeFigures = (m: Measured) => ({
    insertsPerSecond: m.inserts / m.insertSeconds,
    deliveriesPerSecond: m.deliveries / m.seconds,
    deliveredShare: m.expected === 0 ? NaN : m.deliveries / m.expected,
    wrong: m.wrong,
    p50Ms: percentileMs(m.latency, 0.5),
    p99Ms: percentileMs(m.latency, 0.99),
    pgCpuUsPerChange: perChange(m) * 1e6,
    nodeCpuUsPerChange: (m.nodeCpu * 1e6) / (m.inserts - m.failed),
  })
  // No goal for the CPU ratios (lower is better): the report carries them as figures.
  const reportCpu = (name: string, ours: Measured, peer: string, theirs: Measured) =>
    reportCase({
      suite: 'realtime', case: `changes: PostgreSQL CPU a change, ${name}`, figures: changeFigures(ours), peer, peerFigures: changeFigures(theirs),
      ratio: perChange(ours) / perChange(theirs), what: 'PostgreSQL CPU a change (lower is better)',
    })
  for (const [side, what] of [
    ['service', 'the same changes without RLS checks (service_role: BYPASSRLS, one claims group)'],
    ['open', 'RLS disabled (the 100 claims groups still checked, no policy)'],
  ] as const) {
    const other = measured.get(side)
    if (rls && other) console.log(`ratio PostgreSQL CPU a change, under RLS / ${CHANGES_SIDES[side]}: ${(perChange(rls) / perChange(other)).toFixed(2)}x (${what})`)
    if (rls && other) reportCpu(`under RLS / ${CHANGES_SIDES[side]}`, rls, CHANGES_SIDES[side], other)
  }
  if (rls) {
    console.log(`ratio PostgreSQL CPU a change under RLS / an insert with nobody reading: ${(perChange(rls) / perChange(limit)).toFixed(2)}x (the reader's and the checks' cost on top of the insert)`)
    reportCpu('under RLS / an insert with nobody reading', rls, 'plain pg, nobody reading', limit)
    const p99 = percentileMs(rls.latency, 0.99)
    console.log(`under RLS: p99 from the insert's send ${p99.toFixed(2)} ms (goal < 100 ms: ${p99 < 100 ? 'met' : 'NOT met'}), from commit_timestamp ${percentileMs(rls.commitLatency, 0.99).toFixed(2)} ms; ${thousands(Math.max(0, rls.expected - rls.deliveries))} lost, ${rls.wrong} wrong`)
    // Its goal is a latency, not a ratio to a peer: the report's ratio is p99 against the goal's 100 ms, at most 1.
    reportCase({
      suite: 'realtime', case: 'changes: under RLS, p99 commit to delivery / the 100 ms goal', figures: changeFigures(rls), peer: 'the goal: p99 under 100 ms',
      peerFigures: { p99Ms: 100 }, ratio: p99 / 100, what: 'p99 ms from the insert\'s send, against 100 ms', goal: { atMost: 1 },
    })
  }
}
