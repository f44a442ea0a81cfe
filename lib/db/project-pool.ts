// A project's connections in one worker thread: plain pg.Client connections,
// opened only when no idle one is free (up to the project's poolMax), the most
// recently used idle one handed out first (so the others age and the thread's
// pools close them: project-pools.ts), requests waiting for a full pool served
// first come, first served. A connection released with an error, or whose
// socket ended or errored, is never handed out again. Every round trip has a
// deadline (round-trip-deadline.ts): the pools' own, or the role's while a
// request holds the connection; one that meets it destroys its connection.
import pg from 'pg'
import { log } from '../log.ts'
import type { ServerBudget } from './connection-budget.ts'
import { connectFailure, databaseErrors, isConnectionLost } from './database-errors.ts'
import { boundRoundTrips, KEEPALIVE_IDLE_MS, releaseDeadline } from './round-trip-deadline.ts'
import { firstRoundTrip, markFromIdle } from './stale-retry.ts'

/** too_many_connections: here, the role's CONNECTION LIMIT (the server's own limit is the budget's to avoid). */
const ROLE_LIMIT_REACHED = '53300'

export interface ProjectDatabase {
  ref: string
  host: string
  port: number
  database: string
  user: string
  password: string
  /** Connections this process may hold to the database's server, all projects and threads together (the pools' default when absent). */
  serverBudget?: number
  /** Connections the project's pool may hold in one thread: as many as its requests that run at once (the pools' default when absent). */
  poolMax?: number
}

/** What services use of a pool. A ProjectPool is one; so is a pg.Pool (tests, the GraphQL library). */
export interface DatabasePool {
  connect(): Promise<pg.PoolClient>
  query: pg.ClientBase['query']
}

export interface PoolCounts {
  open: number
  idle: number
  busy: number
  waiting: number
}

/** How a closed connection's budget unit is settled. */
export type Settle = 'release' | 'transfer' | 'free'

/** One pg connection and where it stands. */
export class Connection {
  readonly client: pg.PoolClient
  readonly server: ServerBudget
  readonly ref: string
  /** The socket ended or errored: never handed out again. */
  dead = false
  busy = false
  /** When it went idle, or was checked out. */
  since = 0
  /** Takes it out of its project's pool (set by the pool). */
  leave: () => void = () => {}

  constructor(client: pg.Client, server: ServerBudget, ref: string) {
    this.client = client as pg.PoolClient
    this.server = server
    this.ref = ref
  }
}

interface Waiter {
  resolve(client: pg.PoolClient): void
  reject(error: unknown): void
  timer: NodeJS.Timeout
}

/** What a project's pool needs from the thread's pools. */
export interface PoolHost {
  readonly options: Readonly<{ applicationName: string; acquireTimeoutMillis: number; connectTimeoutMillis: number; roundTripDeadlineMillis: number }>
  acquire(server: ServerBudget, limit: number): Promise<void>
  addIdle(conn: Connection): void
  removeIdle(conn: Connection): void
  close(conn: Connection, settle: Settle): void
  empty(pool: ProjectPool): void
  attach(pool: ProjectPool): void
}

export class ProjectPool implements DatabasePool {
  readonly ref: string
  /** Identity of the pool: project and credentials. */
  readonly key: string
  /** host:port of the database server. */
  readonly server: string
  readonly #shared: PoolHost
  readonly #server: ServerBudget
  readonly #config: pg.ClientConfig
  #max = 1
  #serverBudget = 1
  /** Most recently used last: handed out first. */
  readonly #idle: Connection[] = []
  readonly #all = new Set<Connection>()
  #opening = 0
  readonly #waiters: Waiter[] = []
  #closed = false

