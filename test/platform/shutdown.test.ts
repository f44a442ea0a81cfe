// `baseplane start` told to stop (SIGTERM, as a process manager does) while
// requests are in flight: it stops accepting, answers them all, refuses what
// arrives on kept-alive connections meanwhile, stops everything and exits 0.
import { spawn } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import t from 'tap'
import { ownerUrlOf } from '../../lib/catalogue.ts'
import { freePort } from '../../lib/db/embedded.ts'
import { adminQuery, serverUrl, withDatabase } from '../helpers/db.ts'
import { request, type Reply } from '../helpers/http.ts'
import { catalogueDatabase, dropCatalogue, startTestPlatform } from '../helpers/platform.ts'

// Starting compiles TypeScript and migrates a catalogue: slow on a loaded machine, never this slow.
const START_TIMEOUT_MS = 60_000
const SIGNUPS = 16

const catalogueUrl = await catalogueDatabase(t)
const home = fs.mkdtempSync(path.join(os.tmpdir(), 'baseplane-shutdown-'))
t.teardown(async () => {
  await dropCatalogue(catalogueUrl)
  fs.rmSync(home, { recursive: true, force: true })
})
const port = await freePort()
const origin = `http://127.0.0.1:${port}`
const adminToken = crypto.randomBytes(24).toString('hex')

interface Started {
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  stdout: () => string
  stderr: () => string
  /** Resolves when stderr has a log line with this message. */
  logged(message: string): Promise<void>
  kill(signal: NodeJS.Signals): void
}

function start(): Promise<Started> {
  const child = spawn(process.execPath, ['bin/baseplane.mjs', 'start', '--no-demo'], {
    env: {
      ...process.env,
      DATABASE_URL: catalogueUrl,
      BASEPLANE_HOME: home,
      PORT: String(port),
      BASEPLANE_ADMIN_TOKEN: adminToken,
      BASEPLANE_LOG_LEVEL: 'info',
      // One auth thread: the sign-ups' bcrypt hashes run one after another, so they are surely still in flight when the signal comes.
      BASEPLANE_AUTH_THREADS: '1',
      BASEPLANE_GRAPHQL_THREADS: '1',
      BASEPLANE_PUSH_THREADS: '1',
    },
  })
  let stdout = ''
  let stderr = ''
  const watchers: Array<{ message: string; resolve: () => void }> = []
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk))
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk
    for (const watcher of watchers) if (stderr.includes(`"message":"${watcher.message}"`)) watcher.resolve()
  })
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })))
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  })
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`baseplane start did not come up:\n${stdout}\n${stderr}`)), START_TIMEOUT_MS)
    void exited.then(({ code }) => reject(new Error(`baseplane start exited with ${code}:\n${stdout}\n${stderr}`)))
    child.stdout.on('data', () => {
      if (!stdout.includes('Press Ctrl-C to stop.')) return
      clearTimeout(timer)
      resolve({
        exited,
        stdout: () => stdout,
        stderr: () => stderr,
        logged: (message) => new Promise((done) => watchers.push({ message, resolve: done })),
        kill: (signal) => child.kill(signal),
      })
    })
  })
}

/** A request on the given agent's socket (http.request through the helper would pick the global agent). */
function onAgent(agent: http.Agent, url: string): Promise<Reply<Record<string, unknown>>> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent }, (res) => {
        let text = ''
        res.on('data', (chunk: Buffer) => (text += chunk))
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text, json: JSON.parse(text) as Record<string, unknown> }))
      })
      .on('error', reject)
  })
}

