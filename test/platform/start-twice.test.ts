// One `baseplane start` per home: a second is refused, naming the first (its
// pid and port), and leaves the first and its PostgreSQL untouched; a start
// that was killed leaves a stale pid file that the next start takes over.
// Commands other than start never make a platform where there is none.
// (Each start here takes 2 to 3 s on a quiet machine: two of them in all.)
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t from 'tap'
import { AlreadyRunningError, lockHome } from '../../cli/home-lock.ts'
import { freePort } from '../../lib/db/embedded.ts'
import { runCli, startCli, type Served } from '../helpers/cli.ts'
import { request } from '../helpers/http.ts'

const home = fs.mkdtempSync(path.join(os.tmpdir(), 'baseplane-twice-'))
const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'baseplane-elsewhere-'))
const port = await freePort()
const env: Record<string, string> = {
  ...(process.env as Record<string, string>),
  BASEPLANE_HOME: home,
  PORT: String(port),
  BASEPLANE_EMBEDDED_PG_PORT: String(await freePort()),
  BASEPLANE_ADMIN_TOKEN: 'start-twice-admin-token-of-at-least-32-chars',
  BASEPLANE_LOG_LEVEL: 'silent',
  BASEPLANE_AUTH_THREADS: '1',
  BASEPLANE_GRAPHQL_THREADS: '1',
  BASEPLANE_PUSH_THREADS: '1',
  // Empty is unset: the embedded PostgreSQL in the home, not the test suite's server.
  DATABASE_URL: '',
}
const url = `http://127.0.0.1:${port}`
const admin = { authorization: `Bearer ${env.BASEPLANE_ADMIN_TOKEN}` }
const pidFile = path.join(home, 'baseplane.pid')
const running: Served[] = []

function postgresPid(): number | undefined {
  try {
    const pid = Number(fs.readFileSync(path.join(home, 'pgdata', 'postmaster.pid'), 'utf8').split('\n')[0])
    process.kill(pid, 0)
    return pid
  } catch {
    return undefined
  }
}

t.teardown(() => {
  for (const served of running) if (served.child.exitCode === null && served.child.signalCode === null) served.child.kill('SIGKILL')
  const postgres = postgresPid()
  if (postgres !== undefined) process.kill(postgres, 'SIGINT')
  fs.rmSync(home, { recursive: true, force: true })
  fs.rmSync(elsewhere, { recursive: true, force: true })
})

async function start(): Promise<Served> {
  const served = await startCli(['--no-demo'], env)
  running.push(served)
  return served
}

const cli = (args: string[], extra: Record<string, string> = {}) => runCli(args, { ...env, ...extra })

