// Stopping as a fleet needs it (issue 24 item 6): with BASEPLANE_UNREADY_MS,
// SIGTERM first turns /health to 503 while requests are still answered, so a
// balancer takes the node out before its listener closes; and a stop asked for
// while the platform is still starting waits for the start, then drains and
// exits 0 instead of dying half-started.
import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t from 'tap'
import { freePort } from '../../lib/db/embedded.ts'
import { startCli } from '../helpers/cli.ts'
import { request } from '../helpers/http.ts'

const ROOT = path.resolve(import.meta.dirname, '../..')
const MAIN = path.join(ROOT, 'dist/cli/main.js')

async function environment(t: { teardown(fn: () => void): void }, extra: Record<string, string> = {}) {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'baseplane-stop-'))
  t.teardown(() => fs.rmSync(home, { recursive: true, force: true }))
  const port = await freePort()
  const env: Record<string, string> = { ...(process.env as Record<string, string>), BASEPLANE_HOME: home, PORT: String(port), BASEPLANE_EMBEDDED_PG_PORT: String(await freePort()), ...extra }
  delete env.DATABASE_URL
  delete env.BASEPLANE_LOG_LEVEL
  return { home, port, env }
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => child.on('exit', (code) => resolve(code)))
}

function postgresRunning(home: string): boolean {
  try {
    const pid = Number(fs.readFileSync(path.join(home, 'pgdata', 'postmaster.pid'), 'utf8').split('\n')[0])
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

t.test('SIGTERM while the platform starts: it finishes starting, then stops cleanly', async (t) => {
  const { home, env } = await environment(t)
  const child = spawn(process.execPath, [MAIN, 'start'], { env })
  let output = ''
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk))
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk))
  const done = exited(child)
  // Past loading the command (about 0.2 s, more on a loaded machine), inside the embedded PostgreSQL's start.
  const deadline = Date.now() + 30000
  while (!fs.existsSync(path.join(home, 'pgdata')) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
  t.ok(fs.existsSync(path.join(home, 'pgdata')), 'the embedded PostgreSQL is being made')
  t.notOk(output.includes('Press Ctrl-C to stop.'), 'still starting when the signal comes')
  child.kill('SIGTERM')
  const code = await done
  t.equal(code, 0, 'exits 0')
  if (code !== 0) t.comment(output)
  t.match(output, '"message":"stopped"')
  t.notOk(postgresRunning(home), 'no PostgreSQL left behind')
})

t.test('BASEPLANE_UNREADY_MS: /health says 503 stopping while requests are still answered, then the drain', async (t) => {
  const { port, env } = await environment(t, { BASEPLANE_UNREADY_MS: '2000' })
  const served = await startCli([], env)
  const output = served.output()
  const base = /base URL\s+(\S+)/.exec(output)![1]!
  const anon = /anon key\s+(\S+)/.exec(output)![1]!
  const origin = `http://127.0.0.1:${port}`
  t.equal((await request(`${origin}/health`)).status, 200, 'ready before the signal')
  const signalled = Date.now()
  served.child.kill('SIGTERM')
  await new Promise((resolve) => setTimeout(resolve, 300))
  const health = await request<{ status: string }>(`${origin}/health`)
  t.equal(health.status, 503, '/health turns 503 at once')
  t.equal(health.json.status, 'stopping')
  t.ok(Number(health.headers['retry-after']) > 0, 'with Retry-After')
  const project = await request(`${base}/auth/v1/settings`, { headers: { apikey: anon } })
  t.equal(project.status, 200, 'requests are still answered meanwhile')
  t.equal((await served.exited).code, 0, 'then it drains and exits 0')
  t.ok(Date.now() - signalled >= 2000, 'not before the unready time')
})
