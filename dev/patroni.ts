// A Patroni-managed PostgreSQL 15 pair behind HAProxy, as a provider runs one
// (Debian's patroni, etcd-server, haproxy and postgresql-15), for the failover
// tests and bench:fleet's failover case: one etcd, two Patroni nodes and one
// HAProxy that routes to the leader, each a child process on free loopback
// ports with every file in one folder of its own, run as the `postgres` OS
// user when this process is root (PostgreSQL refuses to run as root). The
// leader's TTL is short so a failover takes seconds, not half a minute.
import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import pg from 'pg'
import { freePort } from '../lib/db/embedded.ts'
import { acceptsConnections } from './accepts.ts'

/** Where Debian's postgresql-15 puts its programs. */
export const PG15_BIN = '/usr/lib/postgresql/15/bin'

/**
 * The settings that bound the outage (docs/fleet.md, "Project servers on Patroni behind HAProxy").
 * Patroni: the leader's key lives `ttl` s unless renewed; each node looks every `loop_wait` s;
 * `retry_timeout` bounds a DCS or PostgreSQL call; loop_wait + 2 x retry_timeout must not pass ttl.
 * HAProxy: a check every `inter`, `fall` failures take a server out, `rise` successes put one in.
 */
export const HA_SETTINGS = { ttl: 10, loopWait: 1, retryTimeout: 4, inter: '1s', fall: 2, rise: 1 } as const

function binary(name: string, dirs: string[]): string | undefined {
  for (const dir of [...dirs, ...(process.env.PATH ?? '').split(':')]) {
    const candidate = path.join(dir, name)
    try {
      fs.accessSync(candidate, fs.constants.X_OK)
      return candidate
    } catch {}
  }
  return undefined
}

export interface HaBinaries {
  patroni: string
  etcd: string
  haproxy: string
  pgBin: string
}

/** The programs the pair needs, or the reason it cannot run here (the tests skip with it). */
export function haBinaries(): HaBinaries | { missing: string } {
  const found = {
    patroni: binary('patroni', ['/usr/bin']),
    etcd: binary('etcd', ['/usr/bin']),
    haproxy: binary('haproxy', ['/usr/sbin']),
    pgBin: fs.existsSync(path.join(PG15_BIN, 'postgres')) ? PG15_BIN : undefined,
  }
  const missing = Object.entries(found).filter(([, v]) => v === undefined).map(([k]) => (k === 'pgBin' ? `PostgreSQL 15 (${PG15_BIN})` : k))
  if (missing.length > 0) return { missing: `${missing.join(', ')} not installed (Debian: apt-get install patroni etcd-server haproxy postgresql-15)` }
  if (process.getuid?.() === 0 && postgresUser() === undefined) return { missing: 'running as root without a postgres OS user to run PostgreSQL as' }
  return found as HaBinaries
}

/** The postgres OS user's ids, when this process is root (PostgreSQL and Patroni run as it). */
function postgresUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined
  const line = fs.readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.startsWith('postgres:'))
  if (line === undefined) return undefined
  const [, , uid, gid] = line.split(':')
  return { uid: Number(uid), gid: Number(gid) }
}

export interface HaNode {
  name: string
  pgPort: number
  restPort: number
  dataDir: string
}

export interface KilledLeader {
  name: string
  /** performance.now() when the leader's Patroni and PostgreSQL were killed. */
  at: number
}

export interface HaCluster {
  /** A superuser URL through HAProxy: the one endpoint clients are given. */
  url: string
  haproxyPort: number
  nodes: HaNode[]
  /** The leader's name, as Patroni's REST API says (`GET /primary` answers 200 on it); waits up to `limitMs` for one. */
  leader(limitMs?: number): Promise<string>
  /** Waits until a leader other than `not` (when given) is up and HAProxy routes writes to it; its name. */
  waitForLeader(options?: { not?: string; limitMs?: number }): Promise<string>
  /** SIGKILL of the leader's Patroni and every PostgreSQL process of it, as when its host dies. */
  killLeader(): Promise<KilledLeader>
  /**
   * A planned switchover to the other node (Patroni's `POST /switchover`, what `patronictl switchover` sends);
   * resolves once it is the leader behind HAProxy. `at`: performance.now() when it was asked for.
   */
  switchover(): Promise<{ from: string; to: string; at: number }>
  /** What the processes wrote, for a failure's message. */
  logs(): string
  /** Stops every process and removes the folder. */
  stop(): Promise<void>
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function restStatus(port: number, route: string): Promise<number> {
  return fetch(`http://127.0.0.1:${port}${route}`, { signal: AbortSignal.timeout(1000) })
    .then(async (answer) => (await answer.arrayBuffer(), answer.status))
    .catch(() => 0)
}

/** Children of `pid`, from /proc (a postmaster's backends and helpers). */
function childrenOf(pid: number): number[] {
  const found: number[] = []
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8')
      // The command may hold spaces and parentheses: the parent id follows the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      if (ppid === pid) found.push(Number(entry))
    } catch {}
  }
  return found
}

