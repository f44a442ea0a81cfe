// npm run bench:fleet [-- --runs R --seconds S --projects P --quick --failover-only]
// A fleet on one catalogue (issue 24), every node a real `baseplane start`
// in a child process on a temporary embedded PostgreSQL (or DATABASE_URL's
// server):
// 1. P projects (default 100, free plan, Auth on), each with a table and a
//    signed-in user. With 1, then 2, then 3 nodes running, wrk sends
//    POST /graphql/v1 (a page of the table, as anon) and GET /auth/v1/user
//    through every node at once, rotating over the projects: the same 12
//    connections per endpoint in all, split evenly over the nodes (24
//    requests in flight). The peer is one node in the same run. Sampled on
//    the server during each step: the connections held (the most seen)
//    against the server's connection budget, and the busiest project's
//    against its role's CONNECTION LIMIT.
// 2. Healing: push takeover after kill -9 of the lease holder, then after
//    SIGSTOP of the next holder (signal to a Web Push delivery by another
//    node of a message inserted right after it); the first good answer for a
//    project of an added server once its link returns; how long a node whose
//    catalogue link stalls (through a forwarder that stops passing bytes)
//    takes to answer 503 on /health (n/a if it has not within 30 s).
// 3. Failover (issue 43, bench/lib/failover.ts): a Patroni-managed PostgreSQL
//    15 pair behind HAProxy, two nodes under REST load, the leader's host
//    killed, once with the catalogue (and its project) on the pair, once with
//    only the project's server there: answers, 503s and their span, any other
//    answer, the first good answer after the kill and after HAProxy switched,
//    acknowledged writes lost. Skipped, saying why, where Patroni, etcd,
//    HAProxy or PostgreSQL 15 is missing. --failover-only runs just this.
// Each figure is the median of the runs (default 3), nodes started afresh
// for each run; each run's figure in brackets.
import { platformLoginRoles } from '../lib/db/platform-logins.ts'
import os from 'node:os'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { ControlPlane } from '../control-plane/control-plane.ts'
import { createProject, setProjectProduct } from '../control-plane/projects.ts'
import { addDatabaseServer, listDatabaseServers } from '../control-plane/server-admin.ts'
import { ownerUrlOf, type ProjectRecord } from '../lib/catalogue.ts'
import { adminUrlFor } from '../lib/db/server-url.ts'
import { startTemporary } from '../lib/db/embedded.ts'
import { setLogLevel } from '../lib/log.ts'
// The one TCP forwarder of the house (its stall() is what a hung link looks like).
import { startForwarder, type Forwarder } from '../dev/tcp-forwarder.ts'
import { adminQuery, dropCatalogue } from '../dev/db.ts'
import { benchCatalogue, benchServer } from './lib/platform.ts'
import { sharedStorage, startFleetNode, type FleetNode } from './lib/fleet-node.ts'
import { median } from './lib/stats.ts'
import { createTenants, signedInUser, type Tenant, type TenantHost } from './lib/tenants-projects.ts'
import { currentUserEndpoint, graphqlEndpoint, wrkTenants, type TenantEndpoint, type TenantLoad } from './lib/tenants-wrk.ts'
import { startWebPushSink, type WebPushSink } from './lib/webpush-sink.ts'
import { reportCase } from './lib/report.ts'
import { failoverBinaries, failoverCase, type FailoverFigures, type FailoverWhere } from './lib/failover.ts'

interface Options {
  runs: number
  seconds: number
  projects: number
  quick: boolean
  failoverOnly: boolean
}

function wholeNumber(name: string, raw: string | undefined, fallback: number, min: number): number {
  if (raw === undefined) return fallback
  if (!/^\d+$/.test(raw) || Number(raw) < min) throw new Error(`--${name} must be a whole number of at least ${min}, got "${raw}"`)
  return Number(raw)
}