t.test('the pid file: taken, refused while its process lives, taken over when it is gone or is another process', async (t) => {
  const dir = path.join(elsewhere, 'lock')
  const file = path.join(dir, 'baseplane.pid')
  const lock = lockHome(dir, 8000, 'http://127.0.0.1:8000')
  t.match(JSON.parse(fs.readFileSync(file, 'utf8')), { pid: process.pid, port: 8000, url: 'http://127.0.0.1:8000' })
  lock.serving(8001, 'http://127.0.0.1:8001')
  t.match(JSON.parse(fs.readFileSync(file, 'utf8')), { pid: process.pid, port: 8001 })
  lock.release()
  t.notOk(fs.existsSync(file), 'released: gone')

  // A live process holds it: the parent of this test, as recorded with its own start time.
  const sleeper = spawn('sleep', ['30'])
  t.teardown(() => sleeper.kill('SIGKILL'))
  const started = fs.readFileSync(`/proc/${sleeper.pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[19]
  fs.writeFileSync(file, JSON.stringify({ pid: sleeper.pid, started, port: 9000, url: 'http://127.0.0.1:9000' }))
  t.throws(() => lockHome(dir, 8000, 'x'), new AlreadyRunningError(dir, { pid: sleeper.pid!, port: 9000, url: 'http://127.0.0.1:9000' }))
  t.throws(() => lockHome(dir, 8000, 'x'), { code: 'already_running' })

  // The same pid, started at another time: the pid was reused by an unrelated process.
  fs.writeFileSync(file, JSON.stringify({ pid: sleeper.pid, started: '1', port: 9000, url: 'x' }))
  lockHome(dir, 8000, 'x').release()
  // Its process is gone.
  sleeper.kill('SIGKILL')
  await new Promise((resolve) => sleeper.once('exit', resolve))
  fs.writeFileSync(file, JSON.stringify({ pid: sleeper.pid, started, port: 9000, url: 'x' }))
  lockHome(dir, 8000, 'x').release()
  // Not a pid file at all.
  fs.writeFileSync(file, 'garbage')
  const taken = lockHome(dir, 8000, 'x')
  t.match(JSON.parse(fs.readFileSync(file, 'utf8')), { pid: process.pid })
  // A file another process wrote after ours is not ours to remove.
  fs.writeFileSync(file, JSON.stringify({ pid: 1, port: 1, url: 'x' }))
  taken.release()
  t.ok(fs.existsSync(file))
})

t.test('commands other than start refuse a home without a platform, naming it and how to point at another', async (t) => {
  const empty = path.join(elsewhere, 'nothing-here')
  const message = `baseplane: no Baseplane platform in ${empty}: \`baseplane start\` creates one there; to use another, give --home DIR or BASEPLANE_HOME=DIR (or DATABASE_URL)\n`
  t.same(await cli(['projects', 'list'], { BASEPLANE_HOME: empty }), { code: 1, stdout: '', stderr: message })
  t.same(await cli(['keys', 'demo', '--home', empty]), { code: 1, stdout: '', stderr: message }, '--home stands for BASEPLANE_HOME')
  t.notOk(fs.existsSync(path.join(empty, 'pgdata')), 'no database was made there')
  const status = await cli(['status', '--json'], { BASEPLANE_HOME: empty })
  t.equal(status.code, 0, status.stderr)
  t.same(JSON.parse(status.stdout), { home: empty, database: { kind: 'embedded', data_dir: path.join(empty, 'pgdata') }, platform: false, running: null })
})

t.test('a second start on the same home is refused and the first keeps serving; a killed one is taken over', async (t) => {
  const first = await start()
  const firstPid = first.child.pid!
  const postgres = postgresPid()
  t.ok(postgres, 'the first start runs the embedded PostgreSQL')
  t.match(JSON.parse(fs.readFileSync(pidFile, 'utf8')), { pid: firstPid, port, url })

  const second = await cli(['start', '--no-demo'])
  t.same(second, {
    code: 1,
    stdout: '',
    stderr: `baseplane: Baseplane is already running on ${home}: pid ${firstPid}, port ${port} (${url}); stop it first (Ctrl-C in its terminal, or kill ${firstPid}), or give this one another home with --home DIR\n`,
  })
  t.equal(postgresPid(), postgres, 'the refused start left PostgreSQL alone')

  const created = await request<{ ref: string; base_url: string; anon_key: string }>(`${url}/platform/v1/projects`, { headers: admin, body: { name: 'Still Here' } })
  t.equal(created.status, 201, created.text)
  const served = await request(`${created.json.base_url}/graphql/v1`, { headers: { apikey: created.json.anon_key }, body: { query: '{ __typename }' } })
  t.same({ status: served.status, body: served.json }, { status: 200, body: { data: { __typename: 'Query' } } }, 'the first start answers from its database')

  const status = await cli(['status'])
  t.same(status, {
    code: 0,
    stderr: '',
    stdout: `home       ${home}\ndatabase   the embedded PostgreSQL in ${home}\nserver     running: pid ${firstPid}, port ${port} (${url})\n`,
  })

  // Another home on the same port: uWebSockets would share it (SO_REUSEPORT); refused instead.
  const other = path.join(elsewhere, 'other')
  const stranger = await cli(['start', '--no-demo'], { BASEPLANE_HOME: other })
  t.same(stranger, { code: 1, stdout: '', stderr: `baseplane: port ${port} on 127.0.0.1 is already in use by another process: stop it, or choose another port with PORT=\n` })
  t.notOk(fs.existsSync(path.join(other, 'pgdata')), 'and made no database there')
  t.notOk(fs.existsSync(path.join(other, 'baseplane.pid')), 'nor left a pid file')

  // Killed (no chance to clean up): the file names a process that is gone, and PostgreSQL runs on.
  first.child.kill('SIGKILL')
  await first.exited
  t.ok(fs.existsSync(pidFile), 'SIGKILL leaves the pid file behind')
  t.equal(postgresPid(), postgres, 'and its PostgreSQL running')
  const next = await start()
  t.match(JSON.parse(fs.readFileSync(pidFile, 'utf8')), { pid: next.child.pid, port }, 'the next start takes the stale file over')
  const listed = await request<Array<{ name: string }>>(`${url}/platform/v1/projects`, { headers: admin })
  t.same(listed.json.map((p) => p.name), ['Still Here'], 'the same platform')
  const restarted = postgresPid()
  t.ok(restarted && restarted !== postgres, 'the PostgreSQL the killed run left is restarted under the new one')
  // Supervised now: killed again, it is started again and the platform answers.
  process.kill(restarted!, 'SIGKILL')
  let again = 0
  for (let i = 0; i < 100 && again !== 200; i++) {
    await new Promise((resolve) => setTimeout(resolve, 200))
    again = (await request(`${url}/platform/v1/projects`, { headers: admin }).catch(() => ({ status: 0 }))).status
  }
  t.equal(again, 200, 'a postmaster killed after the restart is started again')

  next.child.kill('SIGTERM')
  t.same(await next.exited, { code: 0, signal: null })
  t.notOk(fs.existsSync(pidFile), 'a clean stop removes the pid file')
  t.notOk(postgresPid(), 'and stops PostgreSQL')
})