function postmasterPid(dataDir: string): number | undefined {
  try {
    const pid = Number(fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0])
    return Number.isInteger(pid) && pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}

function killPostgres(dataDir: string): void {
  const pid = postmasterPid(dataDir)
  if (pid === undefined) return
  const all = [pid, ...childrenOf(pid)]
  for (const p of all) {
    try {
      process.kill(p, 'SIGKILL')
    } catch {}
  }
}

async function exited(child: ChildProcess, limitMs: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return true
  return Promise.race([new Promise<boolean>((resolve) => child.once('exit', () => resolve(true))), sleep(limitMs).then(() => false)])
}

function yaml(value: unknown, indent = ''): string {
  // JSON is YAML: Patroni reads it as is, and nothing here needs YAML's own forms.
  return indent + JSON.stringify(value, null, 2).split('\n').join(`\n${indent}`) + '\n'
}

export async function startHaCluster(binaries: HaBinaries, options: { scope?: string } = {}): Promise<HaCluster> {
  const owner = postgresUser()
  const dir = fs.mkdtempSync('/tmp/bp-patroni-')
  const own = (file: string) => owner && fs.chownSync(file, owner.uid, owner.gid)
  own(dir)
  fs.chmodSync(dir, 0o755)
  const children: Array<{ name: string; child: ChildProcess; log: string[] }> = []
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8' }
  const run = (name: string, command: string, args: string[]) => {
    const child = spawn(command, args, { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'], ...(owner ?? {}) })
    const log: string[] = []
    const keep = (chunk: Buffer) => {
      log.push(chunk.toString('utf8'))
      if (log.length > 400) log.splice(0, 100)
    }
    child.stdout!.on('data', keep)
    child.stderr!.on('data', keep)
    const entry = { name, child, log }
    children.push(entry)
    return entry
  }
  const logs = () => children.map((c) => `--- ${c.name} (exit ${c.child.exitCode ?? c.child.signalCode ?? 'running'})\n${c.log.join('').slice(-4000)}`).join('\n')
  const scope = options.scope ?? `bp-${path.basename(dir).slice('bp-patroni-'.length)}`

  const etcdClient = await freePort()
  const etcdPeer = await freePort()
  const nodes: HaNode[] = []
  for (const name of ['pg1', 'pg2']) {
    const nodeDir = path.join(dir, name)
    fs.mkdirSync(nodeDir, { mode: 0o700 })
    own(nodeDir)
    nodes.push({ name, pgPort: await freePort(), restPort: await freePort(), dataDir: path.join(nodeDir, 'data') })
  }
  const haproxyPort = await freePort()
  const patronis = new Map<string, ChildProcess>()

  // Nothing outlives this process, even when it ends without stop().
  const onExit = () => {
    for (const { child } of children) child.kill('SIGKILL')
    for (const node of nodes) killPostgres(node.dataDir)
  }
  process.once('exit', onExit)

  let stopped = false
  const stop = async () => {
    if (stopped) return
    stopped = true
    // Patroni stops its PostgreSQL on SIGTERM (fast shutdown); whatever is left is killed.
    for (const [, child] of patronis) child.kill('SIGTERM')
    await Promise.all([...patronis.values()].map((child) => exited(child, 10_000)))
    for (const { child } of children) child.kill('SIGKILL')
    await Promise.all(children.map(({ child }) => exited(child, 5_000)))
    for (const node of nodes) killPostgres(node.dataDir)
    process.removeListener('exit', onExit)
    fs.rmSync(dir, { recursive: true, force: true })
  }

  try {
    const etcd = run('etcd', binaries.etcd, [
      '--name', 'etcd1',
      '--data-dir', path.join(dir, 'etcd'),
      '--listen-client-urls', `http://127.0.0.1:${etcdClient}`,
      '--advertise-client-urls', `http://127.0.0.1:${etcdClient}`,
      '--listen-peer-urls', `http://127.0.0.1:${etcdPeer}`,
      '--initial-advertise-peer-urls', `http://127.0.0.1:${etcdPeer}`,
      '--initial-cluster', `etcd1=http://127.0.0.1:${etcdPeer}`,
      '--initial-cluster-state', 'new',
      '--log-level', 'warn',
    ])
    await until(async () => (await fetch(`http://127.0.0.1:${etcdClient}/health`).then((r) => r.ok).catch(() => false)) || failed(etcd.child), 20_000, 'etcd to answer')

    for (const node of nodes) {
      const config = {
        scope,
        name: node.name,
        log: { level: 'INFO' },
        restapi: { listen: `127.0.0.1:${node.restPort}`, connect_address: `127.0.0.1:${node.restPort}` },
        etcd3: { hosts: [`127.0.0.1:${etcdClient}`] },
        bootstrap: {
          dcs: {
            ttl: HA_SETTINGS.ttl,
            loop_wait: HA_SETTINGS.loopWait,
            retry_timeout: HA_SETTINGS.retryTimeout,
            maximum_lag_on_failover: 1048576,
            // A commit is acknowledged once the standby has it, so the standby Patroni promotes has every acknowledged write
            // (asynchronous replication may lose the last ones); with the standby gone Patroni lets the leader commit alone.
            synchronous_mode: true,
            postgresql: {
              use_pg_rewind: true,
              // logical: Realtime's Postgres Changes read the project's database through a logical slot.
              parameters: { max_connections: 100, wal_level: 'logical', hot_standby: 'on', max_wal_senders: 10, max_replication_slots: 10, wal_log_hints: 'on' },
            },
          },
          initdb: [{ encoding: 'UTF8' }, { locale: 'C.UTF-8' }, { auth: 'trust' }],
        },
        postgresql: {
          listen: `127.0.0.1:${node.pgPort}`,
          connect_address: `127.0.0.1:${node.pgPort}`,
          data_dir: node.dataDir,
          bin_dir: binaries.pgBin,
          pgpass: path.join(dir, node.name, 'pgpass'),
          authentication: {
            superuser: { username: 'postgres', password: 'postgres' },
            replication: { username: 'replicator', password: 'replicator' },
            rewind: { username: 'postgres', password: 'postgres' },
          },
          parameters: { unix_socket_directories: path.join(dir, node.name) },
          // Loopback only, as the test's folders are: the platform's roles sign in with their passwords elsewhere.
          pg_hba: ['local all all trust', 'host all all 127.0.0.1/32 trust', 'host replication all 127.0.0.1/32 trust'],
        },
        tags: { nofailover: false, noloadbalance: false, clonefrom: false, nosync: false },
      }
      const file = path.join(dir, `${node.name}.yml`)
      fs.writeFileSync(file, yaml(config))
      own(file)
      patronis.set(node.name, run(node.name, binaries.patroni, [file]).child)
      // The first one bootstraps; the second clones it once it leads.
      if (node === nodes[0]) await until(async () => (await restStatus(node.restPort, '/primary')) === 200 || failed(patronis.get(node.name)!), 60_000, `${node.name} to lead`)
    }

    const haproxyConfig = [
      'global',
      '  maxconn 1000',
      'defaults',
      '  mode tcp',
      '  timeout connect 2s',
      // The platform keeps idle pooled connections for minutes; HAProxy must not cut them sooner.
      '  timeout client 30m',
      '  timeout server 30m',
      '  timeout check 1s',
      'listen postgres',
      `  bind 127.0.0.1:${haproxyPort}`,
      '  option httpchk GET /primary',
      '  http-check expect status 200',
      `  default-server inter ${HA_SETTINGS.inter} fall ${HA_SETTINGS.fall} rise ${HA_SETTINGS.rise} on-marked-down shutdown-sessions`,
      ...nodes.map((node) => `  server ${node.name} 127.0.0.1:${node.pgPort} check port ${node.restPort}`),
      '',
    ].join('\n')
    const haproxyFile = path.join(dir, 'haproxy.cfg')
    fs.writeFileSync(haproxyFile, haproxyConfig)
    const haproxy = run('haproxy', binaries.haproxy, ['-db', '-f', haproxyFile])
    await until(async () => (await acceptsConnections(haproxyPort)) || failed(haproxy.child), 10_000, 'HAProxy to listen')
  } catch (error) {
    const message = `${(error as Error).message}\n${logs()}`
    await stop()
    throw new Error(message)
  }

  async function until(check: () => Promise<boolean>, limitMs: number, what: string): Promise<void> {
    const deadline = performance.now() + limitMs
    while (!(await check())) {
      if (performance.now() > deadline) throw new Error(`timed out after ${limitMs} ms waiting for ${what}`)
      await sleep(100)
    }
  }
  function failed(child: ChildProcess): boolean {
    if (child.exitCode !== null) throw new Error(`${children.find((c) => c.child === child)?.name ?? 'a process'} exited with ${child.exitCode} while starting`)
    return false
  }

  const leaderNow = async (): Promise<string | undefined> => {
    for (const node of nodes) if ((await restStatus(node.restPort, '/primary')) === 200) return node.name
    return undefined
  }
  const leader = async (limitMs = 30_000) => {
    let found: string | undefined
    await until(async () => (found = await leaderNow()) !== undefined, limitMs, 'a leader')
    return found!
  }
  const url = `postgres://postgres:postgres@127.0.0.1:${haproxyPort}/postgres`
  /** True once a session through HAProxy lands on a writable server. */
  const routedToPrimary = async (): Promise<boolean> => {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 })
    try {
      await client.connect()
      const { rows } = await client.query<{ standby: boolean }>('select pg_is_in_recovery() as standby')
      return rows[0]!.standby === false
    } catch {
      return false
    } finally {
      await client.end().catch(() => {})
    }
  }
  const waitForLeader = async ({ not, limitMs = 60_000 }: { not?: string; limitMs?: number } = {}) => {
    let found: string | undefined
    try {
      await until(async () => {
        found = await leaderNow()
        return found !== undefined && found !== not && (await routedToPrimary())
      }, limitMs, not === undefined ? 'a leader behind HAProxy' : `a leader other than ${not} behind HAProxy`)
    } catch (error) {
      throw new Error(`${(error as Error).message}\n${logs()}`)
    }
    return found!
  }
  /**
   * The other node streams from the leader and is its synchronous standby (Patroni's `GET /cluster`): only
   * then may Patroni promote it, so a failover or switchover has somewhere to go.
   */
  const replicaStreaming = async (leaderName: string): Promise<boolean> => {
    const leaderNode = nodes.find((n) => n.name === leaderName)!
    const cluster = await fetch(`http://127.0.0.1:${leaderNode.restPort}/cluster`, { signal: AbortSignal.timeout(1000) })
      .then((r) => r.json() as Promise<{ members?: Array<{ name: string; role: string; state: string }> }>)
      .catch(() => undefined)
    const other = cluster?.members?.find((m) => m.name !== leaderName)
    return other?.role === 'sync_standby' && (other.state === 'streaming' || other.state === 'running')
  }

  try {
    const first = await waitForLeader()
    await until(() => replicaStreaming(first), 90_000, 'the replica to stream from the leader')
  } catch (error) {
    const message = `${(error as Error).message}\n${logs()}`
    await stop()
    throw new Error(message)
  }

  return {
    url,
    haproxyPort,
    nodes,
    leader,
    waitForLeader,
    async killLeader() {
      const name = await leader()
      await until(() => replicaStreaming(name), 60_000, `the other node to be ${name}'s synchronous standby before the kill`)
      const node = nodes.find((n) => n.name === name)!
      const at = performance.now()
      // Patroni first, so it cannot restart its PostgreSQL; then the postmaster and every backend at once.
      patronis.get(name)!.kill('SIGKILL')
      killPostgres(node.dataDir)
      await exited(patronis.get(name)!, 5_000)
      return { name, at }
    },
    async switchover() {
      const from = await leader()
      const to = nodes.find((n) => n.name !== from)!.name
      await until(() => replicaStreaming(from), 60_000, `${to} to stream from ${from} before the switchover`)
      const node = nodes.find((n) => n.name === from)!
      const at = performance.now()
      const answer = await fetch(`http://127.0.0.1:${node.restPort}/switchover`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ leader: from, candidate: to }),
        signal: AbortSignal.timeout(60_000),
      })
      const text = await answer.text()
      if (answer.status !== 200) throw new Error(`Patroni's switchover answered ${answer.status}: ${text}`)
      await waitForLeader({ not: from })
      return { from, to, at }
    },
    logs,
    stop,
  }
}
