// `npm start` as a user runs it: embedded PostgreSQL, demo project, Ctrl-C.
import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t from 'tap'
import { freePort } from '../../lib/db/embedded.ts'
import { request } from '../helpers/http.ts'

const home = fs.mkdtempSync(path.join(os.tmpdir(), 'baseplane-start-'))
t.teardown(() => fs.rmSync(home, { recursive: true, force: true }))
const port = await freePort()
const pgPort = await freePort()
const env: Record<string, string> = { ...(process.env as Record<string, string>), BASEPLANE_HOME: home, PORT: String(port), BASEPLANE_EMBEDDED_PG_PORT: String(pgPort) }
delete env.DATABASE_URL
delete env.BASEPLANE_LOG_LEVEL

interface Started {
  child: ChildProcess
  output: string
  keys: { baseUrl: string; anon: string; service: string }
}

function start(): Promise<Started> {
  // Its own process group, so a signal reaches npm and everything under it, as Ctrl-C does.
  const child = spawn('npm', ['start', '--silent'], { env, detached: true })
  let output = ''
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start did not come up:\n${output}`)), 60000)
    const onData = (chunk: Buffer) => {
      output += chunk
      if (output.includes('Press Ctrl-C to stop.')) {
        clearTimeout(timer)
        const field = (label: string) => new RegExp(`${label}\\s+(\\S+)`).exec(output)?.[1] ?? ''
        resolve({ child, output, keys: { baseUrl: field('base URL'), anon: field('anon key'), service: field('service_role key') } })
      }
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', onData)
    child.on('exit', (code) => reject(new Error(`npm start exited with ${code}:\n${output}`)))
  })
}

/** Sends Ctrl-C's SIGINT to the group; resolves once every process of the group is gone. */
async function interrupt(started: Started): Promise<boolean> {
  const exited = new Promise((resolve) => {
    started.child.removeAllListeners('exit')
    started.child.on('exit', resolve)
  })
  process.kill(-started.child.pid!, 'SIGINT')
  await exited
  for (let i = 0; i < 100; i++) {
    try {
      process.kill(-started.child.pid!, 0)
    } catch {
      return true
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  return false
}

function postgresRunning(): boolean {
  try {
    const pid = Number(fs.readFileSync(path.join(home, 'pgdata', 'postmaster.pid'), 'utf8').split('\n')[0])
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

t.test('first start creates the demo project and prints its URL and keys', async (t) => {
  const first = await start()
  t.equal(first.keys.baseUrl, `http://127.0.0.1:${port}/project/demo`)
  t.match(first.output, /^http {14}uWebSockets\.js 20\.51, native$/m, 'the banner names the HTTP engine')
  const health = await request(`${first.keys.baseUrl}/auth/v1/health`, { headers: { apikey: first.keys.anon } })
  t.equal(health.status, 200, 'the demo project is served, with auth on')
  const signInPage = await request(`http://127.0.0.1:${port}/dashboard`)
  t.match(signInPage.text, `The token is the one in <code>${path.join(home, 'admin-token')}</code>`, "the dashboard's sign-in names this home's file")
  t.ok(postgresRunning())
  t.ok(await interrupt(first), 'Ctrl-C ends every process it started')
  t.notOk(postgresRunning(), 'PostgreSQL stopped with it')

  const token = fs.readFileSync(path.join(home, 'admin-token'), 'utf8').trim()
  t.notMatch(first.output, token, 'the admin token is not printed')
  t.match(first.output, `admin token       in ${path.join(home, 'admin-token')}\n`, 'but where it is kept')

  const second = await start()
  t.same(second.keys, { baseUrl: first.keys.baseUrl, anon: '', service: '' }, 'a second start reuses the project and prints no keys')
  t.match(second.output, 'keys              baseplane keys demo\n', 'but how to read them')
  t.notMatch(second.output, first.keys.service)
  const again = await request(`${second.keys.baseUrl}/auth/v1/health`, { headers: { apikey: first.keys.anon } })
  t.equal(again.status, 200, 'with the keys of the first start')
  t.ok(await interrupt(second))
  t.notOk(postgresRunning())
})
