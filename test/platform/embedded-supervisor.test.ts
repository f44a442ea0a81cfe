// The embedded PostgreSQL this process started is supervised: killed, it comes
// back by itself (its data intact), with a wait that doubles while it keeps
// dying; stopped on purpose, it stays stopped.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import t from 'tap'
import { freePort, startEmbedded } from '../../lib/db/embedded.ts'
import { setLogLevel } from '../../lib/log.ts'

// Crash recovery and a restart take a second or two; on a loaded 2-core machine far less than this.
const BACK_WITHIN_MS = 30_000

const home = fs.mkdtempSync(path.join(os.tmpdir(), 'baseplane-supervised-'))
const port = await freePort()

// The supervisor's log lines, as an operator reads them on stderr.
const logged: Array<Record<string, unknown>> = []
const write = process.stderr.write.bind(process.stderr)
process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
  for (const line of String(chunk).split('\n')) {
    if (line.startsWith('{"time"')) logged.push(JSON.parse(line) as Record<string, unknown>)
  }
  return (write as (...args: unknown[]) => boolean)(chunk, ...rest)
}) as typeof process.stderr.write
setLogLevel('info')

const server = await startEmbedded(home, port, true)
t.teardown(async () => {
  await server.stop()
  process.stderr.write = write
  fs.rmSync(home, { recursive: true, force: true })
})

function postmasterPid(): number | undefined {
  try {
    return Number(fs.readFileSync(path.join(home, 'pgdata', 'postmaster.pid'), 'utf8').split('\n')[0])
  } catch {
    return undefined
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

async function query(sql: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: server.url, connectionTimeoutMillis: 2000 })
  client.on('error', () => {})
  try {
    await client.connect()
    return await client.query(sql)
  } finally {
    await client.end().catch(() => {})
  }
}

/** Waits for a postmaster other than `old` that answers; its pid, or undefined after the bound. */
async function backAfter(old: number): Promise<number | undefined> {
  const deadline = Date.now() + BACK_WITHIN_MS
  while (Date.now() < deadline) {
    const pid = postmasterPid()
    if (pid !== undefined && pid !== old && (await query('select 1').then(() => true, () => false))) return pid
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return undefined
}

const linesAbout = (message: string) => logged.filter((line) => line.message === message)

t.test('a postmaster killed with SIGKILL is started again and answers, its data intact', async (t) => {
  await query('create table kept (n int); insert into kept values (1)')
  // A session open at the kill, as the platform's pools have: its backend outlives the postmaster for a moment.
  const session = new pg.Client({ connectionString: server.url })
  session.on('error', () => {})
  await session.connect()
  const first = postmasterPid()!
  process.kill(first, 'SIGKILL')
  const second = await backAfter(first)
  t.ok(second, 'a new postmaster answers')
  t.same((await query('select n from kept')).rows, [{ n: 1 }], 'committed data survived')
  await session.end().catch(() => {})

  const death = linesAbout('embedded PostgreSQL exited unexpectedly; starting it again')
  t.equal(death.length, 1)
  t.match(death[0], { level: 'error', pid: first, code: null, signal: 'SIGKILL', restartInMs: 500, port, dataDir: path.join(home, 'pgdata') })
  t.match(linesAbout('embedded PostgreSQL started again').at(-1), { level: 'info', pid: second, port })

  // Dying again soon after its restart: the next wait is longer.
  process.kill(second!, 'SIGKILL')
  const third = await backAfter(second!)
  t.ok(third, 'it comes back again')
  const deaths = linesAbout('embedded PostgreSQL exited unexpectedly; starting it again')
  t.equal(deaths.length, 2)
  t.match(deaths[1], { pid: second, signal: 'SIGKILL' })
  t.ok((deaths[1]!.restartInMs as number) >= 1000, `the wait doubled (${String(deaths[1]!.restartInMs)} ms)`)
})

t.test('a second server on the same port fails with what PostgreSQL said', async (t) => {
  const other = fs.mkdtempSync(path.join(os.tmpdir(), 'baseplane-supervised-other-'))
  t.teardown(() => fs.rmSync(other, { recursive: true, force: true }))
  await t.rejects(startEmbedded(other, port, true), {
    message: new RegExp(`^embedded PostgreSQL \\(data in ${path.join(other, 'pgdata')}\\) did not start: .*(could not bind|could not create any TCP/IP sockets)`),
  })
})

t.test('stop() on purpose is not a death: nothing starts it again', async (t) => {
  const pid = postmasterPid()!
  const deathsBefore = linesAbout('embedded PostgreSQL exited unexpectedly; starting it again').length
  await server.stop()
  t.notOk(alive(pid), 'the postmaster is gone')
  // Longer than any restart wait so far (0.5, 1 s; 2 s would be next): a restart would have happened by then.
  await new Promise((resolve) => setTimeout(resolve, 3000))
  t.equal(postmasterPid(), undefined, 'no postmaster.pid: nothing was started')
  await t.rejects(query('select 1'), { code: 'ECONNREFUSED' })
  t.equal(linesAbout('embedded PostgreSQL exited unexpectedly; starting it again').length, deathsBefore, 'no death was logged')
})
