// npm run bench:storage — Storage ({base_url}/storage/v1) moving bytes, three
// cases (BENCH_CASES, default all three, in this order):
// - local: uploads and downloads of 100 KB and 5 MB objects through
//   supabase-js as signed-in users under Supabase's own-folder example policies
//   (select and insert on storage.objects where the first folder is the
//   caller's uid), on a node storing on local disk, against the limit: a plain
//   node:http server streaming the same bodies to files on the same disk with
//   fsync and rename, as workers/storage/local-store.ts does, and serving them
//   back with fs.createReadStream (lib/storage-limit-server.ts);
// - s3: the same against an S3 store (fauxqs's emulator in a process of its
//   own, lib/storage-s3-server.ts), the limit a node:http server streaming to
//   it with @aws-sdk/lib-storage's Upload and serving GetObject;
// - memory: N concurrent 5 MB uploads sent slowly, the node's resident memory
//   before and during, per upload; the same against the local limit's server.
// Every node is a real `baseplane start` in a process of its own
// (lib/fleet-node.ts), so its memory and CPU are its own; the limits and the S3
// store run in processes of their own too; the clients run here. Each case takes
// the two sides in turn, round by round (the first side alternating), so that
// other work on the machine falls on each alike. Every answer is checked
// (upload answered 200, downloaded bytes of the size uploaded); a wrong one ends
// the run. What a round stored is removed after it, untimed.
import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import exitHook from 'async-exit-hook'
import pg from 'pg'
import { createClient, type SupabaseClient } from '@supabase/supabase-js'
import { ControlPlane } from '../control-plane/control-plane.ts'
import { createProject } from '../control-plane/projects.ts'
import { ownerUrlOf, type ProjectRecord } from '../lib/catalogue.ts'
import { signJwt } from '../lib/jwt.ts'
import { planLimits } from '../lib/plans.ts'
import { dropCatalogue } from '../dev/db.ts'
import { startFleetNode, type FleetNode } from './lib/fleet-node.ts'
import { benchCatalogue, benchServer } from './lib/platform.ts'
import { cleanUpAll, onCleanUp, startChild, stopAll, type Child } from './lib/realtime-process.ts'
import { closedLoop, percentile, rssKb, slowUpload, type Loop } from './lib/storage-load.ts'
import type { LimitArg } from './lib/storage-limit-server.ts'
import type { S3Endpoint } from './lib/storage-s3-server.ts'
import { median } from './lib/stats.ts'
import { reportCase } from './lib/report.ts'

/** A knob from the environment: a positive number (a whole one if `whole`), else its default. */
function knob(name: string, fallback: number, whole = false): number {
  const value = Number(process.env[name] ?? fallback)
  if (!(value > 0) || (whole && !Number.isInteger(value))) throw new Error(`${name} must be a positive ${whole ? 'whole ' : ''}number`)
  return value
}

const KNOWN_CASES = ['local', 's3', 'memory'] as const
type CaseName = (typeof KNOWN_CASES)[number]
const CASES = (process.env.BENCH_CASES ?? KNOWN_CASES.join(',')).split(',').map((s) => s.trim()).filter(Boolean) as CaseName[]
for (const name of CASES) if (!KNOWN_CASES.includes(name)) throw new Error(`BENCH_CASES: ${name} is none of ${KNOWN_CASES.join(', ')}`)

const PLAN = 'business'
/** Requests in flight a side; at most the plan's requests at once per concern (more would queue on Baseplane's side only). */
const CONCURRENCY = knob('BENCH_CONCURRENCY', 8, true)
if (CONCURRENCY > planLimits(PLAN).concurrentRequests) throw new Error(`BENCH_CONCURRENCY must be at most ${planLimits(PLAN).concurrentRequests} (the ${PLAN} plan's requests at once)`)
const SECONDS = knob('BENCH_SECONDS', 3)
const ROUNDS = knob('BENCH_ROUNDS', 3, true)
const MEMORY_UPLOADS = knob('BENCH_MEMORY_UPLOADS', 32, true)
/** How long each slow upload takes to send. */
const MEMORY_SECONDS = knob('BENCH_MEMORY_SECONDS', 12)
const SIZES = [
  { label: '100 KB', bytes: 100 * 1024 },
  { label: '5 MB', bytes: 5 * 1024 * 1024 },
] as const
const BUCKET = 'bench'
const CONTENT_TYPE = 'application/octet-stream'
const MB = 1024 * 1024

