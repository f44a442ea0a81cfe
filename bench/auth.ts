// npm run bench:auth
// 1. Password sign-ins/s through the whole platform (uWebSockets data plane,
//    auth worker pool of N threads, bcrypt cost 10) against the raw rate of
//    bcrypt.compareSync from the same library on N threads, same run.
// 2. Token refreshes/s and GET /user/s against a plain pg script running the
//    very same SQL statements (workers/auth/db) on N connections, and against
//    a minimal uWebSockets.js server answering them on the main thread with the
//    same checks and statements (bench/lib/main-thread-auth.ts: the price of
//    the hop to a worker thread), same run, same wrk load; at 2 requests at
//    once and at 8 (BENCH_HOP_CONNECTIONS).
// 3. TOTP verifications/s (POST /factors/{id}/verify, each on its own factor,
//    session and challenge, since a code is accepted once per factor) against
//    a plain pg script running the same statements with the same otplib check.
// 4. Google callbacks/s (GET /callback: state check, code exchange with the
//    local OpenID stand-in, ID token verification, sign-in) against the same
//    library (google-auth-library) exchanging codes and verifying ID tokens
//    with the same stand-in in-process.
// 5. Local verification: ES256 access tokens/s verified with the project's
//    JWKS (jose with the key set imported once, and supabase-js's getClaims()
//    itself) against HS256 tokens/s verified with the secret (jose), on this thread.
// 6. Token refreshes/s with a trivial custom access token hook against without (auth-hooks.ts).
// 7. Anonymous sign-ins/s (POST /signup with no address) against password sign-ups of new addresses.
// BENCH_AUTH_ONLY=round3 runs 7 and 6 only; =hooks, 6 only.
// Each comparison alternates three rounds of both sides. Load comes from wrk (one connection per wrk thread for refresh, so each
// connection follows its own chain of rotating refresh tokens).
import { platformLoginOf } from '../lib/db/platform-logins.ts'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'
import crypto from 'node:crypto'
import { OAuth2Client } from 'google-auth-library'
import { generateSecret, generateSync } from 'otplib'
import pg from 'pg'
import { setAuthOptions, setGoogle } from '../control-plane/auth-settings.ts'
import type { ControlPlane } from '../control-plane/control-plane.ts'
import { createProject, setProjectPlan, setProjectProduct } from '../control-plane/projects.ts'
import type { ProjectRecord } from '../lib/catalogue.ts'
import { AUTH_SESSION_SETTINGS } from '../lib/db/auth-transaction.ts'
import { planLimits } from '../lib/plans.ts'
import { createClient } from '@supabase/supabase-js'
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose'
import { signJwt, verifyJwt } from '../lib/jwt.ts'
import { startOidcProvider, type OidcProvider } from '../dev/oidc-provider.ts'
import { acceptTimeStep, deleteUnverifiedFactors, lockFactorForVerify } from '../workers/auth/db/factors.ts'
import { amrOf, rotateRefreshToken, upgradeSession } from '../workers/auth/db/sessions.ts'
import { userById, userWithSession } from '../workers/auth/db/users.ts'
import { totpTimeStep } from '../workers/auth/totp.ts'
import { newRefreshToken } from '../workers/auth/tokens.ts'
import { benchAccessTokenHook } from './auth-hooks.ts'
import { CpuTime } from './lib/cpu-time.ts'
import { startMainThreadAuth, type MainThreadAuth } from './lib/main-thread-auth.ts'
import { benchPlatform } from './lib/platform.ts'
import { formatLoad, wrk, type LoadResult } from './lib/wrk.ts'
import { reportRates, type Goal, type Rate } from './lib/report.ts'