function options(): Options {
  try {
    const { values } = parseArgs({
      options: { runs: { type: 'string' }, seconds: { type: 'string' }, projects: { type: 'string' }, quick: { type: 'boolean' }, 'failover-only': { type: 'boolean' } },
      strict: true,
    })
    const quick = values.quick === true
    return {
      runs: wholeNumber('runs', values.runs, 3, 1),
      seconds: wholeNumber('seconds', values.seconds, quick ? 3 : 10, 1),
      projects: wholeNumber('projects', values.projects, quick ? 20 : 100, 1),
      quick,
      failoverOnly: values['failover-only'] === true,
    }
  } catch (error) {
    console.error(`bench:fleet: ${(error as Error).message}\nusage: npm run bench:fleet [-- --runs R --seconds S --projects P --quick --failover-only]`)
    process.exit(2)
  }
}

const OPTIONS = options()
const NODES = [1, 2, 3]
/** Connections per endpoint over the whole fleet, split evenly over the nodes (at 3 nodes, the issue's -c4 per endpoint and node). */
const CONNECTIONS = 12
const WARM_SECONDS = OPTIONS.quick ? 1 : 2
const SAMPLE_MS = 200
const UNREADY_LIMIT_MS = 30_000
/** Past the lease (10 s) and a scan (2 s), with room for a busy machine: a takeover slower than this is reported as not seen. */
const TAKEOVER_LIMIT_MS = 60_000
const HEAL_LIMIT_MS = 60_000
/**
 * Every node: push sends to the local Web Push sink (http://). The stalled
 * node turns unready after 10 s of catalogue silence (BASEPLANE_CATALOGUE_SILENCE_MS
 * is opt-in; 10 s is what the README suggests); other settings for it go in
 * BENCH_FLEET_STALL_ENV, as JSON.
 */
const NODE_ENV = { BASEPLANE_WEBPUSH_ALLOW_INSECURE: 'true' }
const STALL_ENV = { ...NODE_ENV, BASEPLANE_CATALOGUE_SILENCE_MS: '10000', ...(JSON.parse(process.env.BENCH_FLEET_STALL_ENV ?? '{}') as Record<string, string>) }
const TOO_MANY = /too many connections|remaining connection slots/i

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

type Endpoint = TenantEndpoint

const graphql = graphqlEndpoint('POST /graphql/v1', '{ itemsCollection(first: 5) { edges { node { id name } } } }')
const currentUser = currentUserEndpoint
const ENDPOINTS = [graphql, currentUser]

interface Held {
  /** Client backends on the server, the sampler's own left out. */
  server: number
  /** The benchmark projects' api roles together. */
  projects: number
  /** The busiest project's api role, and its CONNECTION LIMIT then. */
  busiest: number
  busiestLimit: number
}

interface Step {
  nodes: number
  requestsPerSecond: number
  byEndpoint: Map<Endpoint, number>
  errors: number
  statuses: Record<string, number>
  bodies: Record<string, string>
  held: Held
  tooMany: string[]
}

interface Healing {
  killMs: number | undefined
  stopMs: number | undefined
  returnMs: number | undefined
  returnEveryMs: number | undefined
  unreadyMs: number | undefined
  readyAgainMs: number | undefined
}

interface Fleet {
  serverUrl: string
  catalogueUrl: string
  controlPlane: ControlPlane
  tenants: Tenant[]
  sink: WebPushSink
  push: { record: ProjectRecord; token: string; registered: boolean }
  added: { link: Forwarder; tenant: Tenant }
  catalogueLink: Forwarder
  watch: pg.Client
  /** The benchmark's own connection to the catalogue (who holds the push lease). */
  catalogue: pg.Client
}

/** Requests to `url` until `check` holds for the answer's status, every `everyMs`; the time it took, or undefined past `limitMs`. */
async function until(url: string, init: RequestInit, check: (status: number) => boolean, limitMs: number, everyMs = 50): Promise<number | undefined> {
  const started = performance.now()
  while (performance.now() - started < limitMs) {
    const status = await fetch(url, { ...init, signal: AbortSignal.timeout(5000) })
      .then(async (answer) => (await answer.arrayBuffer(), answer.status))
      .catch(() => 0)
    if (check(status)) return performance.now() - started
    await sleep(everyMs)
  }
  return undefined
}

