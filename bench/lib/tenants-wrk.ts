// wrk rotating over many projects: one request per list entry in turn (path
// and headers), with the answers counted by status and the socket errors
// (connect, read, write, timeout) that wrk's own summary leaves out.
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { Tenant } from './tenants-projects.ts'
import type { LoadResult } from './wrk.ts'

export interface TenantRequest {
  path: string
  headers: Record<string, string>
  /** This request's own method and body, when a run mixes several (else the run's). */
  method?: 'GET' | 'POST'
  body?: string
}

/** One endpoint a benchmark sends to every tenant: its method and body, and each tenant's path and headers. */
export interface TenantEndpoint {
  name: string
  method: 'GET' | 'POST'
  body?: string
  request(tenant: Tenant): TenantRequest
}

/** POST /graphql/v1 of each tenant with `query`, with its anon key (also as the bearer token when `anonBearer`). */
export function graphqlEndpoint(name: string, query: string, anonBearer = false): TenantEndpoint {
  return {
    name,
    method: 'POST',
    body: JSON.stringify({ query }),
    request: (t) => ({
      path: `${t.basePath}/graphql/v1`,
      headers: { apikey: t.record.anonKey, ...(anonBearer ? { authorization: `Bearer ${t.record.anonKey}` } : {}), 'content-type': 'application/json' },
    }),
  }
}

/** GET /auth/v1/user of each tenant, as its signed-in user. */
export const currentUserEndpoint: TenantEndpoint = {
  name: 'GET /auth/v1/user',
  method: 'GET',
  request: (t) => ({ path: `${t.basePath}/auth/v1/user`, headers: { apikey: t.record.anonKey, authorization: `Bearer ${t.userToken}` } }),
}

export interface TenantLoad extends LoadResult {
  socketErrors: number
  /** Answers by HTTP status. */
  statuses: Record<string, number>
  /** The first body seen of each status (300 characters at most). */
  bodies: Record<string, string>
}

export interface TenantLoadOptions {
  method: 'GET' | 'POST'
  body?: string
  requests: TenantRequest[]
  seconds: number
  connections: number
  threads: number
  /** wrk's own is 2 s; a request that waits longer for a slow neighbour must still be counted. */
  timeoutSeconds?: number
}

const script = new URL('./tenants.lua', import.meta.url).pathname
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bp-bench-tenants-'))
process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }))
let runs = 0

function lua(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`
}

function requestList(options: TenantLoadOptions): string {
  const entries = options.requests.map((r) => {
    const headers = Object.entries(r.headers).map(([k, v]) => `[${lua(k)}] = ${lua(v)}`)
    const own = r.method === undefined ? '' : `, ${lua(r.method)}, ${r.body === undefined ? 'nil' : lua(r.body)}`
    return `{ ${lua(r.path)}, { ${headers.join(', ')} }${own} }`
  })
  const body = options.body === undefined ? 'nil' : lua(options.body)
  return `return { method = ${lua(options.method)}, body = ${body}, threads = ${options.threads}, requests = {\n${entries.join(',\n')}\n} }\n`
}

interface Report {
  requests: number
  durationUs: number
  p50Us: number
  p99Us: number
  socketErrors: number
  statuses: Record<string, number>
  bodies: Record<string, string>
}

export function wrkTenants(origin: string, options: TenantLoadOptions): Promise<TenantLoad> {
  if (options.requests.length === 0) throw new Error('wrkTenants needs at least one request')
  const run = ++runs
  const list = path.join(dir, `requests-${run}.lua`)
  const report = path.join(dir, `report-${run}.json`)
  fs.writeFileSync(list, requestList(options))
  const args = [`-t${options.threads}`, `-c${options.connections}`, `-d${options.seconds}s`, `--timeout`, `${options.timeoutSeconds ?? 2}s`, '-s', script, origin]
  const env = { ...process.env, BENCH_TENANTS_REQUESTS: list, BENCH_TENANTS_REPORT: report }
  return new Promise((resolve, reject) => {
    execFile('wrk', args, { env, maxBuffer: 1 << 20 }, (error, _stdout, stderr) => {
      if (error) {
        reject(new Error(`wrk failed (is the Debian package "wrk" installed?): ${error.message}${stderr ? `\n${stderr}` : ''}`))
        return
      }
      let figures: Report
      try {
        figures = JSON.parse(fs.readFileSync(report, 'utf8')) as Report
      } catch (cause) {
        reject(new Error(`could not read the report of wrk's script ${report}: ${(cause as Error).message}${stderr ? `\n${stderr}` : ''}`))
        return
      }
      fs.rmSync(list, { force: true })
      fs.rmSync(report, { force: true })
      const non2xx = Object.entries(figures.statuses).reduce((sum, [status, n]) => (status.startsWith('2') ? sum : sum + n), 0)
      resolve({
        requestsPerSecond: figures.requests / (figures.durationUs / 1e6),
        requests: figures.requests,
        p50Ms: figures.p50Us / 1000,
        p99Ms: figures.p99Us / 1000,
        non2xx,
        socketErrors: figures.socketErrors,
        statuses: figures.statuses,
        bodies: figures.bodies,
      })
    })
  })
}