const threads = Number(process.env.BENCH_THREADS ?? Math.max(1, Math.floor(os.cpus().length / 2)))
const seconds = Number(process.env.BENCH_SECONDS ?? 8)
// Sign-ins, TOTP, callbacks and local verification run this many requests at once.
const connections = Number(process.env.BENCH_CONNECTIONS ?? 2)
// Refresh and GET /user run on every side at each of these: 2, where every
// thread sleeps between requests, and 8, the most requests of one project the
// bench project's plan runs at once (lib/plans.ts), so the platform queues
// none of what the peers run.
const hopConnections = (process.env.BENCH_HOP_CONNECTIONS ?? '2,8').split(',').map(Number)
const BENCH_PLAN = 'business'

/** Records one printed ratio of rates in the run's report (bench/lib/report.ts). */
const reportAuth = (name: string, ours: Rate, peer: string, theirs: Rate, goal?: Goal) => reportRates('auth', name, ours, peer, theirs, goal)

interface Session {
  access_token: string
  refresh_token: string
}

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
  const google = await startOidcProvider()
  const bench = await benchPlatform({
    BASEPLANE_AUTH_THREADS: String(threads),
    BASEPLANE_THROTTLE_MAX_FAILURES: '1000000',
    BASEPLANE_GOOGLE_AUTHORIZATION_URL: google.authorizationUrl,
    BASEPLANE_GOOGLE_TOKEN_URL: google.tokenUrl,
    BASEPLANE_GOOGLE_CERTS_URL: google.certsUrl,
    BASEPLANE_GOOGLE_ISSUER: google.issuer,
  })
  const { platform } = bench
  try {
    const project = await createProject(platform.controlPlane, { name: 'auth bench' })
    await setProjectProduct(platform.controlPlane, project.ref, 'auth', true)
    await setProjectPlan(platform.controlPlane, project.ref, BENCH_PLAN)
    if (Math.max(...hopConnections) > planLimits(BENCH_PLAN).concurrentRequests) throw new Error(`BENCH_HOP_CONNECTIONS above plan ${BENCH_PLAN}'s concurrent requests would queue the platform's side only`)
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
      return (await r.json()) as Session
    }
    console.log(`auth benchmark: ${threads} auth thread(s), ${os.cpus().length} CPUs, ${seconds} s per run, plan ${BENCH_PLAN}\n`)
    // 6. Refresh with a custom access token hook against without.
    const hookBench = () =>
      benchAccessTokenHook({ controlPlane: platform.controlPlane, project, base, headers, signIn, seconds, connections, rounds: ROUNDS, combine, refreshScript: (name, tokens) => writeScript(name, refreshScript(tokens)) })
    // BENCH_AUTH_ONLY=round3 runs only the lines of Auth round 3 (anonymous sign-ins, the access token hook); =hooks only the hook's.
    if (process.env.BENCH_AUTH_ONLY === 'hooks') return await hookBench()
    if (process.env.BENCH_AUTH_ONLY === 'round3') {
      await benchAnonymous(platform.controlPlane, project.ref, base, headers)
      return await hookBench()
    }

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
    reportAuth('sign-ins / raw bcrypt', signIns, `raw bcrypt.compareSync on ${threads} thread(s)`, raw, { atLeast: 0.85 })

    await benchAnonymous(platform.controlPlane, project.ref, base, headers)

    // The pool the TOTP peer and the statement checks below use.
    const api = new pg.Pool({ ...apiRole(project), max: connections })
    // Dropping the databases at the end ends its idle connections: not an error of the run.
    api.on('error', () => {})

    // 2 and 3: refresh and GET /user at each concurrency asked for.
    for (const at of hopConnections) await benchHop(project, bench.origin, signIn, at)

    const token = (await signIn()).access_token
    await benchLocalVerification(project, base, token)
    await hookBench()

    try {
      await benchTotp(project, base, api)
      await setGoogle(platform.controlPlane, project.ref, { clientId: google.client.id, clientSecret: google.client.secret, enabled: true })
      await benchCallback(base, google)
    } finally {
      await api.end()
    }
  } finally {
    await bench.close()
    await google.close()
  }
}

/**
 * Anonymous sign-ins (POST /signup with neither email nor phone, as
 * signInAnonymously() sends it) against password sign-ups of new addresses in
 * the same run: both make a user and a session; the sign-up also hashes its
 * password (bcrypt, cost 10), which the anonymous one has none of.
 */
