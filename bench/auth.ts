// npm run bench:auth
// 1. Password sign-ins/s through the whole platform (uWebSockets data plane,
//    auth worker pool of N threads, bcrypt cost 10) against the raw rate of
//    bcrypt.compareSync from the same library on N threads, same run.
// 2. Token refreshes/s and GET /user/s against a plain pg script running the
//    very same SQL statements (workers/auth/db) on N connections, same run.
// Each comparison alternates three rounds of both sides. Load comes from wrk (one connection per wrk thread for refresh, so each
// connection follows its own chain of rotating refresh tokens).
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'
import pg from 'pg'
import { setAuthOptions } from '../control-plane/auth-settings.ts'
import { verifyJwt } from '../lib/jwt.ts'
import { rotateRefreshToken } from '../workers/auth/db/sessions.ts'
import { userWithSession } from '../workers/auth/db/users.ts'
import { newRefreshToken } from '../workers/auth/tokens.ts'
import { benchPlatform } from './lib/platform.ts'
import { formatLoad, wrk, type LoadResult } from './lib/wrk.ts'

const threads = Number(process.env.BENCH_THREADS ?? Math.max(1, Math.floor(os.cpus().length / 2)))
const seconds = Number(process.env.BENCH_SECONDS ?? 8)
const connections = Number(process.env.BENCH_CONNECTIONS ?? threads * 2)

async function rawBcrypt(n: number, ms: number): Promise<number> {
  const bcryptPath = createRequire(import.meta.url).resolve('bcrypt')
  const hash = (await import('bcrypt')).default.hashSync('benchmark password', 10)
  const code = `
    const { parentPort, workerData } = require('node:worker_threads')
    const bcrypt = require(workerData.bcryptPath)
    const end = Date.now() + workerData.ms
    let count = 0
    while (Date.now() < end) { bcrypt.compareSync('benchmark password', workerData.hash); count++ }
    parentPort.postMessage(count)`
  const counts = await Promise.all(
    Array.from({ length: n }, () => new Promise<number>((resolve, reject) => {
      const worker = new Worker(code, { eval: true, workerData: { bcryptPath, hash, ms } })
      worker.once('message', resolve)
      worker.once('error', reject)
    })),
  )
  return counts.reduce((a, b) => a + b, 0) / (ms / 1000)
}