async function addTable(record: ProjectRecord): Promise<void> {
  const owner = new pg.Client({ connectionString: ownerUrlOf(record) })
  await owner.connect()
  try {
    await owner.query(`create table public.items (id int primary key, name text not null);
                       insert into public.items select g, 'item ' || g from generate_series(1, 20) g`)
  } finally {
    await owner.end()
  }
}

async function prepare(): Promise<{ fleet: Fleet; close(): Promise<void> }> {
  const closers: Array<() => Promise<unknown>> = []
  const close = async () => {
    for (const closer of closers.reverse()) await closer().catch((error: unknown) => console.error(`bench:fleet: while finishing: ${(error as Error).message}`))
  }
  try {
    const database = await benchServer()
    closers.push(() => database.stop())
    const serverUrl = database.url
    const catalogueUrl = await benchCatalogue(serverUrl)
    // An added server's projects go with it when it stops.
    closers.push(() => dropCatalogue(serverUrl, catalogueUrl))
    const controlPlane = await ControlPlane.open(catalogueUrl)
    closers.push(() => controlPlane.close())
    const host: TenantHost = { platform: { controlPlane }, serverUrl, origin: 'http://127.0.0.1' }
    const { tenants } = await createTenants(host, OPTIONS.projects, (done) => {
      if (done % 25 === 0 && done < OPTIONS.projects) process.stderr.write(`  ${done} projects created\n`)
    })
    for (const tenant of tenants) await addTable(tenant.record)

    const sink = await startWebPushSink()
    closers.push(() => sink.close())
    let pushRecord = await createProject(controlPlane, { name: 'push takeover' })
    await setProjectProduct(controlPlane, pushRecord.ref, 'auth', true)
    pushRecord = await setProjectProduct(controlPlane, pushRecord.ref, 'push', true)
    const pushToken = await signedInUser(host, pushRecord, `/project/${pushRecord.ref}`)

    // An added server, reached through a forwarder, with one project placed on it
    // (a control plane that sees no room on the default server places it there).
    const second = await startTemporary()
    closers.push(() => second.stop())
    const link = await startForwarder(Number(new URL(second.url).port))
    closers.push(() => link.close())
    const secondUrl = link.via(second.url)
    await addDatabaseServer(controlPlane, { url: secondUrl, id: 'second' })
    const placing = await ControlPlane.open(catalogueUrl, { defaultServerBudget: 1 })
    let addedRecord = await createProject(placing, { name: 'on the added server' })
    addedRecord = await setProjectProduct(placing, addedRecord.ref, 'auth', true)
    await placing.close()
    if (addedRecord.dbServer !== 'second') throw new Error(`the added server's project was placed on ${addedRecord.dbServer}`)
    const addedPath = `/project/${addedRecord.ref}`
    const added = { record: addedRecord, basePath: addedPath, userToken: await signedInUser(host, addedRecord, addedPath, secondUrl) }

    const catalogueLink = await startForwarder(Number(new URL(serverUrl).port), new URL(serverUrl).hostname)
    closers.push(() => catalogueLink.close())
    const watch = new pg.Client({ connectionString: serverUrl, application_name: 'bench-fleet' })
    await watch.connect()
    closers.push(() => watch.end())
    const catalogue = new pg.Client({ connectionString: catalogueUrl, application_name: 'bench-fleet' })
    await catalogue.connect()
    closers.push(() => catalogue.end())
    return {
      fleet: { serverUrl, catalogueUrl, controlPlane, tenants, sink, push: { record: pushRecord, token: pushToken, registered: false }, added: { link, tenant: added }, catalogueLink, watch, catalogue },
      close,
    }
  } catch (error) {
    await close()
    throw error
  }
}