// Supabase's documented example (storage/security/access-control): each user reads and uploads to the folder named after them.
const POLICIES = `
  create policy "own folder: read" on storage.objects for select to authenticated
    using (bucket_id = '${BUCKET}' and (storage.foldername(name))[1] = (select auth.uid()::text));
  create policy "own folder: upload" on storage.objects for insert to authenticated
    with check (bucket_id = '${BUCKET}' and (storage.foldername(name))[1] = (select auth.uid()::text));
`

const supabaseOptions = { auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false } }

interface User {
  sub: string
  token: string
  client: SupabaseClient
}

interface Prepared {
  record: ProjectRecord
  baseUrl: string
  admin: SupabaseClient
  users: User[]
}

async function businessProjects(catalogueUrl: string, n: number): Promise<ProjectRecord[]> {
  const controlPlane = await ControlPlane.open(catalogueUrl)
  try {
    const records: ProjectRecord[] = []
    for (let i = 0; i < n; i++) records.push(await createProject(controlPlane, { name: `storage bench ${i + 1}`, plan: PLAN }))
    return records
  } finally {
    await controlPlane.close()
  }
}

/** The bucket (private), the policies (as the project's owner) and `users` signed-in users, each a supabase-js client. */
async function prepare(node: FleetNode, record: ProjectRecord, users: number): Promise<Prepared> {
  const baseUrl = `${node.origin}/project/${record.ref}`
  const owner = new pg.Client({ connectionString: ownerUrlOf(record) })
  await owner.connect()
  try {
    await owner.query(POLICIES)
  } finally {
    await owner.end()
  }
  const admin = createClient(baseUrl, record.serviceRoleKey, supabaseOptions)
  const made = await admin.storage.createBucket(BUCKET, { public: false })
  if (made.error) throw new Error(`createBucket: ${made.error.message}`)
  return {
    record,
    baseUrl,
    admin,
    users: Array.from({ length: users }, () => {
      const sub = crypto.randomUUID()
      // A user's access token as the auth worker signs it (its role, audience and sub are what the policies read).
      const token = signJwt(record.jwtSecret, { aud: 'authenticated', role: 'authenticated', sub, exp: Math.floor(Date.now() / 1000) + 3600 })
      const client = createClient(baseUrl, record.anonKey, { ...supabaseOptions, global: { headers: { Authorization: `Bearer ${token}` } } })
      return { sub, token, client }
    }),
  }
}

/** One side of a comparison: what a worker's upload and download are, and how a round's objects go. */
interface Side {
  name: string
  keyOf(worker: number, round: number, n: number): string
  upload(worker: number, key: string, body: Body): Promise<void>
  /** The bytes downloaded. */
  download(worker: number, key: string): Promise<number>
  clear(keys: string[]): Promise<void>
}

function baseplaneSide(project: Prepared): Side {
  return {
    name: 'Baseplane',
    keyOf: (worker, round, n) => `${project.users[worker]!.sub}/r${round}-${n}.bin`,
    async upload(worker, key, body) {
      const { error } = await project.users[worker]!.client.storage.from(BUCKET).upload(key, body, { contentType: CONTENT_TYPE })
      if (error) throw new Error(`upload ${key}: ${error.message}`)
    },
    async download(worker, key) {
      const { data, error } = await project.users[worker]!.client.storage.from(BUCKET).download(key)
      if (error) throw new Error(`download ${key}: ${error.message}`)
      return data.size
    },
    async clear(keys) {
      for (let next = 0; next < keys.length; next += 500) {
        const { error } = await project.admin.storage.from(BUCKET).remove(keys.slice(next, next + 500))
        if (error) throw new Error(`remove: ${error.message}`)
      }
    },
  }
}