async function benchAnonymous(controlPlane: ControlPlane, ref: string, base: string, headers: Record<string, string>): Promise<void> {
  await setAuthOptions(controlPlane, ref, { external_anonymous_users_enabled: true, rate_limit_anonymous_users: 1000000 })
  const anonymousScript = writeScript('anonymous', `wrk.method = "POST"\nwrk.body = '{"data":{},"gotrue_meta_security":{}}'`)
  // A new address per request: the round's own prefix (Lua's random numbers repeat from run to run) and a counter.
  const signUpScript = (prefix: string) =>
    writeScript(
      `signup-${prefix}`,
      `local n = 0\nrequest = function()\n  n = n + 1\n  return wrk.format("POST", nil, nil, '{"email":"${prefix}-' .. n .. '@example.test","password":"benchmark password"}')\nend`,
    )
  const anonymousRounds: LoadResult[] = []
  const signUpRounds: LoadResult[] = []
  for (let round = 0; round < ROUNDS; round++) {
    const each = Math.max(1, Math.round(seconds / ROUNDS))
    const script = signUpScript(`u${round}-${crypto.randomBytes(4).toString('hex')}`)
    anonymousRounds.push(await wrk(`${base}/signup`, { headers, seconds: each, connections, threads: 1, script: anonymousScript }))
    signUpRounds.push(await wrk(`${base}/signup`, { headers, seconds: each, connections, threads: 1, script }))
  }
  const anonymous = combine(anonymousRounds)
  const signUps = combine(signUpRounds)
  console.log(formatLoad('anonymous sign-in (POST /signup)', anonymous))
  console.log(formatLoad('password sign-up (POST /signup)', signUps))
  console.log(`ratio anonymous sign-in / password sign-up: ${(anonymous.requestsPerSecond / signUps.requestsPerSecond).toFixed(2)}${anonymous.non2xx || signUps.non2xx ? `  (non-2xx: ${anonymous.non2xx} / ${signUps.non2xx})` : ''}\n`)
  reportAuth('anonymous sign-in / password sign-up', anonymous, 'password sign-up (POST /signup)', signUps)
}

/**
 * Connection settings of the project's Auth login role (lib/db/platform-logins.ts) with the auth
 * worker's session settings (role, time zone, statement timeout) applied at connection
 * start, so the peers' statements run as the platform's do.
 */
function apiRole(project: ProjectRecord): pg.PoolConfig {
  const auth = platformLoginOf(project, 'auth')
  return {
    host: project.dbHost, port: project.dbPort, database: project.dbName, user: auth.user, password: auth.password,
    options: Object.entries(AUTH_SESSION_SETTINGS).map(([name, value]) => `-c ${name}=${value}`).join(' '),
  }
}

/**
 * One endpoint's lines: each side's rate, the two ratios, and where each
 * side's CPU went. `name` labels the ratios, `title` the platform's rate,
 * `statement` the plain pg script's.
 */
function reportHop(labels: { name: string; title: string; statement: string }, connections: number, sides: { platform: LoadResult; main: LoadResult; peer: number; platformCpu: CpuTime; mainCpu: CpuTime }): void {
  const { name, title, statement } = labels
  console.log(formatLoad(title, sides.platform))
  console.log(formatLoad(`main-thread uWS: same ${name}`, sides.main))
  console.log(`${`plain pg: same ${statement} statement`.padEnd(34)} ${sides.peer.toFixed(0).padStart(8)} /s      on ${connections} connection(s)`)
  console.log(`ratio ${name} / main-thread handler: ${(sides.platform.requestsPerSecond / sides.main.requestsPerSecond).toFixed(2)} (goal >= 0.75)`)
  console.log(`ratio ${name} / plain pg: ${(sides.platform.requestsPerSecond / sides.peer).toFixed(2)} (goal >= 0.7)`)
  reportAuth(`${name} / main-thread handler, ${connections} at once`, sides.platform, 'main-thread uWS handler (bench/lib/main-thread-auth.ts)', sides.main, { atLeast: 0.75 })
  reportAuth(`${name} / plain pg, ${connections} at once`, sides.platform, `plain pg: the same ${statement} statements`, sides.peer, { atLeast: 0.7 })
  console.log(`${name}, platform: ${sides.platformCpu.describe()}`)
  console.log(`${name}, main-thread handler: ${sides.mainCpu.describe()}\n`)
}