/** Connections on the server while `during` runs, the most seen of each figure. */
async function sampleHeld<T>(fleet: Fleet, during: Promise<T>): Promise<{ result: T; held: Held }> {
  const roles = fleet.tenants.flatMap((t) => platformLoginRoles(t.record.dbApiRole))
  const held: Held = { server: 0, projects: 0, busiest: 0, busiestLimit: -1 }
  let done = false
  const sampling = (async () => {
    while (!done) {
      const { rows } = await fleet.watch.query<{ server: number; projects: number; busiest: number | null; busiest_limit: number | null }>(
        `with mine as (select usename from pg_stat_activity where backend_type = 'client backend' and pid <> pg_backend_pid()),
              busiest as (select usename, count(*)::int as n from mine where usename = any($1) group by usename order by n desc limit 1)
         select (select count(*)::int from mine) as server,
                (select count(*)::int from mine where usename = any($1)) as projects,
                (select n from busiest) as busiest,
                (select rolconnlimit from pg_roles where rolname = (select usename from busiest)) as busiest_limit`,
        [roles],
      )
      const row = rows[0]!
      held.server = Math.max(held.server, row.server)
      held.projects = Math.max(held.projects, row.projects)
      if ((row.busiest ?? 0) >= held.busiest) {
        held.busiest = row.busiest ?? 0
        held.busiestLimit = row.busiest_limit ?? held.busiestLimit
      }
      await sleep(SAMPLE_MS)
    }
  })()
  try {
    return { result: await during, held }
  } finally {
    done = true
    await sampling
  }
}

/** wrk through every node at once, each endpoint on CONNECTIONS / nodes connections of each node. */
function loadAll(fleet: Fleet, nodes: FleetNode[], seconds: number): Promise<Array<{ endpoint: Endpoint; load: TenantLoad }>> {
  const connections = Math.max(1, Math.round(CONNECTIONS / nodes.length))
  return Promise.all(
    nodes.flatMap((node) =>
      ENDPOINTS.map(async (endpoint) => ({
        endpoint,
        load: await wrkTenants(node.origin, { method: endpoint.method, body: endpoint.body, requests: fleet.tenants.map(endpoint.request), seconds, connections, threads: 1 }),
      })),
    ),
  )
}

/** A new node's first request of each project (its connections, its GraphQL schemas), 8 at a time: not the steady state. */
async function firstRequests(fleet: Fleet, node: FleetNode): Promise<void> {
  const failed: string[] = []
  for (const endpoint of ENDPOINTS) {
    let next = 0
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < fleet.tenants.length) {
          const { path, headers } = endpoint.request(fleet.tenants[next++]!)
          const answer = await fetch(`${node.origin}${path}`, { method: endpoint.method, headers, body: endpoint.body })
          const body = await answer.text()
          if (answer.status !== 200) failed.push(`${endpoint.name} ${answer.status} ${body.slice(0, 200)}`)
        }
      }),
    )
  }
  if (failed.length > 0) console.log(`  ${node.name}: ${failed.length} first requests failed, e.g. ${failed[0]}`)
}

async function measure(fleet: Fleet, nodes: FleetNode[]): Promise<Step> {
  await loadAll(fleet, nodes, WARM_SECONDS)
  const before = nodes.map((node) => node.linesMatching(TOO_MANY).length)
  const { result: loads, held } = await sampleHeld(fleet, loadAll(fleet, nodes, OPTIONS.seconds))
  const tooMany = nodes.flatMap((node, i) => node.linesMatching(TOO_MANY).slice(before[i]).map((line) => `${node.name}: ${line}`))
  const statuses: Record<string, number> = {}
  const bodies: Record<string, string> = {}
  const byEndpoint = new Map<Endpoint, number>(ENDPOINTS.map((e) => [e, 0]))
  let errors = 0
  for (const { endpoint, load } of loads) {
    byEndpoint.set(endpoint, byEndpoint.get(endpoint)! + load.requestsPerSecond)
    errors += load.non2xx + load.socketErrors
    for (const [status, n] of Object.entries(load.statuses)) statuses[status] = (statuses[status] ?? 0) + n
    for (const [status, body] of Object.entries(load.bodies)) bodies[status] ??= body
  }
  const requestsPerSecond = [...byEndpoint.values()].reduce((sum, n) => sum + n, 0)
  return { nodes: nodes.length, requestsPerSecond, byEndpoint, errors, statuses, bodies, held, tooMany }
}

async function serverBudget(fleet: Fleet): Promise<{ budget: number; maxConnections: number }> {
  const servers = await listDatabaseServers(fleet.controlPlane)
  const { rows } = await fleet.watch.query<{ max: number }>(`select current_setting('max_connections')::int as max`)
  return { budget: servers.find((s) => s.id === 'default')!.connectionBudget, maxConnections: rows[0]!.max }
}