/** The limit's requests: what supabase-js sends for the same upload and download (fetch, the same headers and body), to the plain server. */
function limitSide(origin: string): Side {
  return {
    name: 'limit',
    keyOf: (worker, round, n) => `w${worker}/r${round}-${n}.bin`,
    async upload(_worker, key, body) {
      const answer = await fetch(`${origin}/o/${key}`, { method: 'POST', body, headers: { 'content-type': CONTENT_TYPE, 'cache-control': 'max-age=3600', 'x-upsert': 'false' } })
      if (answer.status !== 200) throw new Error(`limit upload ${key}: ${answer.status} ${await answer.text()}`)
      await answer.json()
    },
    async download(_worker, key) {
      const answer = await fetch(`${origin}/o/${key}`)
      if (answer.status !== 200) throw new Error(`limit download ${key}: ${answer.status} ${await answer.text()}`)
      return (await answer.blob()).size
    },
    async clear() {
      const answer = await fetch(`${origin}/clear`, { method: 'POST' })
      if (answer.status !== 200) throw new Error(`limit clear: ${answer.status}`)
    },
  }
}

type Op = 'upload' | 'download'

/** An object's bytes: a Buffer, as a Node app hands supabase-js a file it read (sent as the raw body, not a form). */
type Body = Buffer<ArrayBuffer>
/** `bytes` random bytes in memory of their own (randomBytes pools only small sizes). */
const bodyOf = (bytes: number) => crypto.randomBytes(bytes) as Body
type Runs = Record<Op, Loop[]>

/** One round of a side at one size: uploads for SECONDS, then downloads of what was uploaded for SECONDS, then removal. */
async function round(side: Side, runs: Runs, body: Body, r: number, seconds = SECONDS): Promise<void> {
  const keys: string[][] = Array.from({ length: CONCURRENCY }, () => [])
  runs.upload.push(
    await closedLoop(CONCURRENCY, seconds, async (worker, n) => {
      const key = side.keyOf(worker, r, n)
      await side.upload(worker, key, body)
      keys[worker]!.push(key)
      return body.byteLength
    }),
  )
  runs.download.push(
    await closedLoop(CONCURRENCY, seconds, async (worker, n) => {
      const own = keys[worker]!
      const key = own[n % own.length]!
      const got = await side.download(worker, key)
      if (got !== body.byteLength) throw new Error(`${side.name} download ${key}: ${got} bytes, ${body.byteLength} uploaded`)
      return got
    }),
  )
  await side.clear(keys.flat())
}

const mbPerSecond = (loop: Loop) => loop.bytes / MB / loop.seconds
const perSecond = (loop: Loop) => loop.count / loop.seconds
const fixed = (value: number, width: number, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : '-').padStart(width)

function printSide(name: string, runs: Loop[]): void {
  const latencies = runs.flatMap((run) => run.latenciesMs)
  console.log(
    `    ${name.padEnd(10)}${fixed(median(runs.map(mbPerSecond)), 9)}${fixed(median(runs.map(perSecond)), 9)}${fixed(percentile(latencies, 0.5), 9)}${fixed(percentile(latencies, 0.99), 9)}${String(latencies.length).padStart(9)}` +
      `   (MB/s by round: ${runs.map((run) => mbPerSecond(run).toFixed(1)).join(', ')})`,
  )
}

/** A side's figures for the report: medians of the rounds, latencies over all of them. */
function figuresOf(runs: Loop[]): Record<string, number> {
  const latencies = runs.flatMap((run) => run.latenciesMs)
  return {
    mbPerSecond: median(runs.map(mbPerSecond)),
    requestsPerSecond: median(runs.map(perSecond)),
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    requests: latencies.length,
  }
}