/**
 * Token refreshes/s and GET /user/s with `connections` requests at once:
 * through the platform, through the main-thread handler (the same checks and
 * statements without the worker hop, on a pool of its own of the same size),
 * and from a plain pg script on as many connections, with where each side's
 * CPU goes.
 */
async function benchHop(project: ProjectRecord, origin: string, signIn: () => Promise<Session>, connections: number): Promise<void> {
  const base = `${origin}/project/${project.ref}/auth/v1`
  const headers = { apikey: project.anonKey, 'content-type': 'application/json' }
  console.log(`-- ${connections} request(s) at once --`)
  // Sessions for the refresh and GET /user runs (HTTP side, then the peer).
  const httpSessions = await Promise.all(Array.from({ length: connections }, signIn))
  const peerSessions = await Promise.all(Array.from({ length: connections }, signIn))

  // 2a. Refresh through the platform: each wrk thread (one connection) follows its own token chain.
  const refreshRounds: LoadResult[] = []
  const peerRefreshRounds: number[] = []
  // 2b. The same statement from a plain pg script, on as many connections.
  const api = new pg.Pool({ ...apiRole(project), max: connections })
  api.on('error', () => {})
  // 2c. The same requests answered on the main thread, no worker hop, on a pool of its own of the same size.
  const mainPool = new pg.Pool({ ...apiRole(project), max: connections })
  mainPool.on('error', () => {})
  const main: MainThreadAuth = await startMainThreadAuth(project, `${origin}/project/${project.ref}`, mainPool)
  const mainRefreshRounds: LoadResult[] = []
  // Where each side's CPU goes (the main thread, the worker and other threads, PostgreSQL): the hop's price in CPU.
  const refreshCpu = new CpuTime()
  const mainRefreshCpu = new CpuTime()
  for (let round = 0; round < ROUNDS; round++) {
    // Each round starts fresh chains (wrk does not report the last token it saw).
    const script = writeScript(`refresh${round}`, refreshScript(httpSessions.map((s) => s.refresh_token)))
    refreshRounds.push(await refreshCpu.measure(() => wrk(`${base}/token?grant_type=refresh_token`, { headers, seconds: Math.max(1, Math.round(seconds / ROUNDS)), connections, threads: connections, script })))
    for (let i = 0; i < httpSessions.length; i++) httpSessions[i] = await signIn()
    const mainScript = writeScript(`main-refresh${round}`, refreshScript(httpSessions.map((s) => s.refresh_token)))
    mainRefreshRounds.push(await mainRefreshCpu.measure(() => wrk(`${main.base}/token?grant_type=refresh_token`, { headers, seconds: Math.max(1, Math.round(seconds / ROUNDS)), connections, threads: connections, script: mainScript })))
    for (let i = 0; i < httpSessions.length; i++) httpSessions[i] = await signIn()
    peerRefreshRounds.push(await loop(connections, (seconds * 1000) / ROUNDS, async (i) => {
      const next = newRefreshToken()
      const row = await rotateRefreshToken(api, peerSessions[i]!.refresh_token, next, '127.0.0.1')
      if (!row) throw new Error('peer refresh failed')
      peerSessions[i]!.refresh_token = next
    }))
  }
  reportHop({ name: 'refresh', title: 'token refresh (POST /token)', statement: 'rotate' }, connections, { platform: combine(refreshRounds), main: combine(mainRefreshRounds), peer: mean(peerRefreshRounds), platformCpu: refreshCpu, mainCpu: mainRefreshCpu })

  // 3. GET /user vs the same statement.
  const token = (await signIn()).access_token
  const claims = await verifyJwt(project, token)
  const userRounds: LoadResult[] = []
  const mainUserRounds: LoadResult[] = []
  const peerUserRounds: number[] = []
  const userCpu = new CpuTime()
  const mainUserCpu = new CpuTime()
  const userHeaders = { apikey: project.anonKey, authorization: `Bearer ${token}` }
  for (let round = 0; round < ROUNDS; round++) {
    userRounds.push(await userCpu.measure(() => wrk(`${base}/user`, { headers: userHeaders, seconds: Math.max(1, Math.round(seconds / ROUNDS)), connections, threads: 1 })))
    mainUserRounds.push(await mainUserCpu.measure(() => wrk(`${main.base}/user`, { headers: userHeaders, seconds: Math.max(1, Math.round(seconds / ROUNDS)), connections, threads: 1 })))
    peerUserRounds.push(await loop(connections, (seconds * 1000) / ROUNDS, async () => {
      const row = await userWithSession(api, claims.sub as string, claims.session_id as string)
      if (!row?.session_ok) throw new Error('peer user lookup failed')
    }))
  }
  reportHop({ name: 'GET /user', title: 'GET /user', statement: 'user' }, connections, { platform: combine(userRounds), main: combine(mainUserRounds), peer: mean(peerUserRounds), platformCpu: userCpu, mainCpu: mainUserCpu })
  await main.close()
  await mainPool.end()
  await api.end()
}