function printStep(step: Step, base: Step, budget: { budget: number; maxConnections: number }): void {
  console.log(`nodes ${step.nodes}: ${step.requestsPerSecond.toFixed(0)} req/s total (ratio vs 1 node: ${(step.requestsPerSecond / base.requestsPerSecond).toFixed(2)}), errors ${step.errors}`)
  console.log(`  ${ENDPOINTS.map((e) => `${e.name} ${step.byEndpoint.get(e)!.toFixed(0)} req/s`).join(', ')}`)
  const limit = step.held.busiestLimit < 0 ? 'no limit' : `its role's limit ${step.held.busiestLimit}`
  console.log(
    `  connections held on the server, most seen: ${step.held.server} (the projects' ${step.held.projects}; busiest project ${step.held.busiest}, ${limit});` +
      ` server budget ${budget.budget}, max_connections ${budget.maxConnections}`,
  )
  if (step.errors > 0) {
    console.log(`  answers: ${Object.entries(step.statuses).map(([status, n]) => `${status}: ${n}`).join(', ')}`)
    for (const [status, body] of Object.entries(step.bodies)) if (!status.startsWith('2')) console.log(`  ${status} answered: ${body}`)
  }
  if (step.tooMany.length > 0) console.log(`  ${step.tooMany.length} log lines say PostgreSQL refused connections, e.g. ${step.tooMany[0]!.slice(0, 300)}`)
}

// --- healing ---------------------------------------------------------------

async function leaseHolder(fleet: Fleet, nodes: FleetNode[], limitMs = TAKEOVER_LIMIT_MS): Promise<FleetNode> {
  const started = performance.now()
  while (performance.now() - started < limitMs) {
    const lease = await fleet.catalogue.query<{ holder: string }>(`select holder from baseplane.push_leases where ref = $1 and expires_at > now()`, [fleet.push.record.ref])
    const holder = lease.rows[0]?.holder as string | undefined
    const node = holder === undefined ? undefined : nodes.find((n) => holder.startsWith(`${n.pid}.`))
    if (node) return node
    await sleep(100)
  }
  throw new Error(`no running node held the push project's lease within ${limitMs} ms`)
}

/** A message to the push project's user, inserted as the server's admin (as an app's SQL would). */
async function sendOne(fleet: Fleet, sub: string, title: string): Promise<void> {
  await adminQuery(adminUrlFor(fleet.serverUrl, fleet.push.record.dbName), `insert into push.messages (user_id, title) values ($1, $2)`, [sub, title])
}

async function delivered(fleet: Fleet, after: number, limitMs: number): Promise<number | undefined> {
  const started = performance.now()
  while (performance.now() - started < limitMs) {
    const arrival = fleet.sink.arrivals.find((at) => at > after)
    if (arrival !== undefined) return arrival
    await sleep(20)
  }
  return undefined
}

/** The takeover time after `signal` to the holder: from the signal to the delivery, by another node, of a message inserted just after it. */
async function takeover(fleet: Fleet, nodes: FleetNode[], sub: string, signal: 'SIGKILL' | 'SIGSTOP'): Promise<{ ms: number | undefined; holder: FleetNode }> {
  const holder = await leaseHolder(fleet, nodes)
  // The holder sends now (its actor and its connection to the sink are up), so the signal interrupts a working sender.
  const warm = performance.now()
  await sendOne(fleet, sub, 'before the signal')
  if ((await delivered(fleet, warm, TAKEOVER_LIMIT_MS)) === undefined) throw new Error(`the holder ${holder.name} did not deliver within ${TAKEOVER_LIMIT_MS} ms`)
  const signalled = performance.now()
  holder.signal(signal)
  await sendOne(fleet, sub, `after ${signal}`)
  const at = await delivered(fleet, signalled, TAKEOVER_LIMIT_MS)
  return { ms: at === undefined ? undefined : at - signalled, holder }
}