async function main(): Promise<void> {
  const bench = await benchPlatform({ BASEPLANE_AUTH_THREADS: String(threads), BASEPLANE_THROTTLE_MAX_FAILURES: '1000000' })
  const { platform } = bench
  try {
    const project = await platform.controlPlane.create({ name: 'auth bench' })
    await platform.controlPlane.setProduct(project.ref, 'auth', true)
    await setAuthOptions(platform.controlPlane, project.ref, { mailer_autoconfirm: true })
    const base = `${bench.origin}/project/${project.ref}/auth/v1`
    const headers = { apikey: project.anonKey, 'content-type': 'application/json' }
    const email = 'bench@example.test'
    const password = 'benchmark password'
    const signup = await fetch(`${base}/signup`, { method: 'POST', headers, body: JSON.stringify({ email, password }) })
    if (signup.status !== 200) throw new Error(`sign-up failed: ${signup.status} ${await signup.text()}`)
    const signIn = async () => {
      const r = await fetch(`${base}/token?grant_type=password`, { method: 'POST', headers, body: JSON.stringify({ email, password }) })
      if (r.status !== 200) throw new Error(`sign-in failed: ${r.status}`)
      return (await r.json()) as { access_token: string; refresh_token: string }
    }
    console.log(`auth benchmark: ${threads} auth thread(s), ${os.cpus().length} CPUs, ${seconds} s per run\n`)

    // 1. Password sign-ins vs raw bcrypt.
    // Alternating rounds, so load from elsewhere on the machine falls on both sides alike.
    const signInScript = writeScript('signin', `wrk.method = "POST"\nwrk.body = '${JSON.stringify({ email, password })}'`)
    const rawRounds: number[] = []
    const signInRounds: LoadResult[] = []
    for (let round = 0; round < ROUNDS; round++) {
      rawRounds.push(await rawBcrypt(threads, (seconds * 1000) / ROUNDS))
      signInRounds.push(await wrk(`${base}/token?grant_type=password`, { headers, seconds: Math.max(1, Math.round(seconds / ROUNDS)), connections, threads: 1, script: signInScript }))
    }
    const raw = mean(rawRounds)
    const signIns = combine(signInRounds)
    console.log(formatLoad('password sign-in (POST /token)', signIns))
    console.log(`${'raw bcrypt.compareSync, cost 10'.padEnd(34)} ${raw.toFixed(0).padStart(8)} /s      on ${threads} thread(s)`)
    console.log(`ratio sign-ins / raw bcrypt: ${(signIns.requestsPerSecond / raw).toFixed(2)} (goal >= 0.85)\n`)

    // Sessions for the refresh and GET /user runs (HTTP side, then the peer).
    const httpSessions = await Promise.all(Array.from({ length: connections }, signIn))
    const peerSessions = await Promise.all(Array.from({ length: threads }, signIn))

    // 2a. Refresh through the platform: each wrk thread (one connection) follows its own token chain.
    const refreshRounds: LoadResult[] = []
    const peerRefreshRounds: number[] = []
    // 2b. The same statement from a plain pg script, one connection per auth thread.
    const api = new pg.Pool({
      host: project.dbHost, port: project.dbPort, database: project.dbName, user: project.dbApiRole, password: project.dbApiPassword, max: threads,
      // The same role the auth worker's connections switch to (workers/auth/db/pool.ts), set at connection start.
      options: '-c role=baseplane_auth_admin -c timezone=UTC',
    })
    for (let round = 0; round < ROUNDS; round++) {
      // Each round starts fresh chains (wrk does not report the last token it saw).
      const script = writeScript(`refresh${round}`, refreshScript(httpSessions.map((s) => s.refresh_token)))
      refreshRounds.push(await wrk(`${base}/token?grant_type=refresh_token`, { headers, seconds: Math.max(1, Math.round(seconds / ROUNDS)), connections, threads: connections, script }))
      for (let i = 0; i < httpSessions.length; i++) httpSessions[i] = await signIn()
      peerRefreshRounds.push(await loop(threads, (seconds * 1000) / ROUNDS, async (i) => {
        const next = newRefreshToken()
        const row = await rotateRefreshToken(api, peerSessions[i]!.refresh_token, next, '127.0.0.1')
        if (!row) throw new Error('peer refresh failed')
        peerSessions[i]!.refresh_token = next
      }))
    }
    const refresh = combine(refreshRounds)
    const peerRefresh = mean(peerRefreshRounds)
    console.log(formatLoad('token refresh (POST /token)', refresh))
    console.log(`${'plain pg: same rotate statement'.padEnd(34)} ${peerRefresh.toFixed(0).padStart(8)} /s      on ${threads} connection(s)`)
    console.log(`ratio refresh / plain pg: ${(refresh.requestsPerSecond / peerRefresh).toFixed(2)} (goal >= 0.7)\n`)

    // 3. GET /user vs the same statement.
    const token = (await signIn()).access_token
    const claims = await verifyJwt(project.jwtSecret, token)
    const userRounds: LoadResult[] = []
    const peerUserRounds: number[] = []
    for (let round = 0; round < ROUNDS; round++) {
      userRounds.push(await wrk(`${base}/user`, { headers: { apikey: project.anonKey, authorization: `Bearer ${token}` }, seconds: Math.max(1, Math.round(seconds / ROUNDS)), connections, threads: 1 }))
      peerUserRounds.push(await loop(threads, (seconds * 1000) / ROUNDS, async () => {
        const row = await userWithSession(api, claims.sub as string, claims.session_id as string)
        if (!row?.session_ok) throw new Error('peer user lookup failed')
      }))
    }
    const user = combine(userRounds)
    const peerUser = mean(peerUserRounds)
    console.log(formatLoad('GET /user', user))
    console.log(`${'plain pg: same user statement'.padEnd(34)} ${peerUser.toFixed(0).padStart(8)} /s      on ${threads} connection(s)`)
    console.log(`ratio GET /user / plain pg: ${(user.requestsPerSecond / peerUser).toFixed(2)} (goal >= 0.7)`)
    await api.end()
  } finally {
    await bench.close()
  }
}

const ROUNDS = 3

function mean(values: number[]): number {
  return values.reduce((a, b) => a + b, 0) / values.length
}

/** Rounds of one load, as one: mean rate, worst percentiles, summed failures. */
function combine(rounds: LoadResult[]): LoadResult {
  return {
    requestsPerSecond: mean(rounds.map((r) => r.requestsPerSecond)),
    p50Ms: mean(rounds.map((r) => r.p50Ms)),
    p99Ms: Math.max(...rounds.map((r) => r.p99Ms)),
    non2xx: rounds.reduce((a, r) => a + r.non2xx, 0),
  }
}

/** Runs `step` in `n` concurrent loops for `ms`; operations per second. */
async function loop(n: number, ms: number, step: (index: number) => Promise<void>): Promise<number> {
  const end = Date.now() + ms
  let count = 0
  await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      while (Date.now() < end) {
        await step(i)
        count++
      }
    }),
  )
  return count / (ms / 1000)
}

const scriptDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bp-bench-auth-'))
process.on('exit', () => fs.rmSync(scriptDir, { recursive: true, force: true }))

function writeScript(name: string, text: string): string {
  const file = path.join(scriptDir, `${name}.lua`)
  fs.writeFileSync(file, text)
  return file
}

/** wrk script: thread i starts from tokens[i] and continues with each response's refresh_token. */
function refreshScript(tokens: string[]): string {
  return `
local tokens = { ${tokens.map((t) => `"${t}"`).join(', ')} }
local counter = 0
function setup(thread)
  counter = counter + 1
  thread:set("token", tokens[counter])
end
function init(args)
  wrk.method = "POST"
end
function request()
  return wrk.format(nil, nil, nil, '{"refresh_token":"' .. token .. '"}')
end
function response(status, headers, body)
  local next = string.match(body, '"refresh_token":"([a-z0-9]+)"')
  if next then token = next end
end
`
}

await main()