/** The comparison of one backend: both sizes, both operations, ROUNDS rounds of each side. `backend` names it in the report. */
async function compare(title: string, baseplane: Side, limit: Side, backend: string): Promise<void> {
  console.log(`\n${title}: ${CONCURRENCY} requests in flight a side, ${ROUNDS} rounds of ${SECONDS} s an operation a side`)
  for (const size of SIZES) {
    const body = bodyOf(size.bytes)
    const results = new Map<Side, Runs>([baseplane, limit].map((side) => [side, { upload: [], download: [] }]))
    // Untimed: a first round of each warms connections, pools and the JIT.
    for (const side of [baseplane, limit]) await round(side, { upload: [], download: [] }, body, 99)
    for (let r = 0; r < ROUNDS; r++) {
      for (const side of r % 2 === 0 ? [baseplane, limit] : [limit, baseplane]) await round(side, results.get(side)!, body, r)
    }
    console.log(`  ${`${size.label} objects`.padEnd(20)}MB/s    req/s   p50 ms   p99 ms requests`)
    for (const op of ['upload', 'download'] as const) {
      console.log(`  ${op}`)
      const ours = results.get(baseplane)![op]
      const theirs = results.get(limit)![op]
      printSide(baseplane.name, ours)
      printSide('limit', theirs)
      const ratios = ours.map((run, i) => mbPerSecond(run) / mbPerSecond(theirs[i]!))
      console.log(`    ratio Baseplane/limit ${median(ratios).toFixed(2)} (${ratios.map((x) => x.toFixed(2)).join(', ')}) (goal >= 0.7)`)
      reportCase({
        suite: 'storage', case: `${backend}, ${size.label} ${op}`, figures: figuresOf(ours), peer: `the limit: plain node:http on ${backend}`, peerFigures: figuresOf(theirs),
        ratio: median(ratios), what: 'MB/s', runs: ratios, goal: { atLeast: 0.7 },
      })
    }
  }
}

async function startLimit(arg: LimitArg): Promise<{ child: Child; origin: string }> {
  const child = startChild(new URL('./lib/storage-limit-server.ts', import.meta.url), arg)
  const { origin } = await child.next<{ type: 'serving'; origin: string }>('serving')
  return { child, origin }
}

// Errors only reach the log at info; a node logs little else per request.
const NODE_ENV = { BASEPLANE_LOG_LEVEL: 'info' }

async function runBackend(serverUrl: string, kind: 'local' | 's3'): Promise<void> {
  const stops: Array<() => Promise<void>> = []
  try {
    const catalogue = await benchCatalogue(serverUrl)
    stops.push(onCleanUp(() => dropCatalogue(serverUrl, catalogue)))
    const [record] = await businessProjects(catalogue, 1)
    let env: Record<string, string> = NODE_ENV
    let limitArg: LimitArg
    let title: string
    if (kind === 'local') {
      const root = fs.mkdtempSync(path.join(os.tmpdir(), 'bp-bench-storage-limit-'))
      stops.push(onCleanUp(async () => fs.rmSync(root, { recursive: true, force: true })))
      limitArg = { kind: 'local', root }
      title = `local disk (${os.tmpdir()})`
    } else {
      const s3 = startChild(new URL('./lib/storage-s3-server.ts', import.meta.url), { bucket: `bench-${crypto.randomBytes(4).toString('hex')}` })
      stops.push(onCleanUp(() => s3.stop()))
      const { store } = await s3.next<{ type: 'serving'; store: S3Endpoint }>('serving')
      env = {
        ...NODE_ENV,
        BASEPLANE_STORAGE_BACKEND: 's3',
        BASEPLANE_STORAGE_S3_ENDPOINT: store.endpoint,
        BASEPLANE_STORAGE_S3_REGION: store.region,
        BASEPLANE_STORAGE_S3_BUCKET: store.bucket,
        BASEPLANE_STORAGE_S3_ACCESS_KEY_ID: store.accessKeyId,
        BASEPLANE_STORAGE_S3_SECRET_ACCESS_KEY: store.secretAccessKey,
        BASEPLANE_STORAGE_S3_FORCE_PATH_STYLE: 'true',
      }
      limitArg = { kind: 's3', store, prefix: 'limit/' }
      title = 'S3 (fauxqs, in memory, its own process)'
    }
    const node = await startFleetNode(`storage-${kind}`, catalogue, env)
    stops.push(onCleanUp(() => node.stop()))
    const limit = await startLimit(limitArg)
    stops.push(onCleanUp(() => limit.child.stop()))
    const project = await prepare(node, record!, CONCURRENCY)
    await compare(title, baseplaneSide(project), limitSide(limit.origin), kind === 'local' ? 'local disk' : 'S3 (fauxqs)')
  } finally {
    for (const stop of stops.reverse()) await stop()
  }
}

