// bench:tenants' usage section (issue 27): what counting usage costs.
// 1. Throughput of a mix (POST /graphql/v1 {__typename}, GET /auth/v1/user, a
//    token refresh: each counted as a request and its bytes, the refresh also
//    as a refresh and an active user) over K projects, on a node counting
//    usage against a node with BASEPLANE_USAGE=false (the peer), both started
//    for this in the same process on the bench's catalogue, rounds alternating.
// 2. The catalogue writes per node per minute with every project active: one
//    request of the mix to each, then the node's flush, its statements counted.
import fs from 'node:fs'
import pg from 'pg'
import { adminUrlFor } from '../../lib/db/server-url.ts'
import { freePort } from '../../lib/db/embedded.ts'
import { startPlatform, type RunningPlatform } from '../../server/platform.ts'
import type { PlatformConfig } from '../../lib/config.ts'
import { nodeConfig } from '../../dev/node-config.ts'
import type { BenchPlatform } from './platform.ts'
import type { Tenant } from './tenants-projects.ts'
import { wrkTenants, type TenantLoad, type TenantRequest } from './tenants-wrk.ts'
import { median } from './stats.ts'
import { CpuTime } from './cpu-time.ts'
import { reportCase } from './report.ts'

export interface UsageCostOptions {
  /** The bench node's environment, which the peer shares (but for BASEPLANE_USAGE). */
  env: Record<string, string>
  /** Projects the throughput mix rotates over. */
  k: number
  seconds: number
  rounds: number
  load: { connections: number; threads: number }
}

/** Each tenant's user gets a refresh token T0 (written as the server's admin, as its session was): replaying it answers the session's current token. */
async function refreshTokens(bench: BenchPlatform, tenants: Tenant[]): Promise<Map<Tenant, string>> {
  const tokens = new Map<Tenant, string>()
  let next = 0
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < tenants.length) {
        const tenant = tenants[next++]!
        const client = new pg.Client({ connectionString: adminUrlFor(bench.serverUrl, tenant.record.dbName) })
        await client.connect()
        try {
          const token = `bench${tenant.record.ref}`
          await client.query(`insert into auth.refresh_tokens (token, user_id, session_id) select $1, user_id::text, id from auth.sessions limit 1`, [token])
          tokens.set(tenant, token)
        } finally {
          await client.end()
        }
      }
    }),
  )
  return tokens
}

/** A tenant's three requests of the mix. */
function mixOf(tenant: Tenant, refreshToken: string): TenantRequest[] {
  const apikey = tenant.record.anonKey
  return [
    {
      path: `${tenant.basePath}/graphql/v1`,
      headers: { apikey, authorization: `Bearer ${apikey}`, 'content-type': 'application/json' },
      method: 'POST',
      body: JSON.stringify({ query: '{ __typename }' }),
    },
    { path: `${tenant.basePath}/auth/v1/user`, headers: { apikey, authorization: `Bearer ${tenant.userToken}` }, method: 'GET' },
    {
      path: `${tenant.basePath}/auth/v1/token?grant_type=refresh_token`,
      headers: { apikey, 'content-type': 'application/json' },
      method: 'POST',
      body: JSON.stringify({ refresh_token: refreshToken }),
    },
  ]
}

/** Each request once, 16 at a time; throws on an answer that is not 200. */
async function sendOnce(origin: string, requests: TenantRequest[]): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < requests.length) {
        const r = requests[next++]!
        const answer = await fetch(`${origin}${r.path}`, { method: r.method, headers: r.headers, body: r.body })
        const text = await answer.text()
        if (answer.status !== 200) throw new Error(`${r.method} ${r.path} answered ${answer.status}: ${text.slice(0, 200)}`)
      }
    }),
  )
}

const errorsOf = (load: TenantLoad) => load.non2xx + load.socketErrors

interface Side {
  name: string
  usage: boolean
  rounds: TenantLoad[]
  cpu: CpuTime
}

interface Node {
  platform: RunningPlatform
  config: PlatformConfig
}

async function startNode(bench: BenchPlatform, env: Record<string, string>, usage: boolean): Promise<Node> {
  const config = nodeConfig(bench.catalogueUrl, await freePort(), { ...env, BASEPLANE_USAGE: String(usage) })
  return { platform: await startPlatform(config, bench.catalogueUrl), config }
}

async function stopNode(node: Node): Promise<void> {
  await node.platform.stop()
  fs.rmSync(node.config.home, { recursive: true, force: true })
}

/**
 * The mix's rounds on a pair of fresh nodes, one counting usage and one not,
 * started in the order given: the node started first runs a few per cent
 * slower in this process (measured with both counting), so the section runs
 * one pair in each order and the ratio is over both.
 */