t.test('SIGTERM with sign-ups in flight: all answered, then a clean exit', async (t) => {
  const started = await start()
  const admin = { authorization: `Bearer ${adminToken}` }
  const created = await request<{ ref: string; anon_key: string; base_url: string }>(`${origin}/platform/v1/projects`, { headers: admin, body: { name: 'Drain' } })
  t.equal(created.status, 201, 'the admin API creates the project')
  const { ref, anon_key: anonKey, base_url: baseUrl } = created.json
  const enabled = await request(`${origin}/platform/v1/projects/${ref}/products/auth`, { method: 'PUT', headers: admin })
  t.equal(enabled.status, 200, 'and turns auth on')

  // A kept-alive connection opened before the signal: the drain must not serve new work on it.
  const keptAlive = new http.Agent({ keepAlive: true, maxSockets: 1 })
  t.teardown(() => keptAlive.destroy())
  const before = await onAgent(keptAlive, `${origin}/health`)
  t.same({ status: before.status, body: before.json }, { status: 200, body: { status: 'ok', version: '0.6.0' } })

  let stoppingSeen = false
  let answeredAfterStopping = 0
  const sent: Array<Promise<void>> = []
  const signups = Array.from({ length: SIGNUPS }, (_, i) => {
    let written = () => {}
    sent.push(new Promise<void>((resolve) => (written = resolve)))
    return request<{ id?: string; email?: string }>(`${baseUrl}/auth/v1/signup`, {
      headers: { apikey: anonKey },
      body: { email: `drain${i}@example.test`, password: 'a long enough password' },
      sent: written,
    }).then((reply) => {
      if (stoppingSeen) answeredAfterStopping++
      return reply
    })
  })
  // A request on a new connection, sent once every sign-up was written out, answered:
  // the server has accepted and read the sign-ups' connections by then (a loaded
  // machine may otherwise still be writing one when the signal comes).
  await Promise.all(sent)
  const seen = await request(`${origin}/health`)
  t.equal(seen.status, 200)
  const stopping = started.logged('stopping: finishing the requests in flight')
  started.kill('SIGTERM')
  await stopping
  stoppingSeen = true

  const refused = await onAgent(keptAlive, `${origin}/health`)
  t.same(
    { status: refused.status, body: refused.json, retryAfter: refused.headers['retry-after'], connection: refused.headers.connection },
    {
      status: 503,
      body: { code: 'service_unavailable', message: 'This server is stopping; send the request again on a new connection' },
      retryAfter: '1',
      connection: 'close',
    },
    'a request on a kept-alive connection during the drain is refused and the connection closed',
  )

  const replies = await Promise.all(signups)
  t.same(
    replies.map((reply) => ({ status: reply.status, email: reply.json.email })),
    Array.from({ length: SIGNUPS }, (_, i) => ({ status: 200, email: `drain${i}@example.test` })),
    'every sign-up in flight was answered',
  )
  t.ok(answeredAfterStopping > 0, `${answeredAfterStopping} sign-ups were answered after the stop began`)

  const exit = await started.exited
  t.same(exit, { code: 0, signal: null }, 'exits 0 after a requested stop', { stderr: started.stderr() })
  t.match(started.stdout(), /Baseplane stopped\.\n$/)
  t.notMatch(started.stderr(), /"level":"error"/, 'no error was logged while stopping')
  await t.rejects(onAgent(new http.Agent(), `${origin}/health`), { code: 'ECONNREFUSED' }, 'nothing listens any more')

  const [{ db_name: dbName }] = (await adminQuery<{ db_name: string }>(catalogueUrl, 'select db_name from baseplane.projects where ref = $1', [ref])).rows as [{ db_name: string }]
  const users = await adminQuery<{ email: string }>(withDatabase(await serverUrl(), dbName), 'select email from auth.users order by email')
  t.equal(users.rows.length, SIGNUPS, 'each answered sign-up was committed')
})

t.test('SIGINT (Ctrl-C) stops it the same way, with exit code 0', async (t) => {
  const started = await start()
  started.kill('SIGINT')
  t.same(await started.exited, { code: 0, signal: null }, 'exits 0', { stderr: started.stderr() })
  t.match(started.stderr(), /"message":"stopped","signal":"SIGINT"/)
  await t.rejects(onAgent(new http.Agent(), `${origin}/health`), { code: 'ECONNREFUSED' })
})

t.test('the drain is bounded: a request still running after the grace is cut', async (t) => {
  const platform = await startTestPlatform(t)
  const project = await platform.createProject({ name: 'slow' })
  const owner = new pg.Client({ connectionString: ownerUrlOf(project.record) })
  await owner.connect()
  await owner.query('create function nap() returns int language sql stable as $$ select pg_sleep(2); select 1 $$')
  await owner.end()

  const nap = request(`${project.baseUrl}/graphql/v1`, { headers: { apikey: project.anonKey }, body: { query: '{ nap }' } })
  nap.catch(() => {})
  // In flight for sure: its backend sleeps in the project's database.
  for (;;) {
    const { rows } = await adminQuery<{ n: number }>(
      await serverUrl(),
      "select count(*)::int as n from pg_stat_activity where datname = $1 and wait_event = 'PgSleep'",
      [project.record.dbName],
    )
    if (rows[0]!.n > 0) break
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  await platform.platform.stop(300)
  // Had the stop waited for the 2 s nap, the request would have been answered 200.
  await t.rejects(nap, { message: /socket hang up|ECONNRESET/ }, 'the request was cut when the grace ran out')
})