  constructor(shared: PoolHost, key: string, db: ProjectDatabase, server: ServerBudget) {
    this.#shared = shared
    this.key = key
    this.ref = db.ref
    this.server = server.key
    this.#server = server
    this.#config = {
      host: db.host,
      port: db.port,
      database: db.database,
      user: db.user,
      password: db.password,
      application_name: shared.options.applicationName,
      connectionTimeoutMillis: shared.options.connectTimeoutMillis,
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEPALIVE_IDLE_MS,
    }
  }

  /** Applies the limits the latest request carried (a plan or a server's budget may have changed). */
  limit(poolMax: number, serverBudget: number): void {
    const grew = poolMax > this.#max
    this.#max = Math.max(1, poolMax)
    this.#serverBudget = Math.max(1, serverBudget)
    if (grew) this.#dispatch()
  }

  get counts(): PoolCounts {
    const open = this.#all.size
    return { open, idle: this.#idle.length, busy: open - this.#idle.length, waiting: this.#waiters.length }
  }

  /** A connection of its own until release(err?); a released error, or a dead socket, discards it. */
  connect(): Promise<pg.PoolClient> {
    if (this.#closed) return Promise.reject(new Error(`the connection pool of project ${this.ref} is closed`))
    this.#shared.attach(this)
    const idle = this.#idle.pop()
    if (idle !== undefined) return Promise.resolve(this.#checkout(idle, true))
    if (this.#waiters.length === 0 && this.#all.size + this.#opening < this.#max) return this.#open()
    return new Promise((resolve, reject) => {
      const timeout = this.#shared.options.acquireTimeoutMillis
      const waiter: Waiter = {
        resolve,
        reject,
        timer: setTimeout(() => {
          this.#waiters.splice(this.#waiters.indexOf(waiter), 1)
          reject(databaseErrors.busy(timeout))
        }, timeout),
      }
      this.#waiters.push(waiter)
    })
  }

  /** One statement on a pooled connection, as pg.Pool's query (promise forms only). */
  readonly query = ((config: string | pg.QueryConfig, values?: unknown[]) => {
    if (typeof values === 'function' || typeof (config as { submit?: unknown }).submit === 'function') {
      throw new TypeError('ProjectPool.query takes a text or a query config and returns a promise')
    }
    return firstRoundTrip(
      () => this.connect(),
      (client) => client.query(config, values),
    ).then(({ client, result }) => {
      client.release()
      return result
    })
  }) as pg.ClientBase['query']

  /** Ends the idle connections now and the busy ones when released; waiters are refused. */
  close(): void {
    this.#closed = true
    for (const waiter of this.#waiters.splice(0)) {
      clearTimeout(waiter.timer)
      waiter.reject(new Error(`the connection pool of project ${this.ref} is closed`))
    }
    for (const conn of [...this.#idle]) this.#discard(conn)
  }

  #checkout(conn: Connection, fromIdle: boolean): pg.PoolClient {
    if (fromIdle) this.#shared.removeIdle(conn)
    conn.busy = true
    conn.since = Date.now()
    markFromIdle(conn.client, fromIdle)
    return conn.client
  }

  async #open(): Promise<pg.PoolClient> {
    this.#opening++
    try {
      await this.#shared.acquire(this.#server, this.#serverBudget)
      let client: pg.Client
      try {
        client = await this.#connectWithin()
      } catch (error) {
        this.#server.release()
        throw connectFailure(error)
      }
      boundRoundTrips(client, this.#shared.options.roundTripDeadlineMillis)
      const conn = new Connection(client, this.#server, this.ref)
      conn.leave = () => this.#forget(conn)
      // A socket that ends or errors while idle must not crash the thread, nor be handed out.
      client.on('error', (error) => this.#lost(conn, error))
      client.on('end', () => this.#lost(conn))
      conn.client.release = (err?: Error | boolean) => this.#release(conn, err)
      this.#all.add(conn)
      if (this.#closed) {
        this.#discard(conn)
        throw new Error(`the connection pool of project ${this.ref} is closed`)
      }
      return this.#checkout(conn, false)
    } catch (error) {
      // The waiters behind this one try for themselves (and fail alike if the server is down).
      queueMicrotask(() => this.#dispatch())
      throw error
    } finally {
      this.#opening--
    }
  }

  /**
   * A connected client. While the role's CONNECTION LIMIT is reached (a node
   * that joined before the fleet raised the roles' limits, lib/plans.ts
   * apiRoleLimit), it tries again until the acquire timeout, as a request
   * waits for a full pool, rather than failing the request.
   */
  async #connectWithin(): Promise<pg.Client> {
    const deadline = Date.now() + this.#shared.options.acquireTimeoutMillis
    for (let attempt = 0; ; attempt++) {
      const client = new pg.Client(this.#config)
      // Until its owner listens: an error event while connecting also rejects connect().
      const ignore = () => {}
      client.on('error', ignore)
      try {
        await client.connect()
        client.off('error', ignore)
        return client
      } catch (error) {
        client.end().catch(() => {})
        if ((error as { code?: unknown }).code !== ROLE_LIMIT_REACHED || Date.now() >= deadline) throw error
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(200, 10 * 2 ** attempt) * (0.5 + Math.random())))
    }
  }

  #release(conn: Connection, err: Error | boolean | undefined): void {
    if (!conn.busy) throw new Error('Release called on client which has already been released to the pool.')
    conn.busy = false
    markFromIdle(conn.client, false)
    releaseDeadline(conn.client)
    if (err || conn.dead || this.#closed) {
      if (err instanceof Error && isConnectionLost(err)) this.#dropOlderIdle(conn.since)
      this.#discard(conn)
      this.#dispatch()
      return
    }
    const waiter = this.#waiters.shift()
    if (waiter !== undefined) {
      clearTimeout(waiter.timer)
      waiter.resolve(this.#checkout(conn, false))
      return
    }
    conn.since = Date.now()
    this.#idle.push(conn)
    this.#shared.addIdle(conn)
  }

  /**
   * A connection found dead: the idle ones that were already idle when it was
   * taken probably share its fate (a server restart ends them all), so they go
   * too rather than failing the next requests one by one.
   */
  #dropOlderIdle(before: number): void {
    for (const conn of this.#idle.filter((c) => c.since <= before)) this.#discard(conn)
  }

  #lost(conn: Connection, error?: Error): void {
    conn.dead = true
    if (conn.busy || !this.#all.has(conn)) return
    // A busy connection's error reaches its request, which reports it; an idle one's only here.
    if (error) log.info('idle project connection lost', { ref: this.ref, error: error.message })
    this.#discard(conn)
  }

  #discard(conn: Connection): void {
    if (!this.#all.has(conn)) return
    this.#forget(conn)
    this.#shared.close(conn, 'release')
  }

  /** Out of this pool (its connection is being closed by the caller). */
  #forget(conn: Connection): void {
    if (!this.#all.delete(conn)) return
    const at = this.#idle.indexOf(conn)
    if (at !== -1) {
      this.#idle.splice(at, 1)
      this.#shared.removeIdle(conn)
    }
    if (this.#all.size === 0 && this.#opening === 0 && this.#waiters.length === 0) this.#shared.empty(this)
  }

  /** Serves the waiters from idle connections, or with new ones while there is room. */
  #dispatch(): void {
    while (this.#waiters.length > 0) {
      const idle = this.#idle.pop()
      if (idle === undefined && this.#all.size + this.#opening >= this.#max) return
      const waiter = this.#waiters.shift()!
      clearTimeout(waiter.timer)
      if (idle !== undefined) waiter.resolve(this.#checkout(idle, true))
      else this.#open().then(waiter.resolve, waiter.reject)
    }
  }
}