async function pairRounds(bench: BenchPlatform, sides: Side[], order: Side[], mix: TenantRequest[], options: UsageCostOptions): Promise<void> {
  const nodes = new Map<Side, Node>()
  try {
    for (const side of order) nodes.set(side, await startNode(bench, options.env, side.usage))
    // Untimed: the first refresh rotates each token (once), the first requests pay for connections and JIT.
    for (const side of sides) await sendOnce(nodes.get(side)!.config.publicUrl, mix)
    for (const side of sides) await wrkTenants(nodes.get(side)!.config.publicUrl, { method: 'GET', requests: mix, seconds: 2, ...options.load })
    for (let round = 0; round < options.rounds; round++) {
      // Alternating which side goes first, so a drift of the machine weighs on both.
      for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
        const origin = nodes.get(side)!.config.publicUrl
        side.rounds.push(await side.cpu.measure(() => wrkTenants(origin, { method: 'GET', requests: mix, seconds: options.seconds, ...options.load })))
      }
      process.stderr.write(`  usage: round ${round + 1} of ${options.rounds} done (${order[0]!.usage ? 'counting' : 'not counting'} node started first)\n`)
    }
  } finally {
    for (const node of nodes.values()) await stopNode(node)
  }
}

export async function usageCost(bench: BenchPlatform, tenants: Tenant[], options: UsageCostOptions): Promise<void> {
  const tokens = await refreshTokens(bench, tenants)
  const mix = tenants.slice(0, options.k).flatMap((tenant) => mixOf(tenant, tokens.get(tenant)!))
  const on: Side = { name: 'usage counted', usage: true, rounds: [], cpu: new CpuTime() }
  const off: Side = { name: 'usage off (BASEPLANE_USAGE=false)', usage: false, rounds: [], cpu: new CpuTime() }
  const sides = [on, off]
  // Fresh nodes alike but for the switch (the bench's own node, which made the projects, stays idle).
  await pairRounds(bench, sides, [on, off], mix, options)
  await pairRounds(bench, sides, [off, on], mix, options)

  console.log(
    `\nusage counting: a mix of POST /graphql/v1 {__typename}, GET /auth/v1/user and a token refresh over ${options.k} projects, ` +
      `wrk -t${options.load.threads} -c${options.load.connections} -d${options.seconds}s, median of ${2 * options.rounds} runs each, alternating, ` +
      "on two pairs of fresh nodes in this process on the bench's catalogue (each pair started in the other order)",
  )
  console.log('                                      req/s   p50 ms   p99 ms   errors')
  for (const side of sides) {
    const rps = median(side.rounds.map((r) => r.requestsPerSecond))
    const errors = side.rounds.reduce((sum, r) => sum + errorsOf(r), 0)
    console.log(
      `  ${side.name.padEnd(34)} ${rps.toFixed(0).padStart(7)} ${median(side.rounds.map((r) => r.p50Ms)).toFixed(2).padStart(8)} ` +
        `${median(side.rounds.map((r) => r.p99Ms)).toFixed(2).padStart(8)} ${String(errors).padStart(8)}`,
    )
    for (const r of side.rounds) for (const [status, body] of Object.entries(r.bodies)) if (!status.startsWith('2')) console.log(`      ${status} answered: ${body}`)
  }
  for (const side of sides) console.log(`  ${side.name}: ${side.cpu.describe()}`)
  const ratio = median(on.rounds.map((r) => r.requestsPerSecond)) / median(off.rounds.map((r) => r.requestsPerSecond))
  console.log(`ratio usage counted / usage off: ${ratio.toFixed(3)} (goal >= 0.97)`)
  const figuresOf = (side: Side) => ({
    requestsPerSecond: median(side.rounds.map((r) => r.requestsPerSecond)),
    p50Ms: median(side.rounds.map((r) => r.p50Ms)),
    p99Ms: median(side.rounds.map((r) => r.p99Ms)),
    errors: side.rounds.reduce((sum, r) => sum + errorsOf(r), 0),
  })
  reportCase({ suite: 'tenants', case: 'usage counted / usage off', figures: figuresOf(on), peer: off.name, peerFigures: figuresOf(off), ratio, what: 'req/s', goal: { atLeast: 0.97 } })

  // Every project active within one flush: one request of the mix each, then the node's write. The
  // default interval is a minute, so what one flush writes is what a node writes a minute.
  const node = await startNode(bench, options.env, true)
  try {
    const recorder = node.platform.usage!
    const all = tenants.flatMap((tenant) => mixOf(tenant, tokens.get(tenant)!))
    const before = recorder.stats()
    await sendOnce(node.config.publicUrl, all)
    await recorder.flush()
    const flushed = recorder.stats()
    console.log(
      `catalogue writes with ${tenants.length} active projects: ${flushed.statements - before.statements} statement(s) ` +
        '(one a flush: two when the flush timer fired while the requests were sent) ' +
        `(${flushed.rows - before.rows} counter rows, ${flushed.users - before.users} active users), failures ${flushed.failures - before.failures}; ` +
        `per node per minute at BASEPLANE_USAGE_FLUSH_MS ${options.env.BASEPLANE_USAGE_FLUSH_MS ?? '60000'}: that write and one claim of the fleet's usage jobs; ` +
        'fleet-wide, the node that wins a job runs it: the rollup one statement a minute, retention one an hour, ' +
        'database sizes one query per server and one write per BASEPLANE_USAGE_SIZE_SAMPLE_MS',
    )
  } finally {
    await stopNode(node)
  }
}