interface Sampled {
  beforeKb: number
  /** The most resident memory sampled while every upload was under way. */
  peakKb: number
  /** Uploads within 1 MB of the furthest one at the peak's sample: those being read rather than held back (a waiting upload stops once the read-ahead and the socket's buffers are full). */
  streamingAtPeak: number
  seconds: number
}

/** N slow uploads at once, the server process's RSS sampled before (idle) and every 100 ms while none has finished. */
async function slowUploads(pid: number, uploads: Array<{ url: URL; headers: Record<string, string> }>): Promise<Sampled> {
  const size = SIZES[1].bytes
  const chunkBytes = 64 * 1024
  const everyMs = (MEMORY_SECONDS * 1000) / (size / chunkBytes)
  const chunk = crypto.randomBytes(chunkBytes)
  const before: number[] = []
  for (let i = 0; i < 10; i++) {
    before.push(rssKb(pid))
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  const sent = new Array<number>(uploads.length).fill(0)
  let finished = 0
  let peakKb = 0
  let streamingAtPeak = 0
  const timer = setInterval(() => {
    if (finished > 0) return
    const now = rssKb(pid)
    if (now > peakKb) {
      peakKb = now
      const furthest = Math.max(...sent)
      streamingAtPeak = sent.filter((bytes) => bytes > furthest - MB).length
    }
  }, 100)
  const started = performance.now()
  try {
    await Promise.all(
      uploads.map(async (upload, i) => {
        const answer = await slowUpload({ ...upload, size, chunkBytes, everyMs, onSent: (bytes) => (sent[i] = bytes) }, chunk)
        finished++
        if (answer.status !== 200) throw new Error(`slow upload ${upload.url.pathname}: ${answer.status} ${answer.body}`)
      }),
    )
  } finally {
    clearInterval(timer)
  }
  return { beforeKb: median(before), peakKb, streamingAtPeak, seconds: (performance.now() - started) / 1000 }
}

function printMemory(name: string, sampled: Sampled): void {
  const perUpload = (sampled.peakKb - sampled.beforeKb) / MEMORY_UPLOADS
  console.log(
    `  ${name.padEnd(10)} RSS before ${(sampled.beforeKb / 1024).toFixed(1)} MB, during ${(sampled.peakKb / 1024).toFixed(1)} MB: ${perUpload.toFixed(0)} KB an upload ` +
      `(${sampled.streamingAtPeak} of ${MEMORY_UPLOADS} were within 1 MB of the furthest at the peak; all answered in ${sampled.seconds.toFixed(1)} s)`,
  )
}

async function runMemory(serverUrl: string): Promise<void> {
  const perProject = planLimits(PLAN).concurrentRequests
  const projects = Math.ceil(MEMORY_UPLOADS / perProject)
  console.log(
    `\nmemory: ${MEMORY_UPLOADS} concurrent 5 MB uploads (raw bodies, as supabase-js sends a Buffer) sent slowly (64 KB every ${((MEMORY_SECONDS * 1000) / 80).toFixed(0)} ms, ` +
      `${MEMORY_SECONDS} s each), as ${MEMORY_UPLOADS} users of ${projects} ${PLAN} projects (${perProject} requests at once each), local disk; server process RSS before and at its peak while all are under way`,
  )
  const stops: Array<() => Promise<void>> = []
  try {
    const catalogue = await benchCatalogue(serverUrl)
    stops.push(onCleanUp(() => dropCatalogue(serverUrl, catalogue)))
    const records = await businessProjects(catalogue, projects)
    const node = await startFleetNode('storage-memory', catalogue, NODE_ENV)
    stops.push(onCleanUp(() => node.stop()))
    const prepared: Prepared[] = []
    for (const record of records) prepared.push(await prepare(node, record, perProject))
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'bp-bench-storage-limit-'))
    stops.push(onCleanUp(async () => fs.rmSync(root, { recursive: true, force: true })))
    const limit = await startLimit({ kind: 'local', root })
    stops.push(onCleanUp(() => limit.child.stop()))

    // Warmed first (threads, pools, policies, JIT) with a second of 100 KB uploads and downloads by every user, then left to
    // settle. Small ones: full-speed 5 MB uploads would leave the heaps grown, and the slow uploads would fit in what they left.
    const body = bodyOf(SIZES[0].bytes)
    for (const side of [...prepared.map(baseplaneSide), limitSide(limit.origin)]) await round(side, { upload: [], download: [] }, body, 99, 1)
    await new Promise((resolve) => setTimeout(resolve, 3000))

    const users = prepared.flatMap((project) => project.users.map((user) => ({ project, user })))
    const baseplane = await slowUploads(
      node.pid,
      users.slice(0, MEMORY_UPLOADS).map(({ project, user }) => ({
        url: new URL(`${project.baseUrl}/storage/v1/object/${BUCKET}/${user.sub}/slow.bin`),
        // What supabase-js sends with a Buffer body.
        headers: { apikey: project.record.anonKey, authorization: `Bearer ${user.token}`, 'content-type': CONTENT_TYPE, 'cache-control': 'max-age=3600', 'x-upsert': 'false' },
      })),
    )
    const plain = await slowUploads(
      limit.child.pid,
      Array.from({ length: MEMORY_UPLOADS }, (_, i) => ({ url: new URL(`${limit.origin}/o/slow/${i}.bin`), headers: { 'content-type': CONTENT_TYPE } })),
    )
    printMemory('Baseplane', baseplane)
    printMemory('limit', plain)
  } finally {
    for (const stop of stops.reverse()) await stop()
  }
}

// A run cut short (Ctrl-C, a kill) still ends its processes and its databases.
let interrupted: Promise<never> | undefined
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    interrupted ??= (async () => {
      stopAll()
      await cleanUpAll()
      process.exit(130)
    })()
  })
}

console.log(`storage benchmark: ${CASES.join(', ')}; Node ${process.version}, ${os.cpus().length} CPUs, load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`)
const started = performance.now()
try {
  const server = await benchServer()
  for (const signal of ['SIGINT', 'SIGTERM'] as const) if (exitHook.hookedEvents().includes(signal)) exitHook.unhookEvent(signal)
  const stopServer = onCleanUp(() => server.stop())
  if (CASES.includes('local')) await runBackend(server.url, 'local')
  if (CASES.includes('s3')) await runBackend(server.url, 's3')
  if (CASES.includes('memory')) await runMemory(server.url)
  await stopServer()
  console.log(`\n${((performance.now() - started) / 1000).toFixed(0)} s in all; load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`)
} catch (error) {
  if (interrupted) await interrupted
  throw error
} finally {
  if (!interrupted) await cleanUpAll()
}