/**
 * Access tokens verified per second without asking the server: ES256 with
 * the JWKS (supabase-js's getClaims(), which imports the JWK and verifies
 * through WebCrypto per call; and jose with the key set imported once) against
 * HS256 with the secret (jose, key imported once), `connections` at a time.
 */
async function benchLocalVerification(project: ProjectRecord, base: string, es256Token: string): Promise<void> {
  const jwks = (await (await fetch(`${base}/.well-known/jwks.json`)).json()) as JSONWebKeySet
  const keySet = createLocalJWKSet(jwks)
  const hs256Token = signJwt(project.jwtSecret, JSON.parse(Buffer.from(es256Token.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>)
  // Imported once, as the JWKS's key is: given raw bytes, jose would import them on every call.
  const secret = await crypto.subtle.importKey('raw', new TextEncoder().encode(project.jwtSecret), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify'])
  const supabase = createClient(base.replace(/\/auth\/v1$/, ''), project.anonKey, {
    auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
  })
  const first = await supabase.auth.getClaims(es256Token)
  if (first.error) throw new Error(`getClaims failed: ${first.error.message}`)
  const hsRounds: number[] = []
  const joseRounds: number[] = []
  const claimsRounds: number[] = []
  const ms = Math.max(500, (seconds * 1000) / ROUNDS / 3)
  const sides = {
    hs256: async () => void (await jwtVerify(hs256Token, secret, { algorithms: ['HS256'] })),
    jose: async () => void (await jwtVerify(es256Token, keySet, { algorithms: ['ES256'] })),
    getClaims: async () => {
      const { error } = await supabase.auth.getClaims(es256Token)
      if (error) throw error
    },
  }
  // Warm-up, untimed: the first round would otherwise pay for compiling each path.
  for (const side of Object.values(sides)) await loop(connections, 200, side)
  for (let round = 0; round < ROUNDS; round++) {
    hsRounds.push(await loop(connections, ms, sides.hs256))
    joseRounds.push(await loop(connections, ms, sides.jose))
    claimsRounds.push(await loop(connections, ms, sides.getClaims))
  }
  const hs = mean(hsRounds)
  const viaJose = mean(joseRounds)
  const viaClaims = mean(claimsRounds)
  const line = (name: string, rate: number) => `${name.padEnd(34)} ${rate.toFixed(0).padStart(8)} /s      ${connections} at a time`
  console.log(line('local verify HS256 (jose, secret)', hs))
  console.log(line('local verify ES256 (jose, JWKS)', viaJose))
  console.log(line('local verify ES256 (getClaims)', viaClaims))
  console.log(`ratio ES256 / HS256: ${(viaJose / hs).toFixed(2)} (jose), ${(viaClaims / hs).toFixed(2)} (getClaims)\n`)
  reportAuth('local verify ES256 (jose, JWKS) / HS256', viaJose, 'HS256 with the secret (jose)', hs)
  reportAuth('local verify ES256 (getClaims) / HS256', viaClaims, 'HS256 with the secret (jose)', hs)
}

const TOTP_PAIRS = Number(process.env.BENCH_TOTP_PAIRS ?? 3000)
const CALLBACK_FLOWS = Number(process.env.BENCH_CALLBACK_FLOWS ?? 1200)

interface TotpPair {
  userId: string
  sessionId: string
  factorId: string
  challengeId: string
  token: string
}

/**
 * `n` users, each with an aal1 session, a verified TOTP factor (one shared
 * secret: every factor keeps its own last step, so one code serves each once)
 * and an open challenge from `ip`. Written directly, as the auth worker would.
 */
async function totpPairs(project: ProjectRecord, api: pg.Pool, n: number, secret: string, ip: string): Promise<TotpPair[]> {
  const tag = crypto.randomBytes(4).toString('hex')
  const { rows } = await api.query<{ user_id: string; session_id: string; factor_id: string; challenge_id: string }>(
    `with u as (
       insert into auth.users (aud, role, email, email_confirmed_at, raw_app_meta_data, raw_user_meta_data)
       select 'authenticated', 'authenticated', 'totp-' || $1 || '-' || g || '@example.test', now(), '{"provider":"email","providers":["email"]}', '{}'
       from generate_series(1, $2) g returning id
     ), s as (insert into auth.sessions (user_id) select id from u returning id, user_id
     ), r as (insert into auth.refresh_tokens (token, user_id, session_id) select md5(random()::text), s.user_id::text, s.id from s
     ), c as (insert into auth.mfa_amr_claims (session_id, authentication_method) select id, 'password' from s
     ), f as (insert into auth.mfa_factors (user_id, friendly_name, factor_type, status, secret) select user_id, 'bench', 'totp', 'verified', $3 from s returning id, user_id
     ), ch as (insert into auth.mfa_challenges (factor_id, ip_address) select id, $4::inet from f returning id, factor_id)
     select s.user_id, s.id as session_id, f.id as factor_id, ch.id as challenge_id from s join f using (user_id) join ch on ch.factor_id = f.id`,
    [tag, n, secret, ip],
  )
  const exp = Math.floor(Date.now() / 1000) + 3600
  return Promise.all(rows.map(async (row) => ({
    userId: row.user_id,
    sessionId: row.session_id,
    factorId: row.factor_id,
    challengeId: row.challenge_id,
    token: await signJwt(project.jwtSecret, { sub: row.user_id, aud: 'authenticated', role: 'authenticated', exp, aal: 'aal1', session_id: row.session_id }),
  })))
}

/** wrk script sending one request per entry, each once (threads: 1, so one Lua state walks the list). */
function listScript(method: string, requests: Array<{ path: string; headers: Record<string, string>; body?: string }>, reportFile?: string): string {
  const lua = (value: string) => `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`
  const entries = requests.map((r) => `{ ${lua(r.path)}, { ${Object.entries(r.headers).map(([k, v]) => `[${lua(k)}] = ${lua(v)}`).join(', ')} }, ${r.body === undefined ? 'nil' : lua(r.body)} }`)
  return `
local requests = { ${entries.join(',\n')} }
local n = 0
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) bad = 0 end
function request()
  n = n + 1
  local r = requests[n] or requests[#requests]
  local headers = {}
  for k, v in pairs(r[2]) do headers[k] = v end
  return wrk.format(${lua(method)}, r[1], headers, r[3])
end
function response(status, headers, body)
  local location = headers["location"] or headers["Location"] or ""
  if status >= 400 or (status == 302 and not string.find(location, "access_token=", 1, true)) then bad = bad + 1 end
end
function done(summary, latency, requests)
  ${reportFile ? `local f = io.open(${lua(reportFile)}, "w") local total = 0 for _, t in ipairs(threads) do total = total + t:get("bad") end f:write(tostring(total)) f:close()` : ''}
end
`
}

async function benchTotp(project: ProjectRecord, base: string, api: pg.Pool): Promise<void> {
  const secret = generateSecret({ length: 20 })
  // The address the data plane sees for local connections, as a challenge records it.
  const probe = (await totpPairs(project, api, 1, secret, '127.0.0.1'))[0]!
  const challenge = await fetch(`${base}/factors/${probe.factorId}/challenge`, { method: 'POST', headers: { apikey: project.anonKey, authorization: `Bearer ${probe.token}` } })
  const { id } = (await challenge.json()) as { id: string }
  const ip = (await api.query<{ ip: string }>('select host(ip_address) as ip from auth.mfa_challenges where id = $1', [id])).rows[0]!.ip
  const basePath = new URL(base).pathname
  const rounds: LoadResult[] = []
  const peerRounds: number[] = []
  for (let round = 0; round < ROUNDS; round++) {
    const pairs = await totpPairs(project, api, TOTP_PAIRS, secret, ip)
    const code = generateSync({ secret })
    const script = writeScript(`totp${round}`, listScript('POST', pairs.map((p) => ({
      path: `${basePath}/factors/${p.factorId}/verify`,
      headers: { apikey: project.anonKey, authorization: `Bearer ${p.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ challenge_id: p.challengeId, code }),
    }))))
    rounds.push(await wrk(`${base}/factors`, { seconds: Math.max(1, Math.round(seconds / ROUNDS)), connections, threads: 1, script }))
    // The peer: the same statements and the same otplib check, on `threads` connections, no HTTP, no worker.
    const peerPairs = await totpPairs(project, api, TOTP_PAIRS, secret, ip)
    peerRounds.push(await loopOver(threads, (seconds * 1000) / ROUNDS, peerPairs, async (p) => {
      const client = await api.connect()
      try {
        await client.query('begin')
        const check = await lockFactorForVerify(client, p.userId, p.factorId, p.challengeId, ip)
        const step = totpTimeStep(check!.secret, code)
        if (step === undefined || !(await acceptTimeStep(client, p.factorId, p.challengeId, step))) throw new Error('peer verify failed')
        await upgradeSession(client, p.sessionId, p.factorId, 'totp', newRefreshToken(), ip)
        await userById(client, p.userId)
        await amrOf(client, p.sessionId)
        await deleteUnverifiedFactors(client, p.userId, 'totp')
        await client.query('commit')
      } finally {
        client.release()
      }
    }))
  }
  const verify = combine(rounds)
  const peer = mean(peerRounds)
  console.log(formatLoad('TOTP verify (POST /factors/*/verify)', verify))
  console.log(`${'plain pg + otplib: same statements'.padEnd(34)} ${peer.toFixed(0).padStart(8)} /s      on ${threads} connection(s)`)
  console.log(`ratio TOTP verify / plain pg: ${(verify.requestsPerSecond / peer).toFixed(2)}${verify.non2xx ? '  (non-2xx: raise BENCH_TOTP_PAIRS)' : ''}\n`)
  reportAuth('TOTP verify / plain pg', verify, 'plain pg + otplib: the same statements', peer)
}

/** Authorize flows through the platform and the stand-in, up to the callback URL the browser would open. */
async function callbackUrls(base: string, n: number): Promise<string[]> {
  const urls: string[] = []
  await Promise.all(Array.from({ length: 16 }, async () => {
    while (urls.length < n) {
      const authorize = await fetch(`${base}/authorize?provider=google`, { redirect: 'manual' })
      const provider = await fetch(authorize.headers.get('location')!, { redirect: 'manual' })
      urls.push(provider.headers.get('location')!)
    }
  }))
  return urls.slice(0, n)
}

async function benchCallback(base: string, google: OidcProvider): Promise<void> {
  const rounds: LoadResult[] = []
  const peerRounds: number[] = []
  let failures = 0
  const redirectUri = `${base}/callback`
  const client = new OAuth2Client({ clientId: google.client.id, clientSecret: google.client.secret, redirectUri, endpoints: { oauth2TokenUrl: google.tokenUrl } })
  const certs = (await (await fetch(google.pemCertsUrl)).json()) as Record<string, string>
  for (let round = 0; round < ROUNDS; round++) {
    google.user = { sub: `bench-${round}`, email: `bench-${round}@example.test`, email_verified: true, name: 'Bench' }
    const urls = await callbackUrls(base, CALLBACK_FLOWS)
    const report = path.join(scriptDir, `callback${round}.bad`)
    const script = writeScript(`callback${round}`, listScript('GET', urls.map((u) => ({ path: `${new URL(u).pathname}${new URL(u).search}`, headers: {} })), report))
    rounds.push(await wrk(`${base}/callback`, { seconds: Math.max(1, Math.round(seconds / ROUNDS)), connections, threads: 1, script }))
    failures += Number(fs.readFileSync(report, 'utf8'))
    // The peer: codes straight from the stand-in, exchanged and verified by the same library in-process.
    const codes: string[] = []
    await Promise.all(Array.from({ length: 16 }, async () => {
      while (codes.length < CALLBACK_FLOWS) {
        const r = await fetch(`${google.authorizationUrl}?client_id=${encodeURIComponent(google.client.id)}&redirect_uri=${encodeURIComponent(redirectUri)}&response_type=code&scope=openid`, { redirect: 'manual' })
        codes.push(new URL(r.headers.get('location')!).searchParams.get('code')!)
      }
    }))
    peerRounds.push(await loopOver(connections, (seconds * 1000) / ROUNDS, codes, async (code) => {
      const { tokens } = await client.getToken({ code, redirect_uri: redirectUri })
      await client.verifySignedJwtWithCertsAsync(tokens.id_token!, certs, google.client.id, [google.issuer])
    }))
  }
  const callback = combine(rounds)
  const peer = mean(peerRounds)
  console.log(formatLoad('Google callback (GET /callback)', callback))
  console.log(`${'google-auth-library: exchange+verify'.padEnd(34)} ${peer.toFixed(0).padStart(8)} /s      on ${connections} concurrent`)
  console.log(`ratio callback / exchange+verify: ${(callback.requestsPerSecond / peer).toFixed(2)}${failures ? `  (${failures} callbacks without a session: raise BENCH_CALLBACK_FLOWS)` : ''}`)
  reportAuth('Google callback / exchange+verify', callback, 'google-auth-library: exchange+verify', peer)
}

const ROUNDS = 3

function mean(values: number[]): number {
  return values.reduce((a, b) => a + b, 0) / values.length
}

/** Rounds of one load, as one: mean rate, worst percentiles, summed failures. */
function combine(rounds: LoadResult[]): LoadResult {
  return {
    requestsPerSecond: mean(rounds.map((r) => r.requestsPerSecond)),
    requests: rounds.reduce((a, r) => a + r.requests, 0),
    p50Ms: mean(rounds.map((r) => r.p50Ms)),
    p99Ms: Math.max(...rounds.map((r) => r.p99Ms)),
    non2xx: rounds.reduce((a, r) => a + r.non2xx, 0),
  }
}

/** Runs `step` once per item in `n` concurrent loops, for at most `ms` or until the items run out; operations per second. */
async function loopOver<T>(n: number, ms: number, items: T[], step: (item: T) => Promise<void>): Promise<number> {
  const start = Date.now()
  const end = start + ms
  let next = 0
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (Date.now() < end && next < items.length) await step(items[next++]!)
    }),
  )
  return next / ((Date.now() - start) / 1000)
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