async function addedServerReturns(fleet: Fleet, nodes: FleetNode[]): Promise<{ first: number | undefined; every: number | undefined }> {
  const { tenant, link } = fleet.added
  const { path, headers } = currentUser.request(tenant)
  const urls = nodes.map((node) => `${node.origin}${path}`)
  for (const url of urls) {
    if ((await until(url, { headers }, (status) => status === 200, HEAL_LIMIT_MS)) === undefined) throw new Error(`${url} did not answer 200 before the added server went down`)
  }
  await link.down()
  for (const url of urls) {
    if ((await until(url, { headers }, (status) => status === 503, HEAL_LIMIT_MS)) === undefined) throw new Error(`${url} did not answer 503 with its server down`)
  }
  await link.up()
  const times = await Promise.all(urls.map((url) => until(url, { headers }, (status) => status === 200, HEAL_LIMIT_MS)))
  const seen = times.filter((ms): ms is number => ms !== undefined)
  return { first: seen.length ? Math.min(...seen) : undefined, every: seen.length === times.length ? Math.max(...seen) : undefined }
}

async function catalogueStalls(fleet: Fleet): Promise<{ unready: number | undefined; readyAgain: number | undefined }> {
  const node = await startFleetNode('stalled', fleet.catalogueLink.via(fleet.catalogueUrl), { ...STALL_ENV, ...sharedStorage(fleet.catalogueUrl) })
  try {
    const health = `${node.origin}/health`
    if ((await until(health, {}, (status) => status === 200, HEAL_LIMIT_MS, 100)) === undefined) throw new Error(`${health} did not answer 200 before the stall`)
    fleet.catalogueLink.stall()
    const unready = await until(health, {}, (status) => status === 503, UNREADY_LIMIT_MS, 100)
    await fleet.catalogueLink.up()
    const readyAgain = unready === undefined ? undefined : await until(health, {}, (status) => status === 200, HEAL_LIMIT_MS, 100)
    return { unready, readyAgain }
  } finally {
    await fleet.catalogueLink.up()
    await node.stop()
  }
}

async function heal(fleet: Fleet, nodes: FleetNode[]): Promise<Healing> {
  const sub = (await adminQuery(adminUrlFor(fleet.serverUrl, fleet.push.record.dbName), `select id from auth.users limit 1`)).rows[0]!.id as string
  if (!fleet.push.registered) {
    const base = `${nodes[0]!.origin}/project/${fleet.push.record.ref}`
    const answer = await fetch(`${base}/push/v1/devices`, {
      method: 'POST',
      headers: { apikey: fleet.push.record.anonKey, authorization: `Bearer ${fleet.push.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ platform: 'web', subscription: fleet.sink.subscribe() }),
    })
    if (answer.status !== 201) throw new Error(`registering the push device answered ${answer.status} ${await answer.text()}`)
    fleet.push.registered = true
  }
  const killed = await takeover(fleet, nodes, sub, 'SIGKILL')
  nodes.splice(nodes.indexOf(killed.holder), 1)
  console.log(`push takeover after kill -9 of the holder (${killed.holder.name}): ${seconds(killed.ms)}`)
  const stopped = await takeover(fleet, nodes, sub, 'SIGSTOP')
  stopped.holder.signal('SIGCONT')
  console.log(`push takeover after SIGSTOP of the holder (${stopped.holder.name}): ${seconds(stopped.ms)}`)
  const back = await addedServerReturns(fleet, nodes)
  console.log(`first good answer after an added server returns: ${seconds(back.first)} (on every node: ${seconds(back.every)})`)
  const stall = await catalogueStalls(fleet)
  console.log(`unready after its catalogue link stalls: ${seconds(stall.unready)}${stall.unready === undefined ? ` (no 503 on /health within ${UNREADY_LIMIT_MS / 1000} s)` : `, ready again ${seconds(stall.readyAgain)} after the link returns`}`)
  return { killMs: killed.ms, stopMs: stopped.ms, returnMs: back.first, returnEveryMs: back.every, unreadyMs: stall.unready, readyAgainMs: stall.readyAgain }
}

const seconds = (ms: number | undefined) => (ms === undefined ? 'n/a' : `${(ms / 1000).toFixed(2)} s`)

async function runOnce(fleet: Fleet, run: number): Promise<{ steps: Step[]; healing: Healing; failover: Failovers | undefined }> {
  console.log(`\nrun ${run} of ${OPTIONS.runs}: wrk -t1 over ${OPTIONS.projects} projects, ${CONNECTIONS} connections per endpoint split over the nodes, ${OPTIONS.seconds} s`)
  const nodes: FleetNode[] = []
  const all: FleetNode[] = []
  try {
    const budget = await serverBudget(fleet)
    const steps: Step[] = []
    for (const n of NODES) {
      const node = await startFleetNode(`node${n}`, fleet.catalogueUrl, { ...NODE_ENV, ...sharedStorage(fleet.catalogueUrl) })
      nodes.push(node)
      all.push(node)
      await firstRequests(fleet, node)
      const step = await measure(fleet, nodes)
      steps.push(step)
      printStep(step, steps[0]!, budget)
    }
    const healing = await heal(fleet, nodes)
    await Promise.all(all.map((node) => node.stop()))
    return { steps, healing, failover: await failovers(fleet.serverUrl) }
  } finally {
    await Promise.all(all.map((node) => node.stop()))
  }
}

function summarise(runs: Array<{ steps: Step[]; healing: Healing; failover: Failovers | undefined }>, budget: { budget: number; maxConnections: number }): void {
  const list = (values: Array<number | undefined>, format: (n: number) => string) => values.map((v) => (v === undefined ? 'n/a' : format(v))).join(', ')
  const med = (values: Array<number | undefined>) => {
    const seen = values.filter((v): v is number => v !== undefined)
    return seen.length === 0 ? undefined : median(seen)
  }
  console.log(`\nmedians of ${runs.length} run(s) (each run's figure in brackets); the server's connection budget ${budget.budget}, max_connections ${budget.maxConnections}:`)
  for (const [i, n] of NODES.entries()) {
    const rps = runs.map((r) => r.steps[i]!.requestsPerSecond)
    const ratios = runs.map((r) => r.steps[i]!.requestsPerSecond / r.steps[0]!.requestsPerSecond)
    const errors = runs.map((r) => r.steps[i]!.errors)
    const held = runs.map((r) => r.steps[i]!.held.server)
    const busiest = runs.map((r) => r.steps[i]!.held.busiest)
    console.log(
      `nodes ${n}: ${median(rps).toFixed(0)} req/s total (${list(rps, (v) => v.toFixed(0))}), ratio vs 1 node: ${median(ratios).toFixed(2)} (${list(ratios, (v) => v.toFixed(2))})` +
        `${n > 1 ? ' (goal >= 0.9)' : ''}, errors ${errors.reduce((a, b) => a + b, 0)} (goal 0); held on the server ${median(held)}, busiest project ${median(busiest)}`,
    )
    if (n > 1) {
      reportCase({
        suite: 'fleet', case: `${n} nodes / 1 node, total req/s`, what: 'req/s', ratio: median(ratios), runs: ratios, goal: { atLeast: 0.9 },
        figures: { requestsPerSecond: median(rps), errors: errors.reduce((a, b) => a + b, 0), heldOnServer: median(held), busiestProject: median(busiest) },
        peer: '1 node, the same run', peerFigures: { requestsPerSecond: median(runs.map((r) => r.steps[0]!.requestsPerSecond)), errors: runs.reduce((sum, r) => sum + r.steps[0]!.errors, 0) },
      })
    }
  }
  const h = (pick: (x: Healing) => number | undefined) => runs.map((r) => pick(r.healing))
  const line = (name: string, values: Array<number | undefined>) => console.log(`${name}: ${seconds(med(values))} (${list(values, (v) => (v / 1000).toFixed(2))})`)
  line('push takeover after kill -9 of the holder', h((x) => x.killMs))
  line('push takeover after SIGSTOP of the holder', h((x) => x.stopMs))
  line('first good answer after an added server returns', h((x) => x.returnMs))
  line('  on every node', h((x) => x.returnEveryMs))
  line('unready after the catalogue link stalls', h((x) => x.unreadyMs))
  summariseFailovers(runs.map((r) => r.failover))
}

// --- failover ----------------------------------------------------------------

const FAILOVERS: FailoverWhere[] = ['catalogue', 'project server']
type Failovers = Map<FailoverWhere, FailoverFigures | undefined>

async function failovers(serverUrl: string): Promise<Failovers | undefined> {
  const binaries = failoverBinaries()
  if ('missing' in binaries) {
    console.log(`failover: skipped: ${binaries.missing}`)
    return undefined
  }
  const figures: Failovers = new Map()
  for (const where of FAILOVERS) {
    try {
      const f = await failoverCase(binaries, where, serverUrl, NODE_ENV)
      figures.set(where, f)
      console.log(
        `failover, ${where} leader killed: ${f.answered} answered, ${f.unavailable} x 503 over ${seconds(f.outageMs)}, ${f.others} other (goal 0)${f.otherSample ? `, e.g. ${f.otherSample}` : ''}; ` +
          `first good answer ${seconds(f.firstGoodMs)} after the kill, ${seconds(f.afterRoutedMs)} after HAProxy switched (both nodes); ${f.lost} of ${f.acknowledged} acknowledged writes lost (goal 0)`,
      )
    } catch (error) {
      figures.set(where, undefined)
      console.log(`failover, ${where} leader killed: failed: ${(error as Error).message.split('\n')[0]}`)
    }
  }
  return figures
}

function summariseFailovers(runs: Array<Failovers | undefined>): void {
  if (runs.every((r) => r === undefined)) return
  const list = (values: Array<number | undefined>) => values.map((v) => (v === undefined ? 'n/a' : (v / 1000).toFixed(2))).join(', ')
  const med = (values: Array<number | undefined>) => {
    const seen = values.filter((v): v is number => v !== undefined)
    return seen.length === 0 ? undefined : median(seen)
  }
  for (const where of FAILOVERS) {
    const f = runs.map((r) => r?.get(where))
    const count = (pick: (x: FailoverFigures) => number) => f.reduce((sum, x) => sum + (x === undefined ? 0 : pick(x)), 0)
    const figure = (name: string, pick: (x: FailoverFigures) => number | undefined) => {
      const values = f.map((x) => (x === undefined ? undefined : pick(x)))
      return `${name} ${seconds(med(values))} (${list(values)})`
    }
    console.log(
      `failover, ${where} leader killed: ${figure('503s over', (x) => x.outageMs)}, ${figure('first good answer after the kill', (x) => x.firstGoodMs)}, ` +
        `${figure('after HAProxy switched', (x) => x.afterRoutedMs)}; ${count((x) => x.unavailable)} x 503 of ${count((x) => x.answered)} answered, ` +
        `${count((x) => x.others)} other (goal 0), ${count((x) => x.lost)} of ${count((x) => x.acknowledged)} acknowledged writes lost (goal 0)`,
    )
  }
}

async function failoverOnly(): Promise<void> {
  console.log(`fleet benchmark, failover only: ${os.cpus().length} CPUs, ${OPTIONS.runs} run(s)`)
  const database = await benchServer()
  try {
    const runs: Array<Failovers | undefined> = []
    for (let run = 1; run <= OPTIONS.runs; run++) {
      console.log(`\nrun ${run} of ${OPTIONS.runs}`)
      runs.push(await failovers(database.url))
    }
    console.log(`\nmedians of ${runs.length} run(s) (each run's figure in brackets):`)
    summariseFailovers(runs)
  } finally {
    await database.stop()
  }
}

async function main(): Promise<void> {
  // The benchmark's own control plane logs nothing; the nodes' logs are read for refused connections.
  setLogLevel('silent')
  if (OPTIONS.failoverOnly) return failoverOnly()
  console.log(`fleet benchmark: ${OPTIONS.projects} projects (free plan, Auth on), 1 to 3 nodes, ${os.cpus().length} CPUs, ${OPTIONS.runs} run(s)${OPTIONS.quick ? ' (quick)' : ''}`)
  const { fleet, close } = await prepare()
  try {
    const runs: Array<{ steps: Step[]; healing: Healing; failover: Failovers | undefined }> = []
    for (let run = 1; run <= OPTIONS.runs; run++) runs.push(await runOnce(fleet, run))
    summarise(runs, await serverBudget(fleet))
  } finally {
    await close()
  }
}

await main()
