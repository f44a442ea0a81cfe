// A worker thread's connections to project databases: one small pool per
// project (project-pool.ts), dropped once it holds nothing, and what the pools
// share: the idle connections of the thread, oldest first, closed after
// `idleMillis` so an idle project ends up holding no connection; and the
// process's per-server budget (connection-budget.ts), shared by all threads.
// When a server's budget is spent, this thread closes its own least recently
// used idle connection to that server (any project) before waiting for another
// thread to close one of its idle ones; busy connections are never taken.
import type pg from 'pg'
import { ConnectionBudget, createConnectionBudget, type ServerBudget } from './connection-budget.ts'
import { PLATFORM_DEADLINE_MS } from './round-trip-deadline.ts'
import { ProjectPool, type Connection, type PoolCounts, type PoolHost, type ProjectDatabase, type Settle } from './project-pool.ts'

export { ProjectPool }
export type { DatabasePool, PoolCounts, ProjectDatabase } from './project-pool.ts'

export interface ProjectPoolOptions {
  /** Server budget of a ProjectDatabase that names none. */
  maxConnections: number
  /** poolMax of a ProjectDatabase that names none. */
  poolSize: number
  /** Idle connections close after this long. */
  idleMillis: number
  /** Name shown in pg_stat_activity. */
  applicationName: string
  /** The process's budget (createConnectionBudget), shared with the other threads; without it these pools count alone. */
  budget?: SharedArrayBuffer
  /** How long connect() waits for a full pool or a spent budget before database_busy (default 5000). */
  acquireTimeoutMillis?: number
  /** Time to open one connection (TCP, TLS, start-up) before it counts as unreachable (default 5000). */
  connectTimeoutMillis?: number
  /** A round trip's deadline when the request holding the connection set none (round-trip-deadline.ts; default PLATFORM_DEADLINE_MS). */
  roundTripDeadlineMillis?: number
}

export interface PoolStats {
  /** By project ref, in this thread. */
  projects: Record<string, PoolCounts>
  /** By server (host:port), in this thread. */
  servers: Record<string, { open: number; idle: number }>
}

/** Ends a connection; resolves once its socket is closed (the server's backend is gone), or after 2 s regardless. */
function end(client: pg.Client): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, 2000)
    timer.unref()
    client
      .end()
      .catch(() => {})
      .finally(() => {
        clearTimeout(timer)
        resolve()
      })
  })
}

/** A worker thread's pools, one per project, and its share of the servers' budgets. */
export class ProjectPools {
  readonly #options: Readonly<Required<Omit<ProjectPoolOptions, 'budget'>>>
  readonly #budget: ConnectionBudget
  readonly #pools = new Map<string, ProjectPool>()
  /** Idle connections per server, oldest first: eviction and the idle timeout take from the front. */
  readonly #idle = new Map<ServerBudget, Set<Connection>>()
  #idleCount = 0
  #timer: NodeJS.Timeout | undefined
  readonly #closing = new Set<Promise<void>>()
  readonly #shared: PoolHost

  constructor(options: ProjectPoolOptions) {
    this.#options = Object.freeze({
      maxConnections: options.maxConnections,
      poolSize: options.poolSize,
      idleMillis: options.idleMillis,
      applicationName: options.applicationName,
      acquireTimeoutMillis: options.acquireTimeoutMillis ?? 5000,
      connectTimeoutMillis: options.connectTimeoutMillis ?? 5000,
      roundTripDeadlineMillis: options.roundTripDeadlineMillis ?? PLATFORM_DEADLINE_MS,
    })
    this.#budget = new ConnectionBudget(options.budget ?? createConnectionBudget())
    this.#shared = {
      options: this.#options,
      acquire: (server, limit) => server.acquire(limit, this.#options.acquireTimeoutMillis, () => this.#evictOwn(server)),
      addIdle: (conn) => this.#addIdle(conn),
      removeIdle: (conn) => this.#removeIdle(conn),
      close: (conn, settle) => this.#close(conn, settle),
      empty: (pool) => {
        if (this.#pools.get(pool.key) === pool) this.#pools.delete(pool.key)
      },
      attach: (pool) => {
        if (!this.#pools.has(pool.key)) this.#pools.set(pool.key, pool)
      },
    }
  }

  /** The pool of a project's database (made on first use; dropped again once it holds nothing). */
  get(db: ProjectDatabase): ProjectPool {
    const key = `${db.ref}\0${db.host}\0${db.port}\0${db.database}\0${db.user}\0${db.password}`
    let pool = this.#pools.get(key)
    if (pool === undefined) {
      pool = new ProjectPool(this.#shared, key, db, this.#budget.server(`${db.host}:${db.port}`))
      this.#pools.set(key, pool)
    }
    pool.limit(db.poolMax ?? this.#options.poolSize, db.serverBudget ?? this.#options.maxConnections)
    return pool
  }

  /** Project pools this thread holds (pools with no connection are dropped). */
  get size(): number {
    return this.#pools.size
  }

  /** Connections this thread holds, by project and by server. */
  stats(): PoolStats {
    const projects: Record<string, PoolCounts> = {}
    for (const pool of this.#pools.values()) {
      const counts = pool.counts
      const sum = (projects[pool.ref] ??= { open: 0, idle: 0, busy: 0, waiting: 0 })
      sum.open += counts.open
      sum.idle += counts.idle
      sum.busy += counts.busy
      sum.waiting += counts.waiting
    }
    const servers: Record<string, { open: number; idle: number }> = {}
    for (const pool of this.#pools.values()) {
      const server = (servers[pool.server] ??= { open: 0, idle: 0 })
      server.open += pool.counts.open
      server.idle += pool.counts.idle
    }
    return { projects, servers }
  }

  /** Closes every connection (busy ones when released) and waits for the idle ones to be closed. */
  async closeAll(): Promise<void> {
    const pools = [...this.#pools.values()]
    this.#pools.clear()
    for (const pool of pools) pool.close()
    while (this.#closing.size > 0) await Promise.all([...this.#closing])
  }

  #addIdle(conn: Connection): void {
    let conns = this.#idle.get(conn.server)
    if (conns === undefined) this.#idle.set(conn.server, (conns = new Set()))
    conns.add(conn)
    this.#idleCount++
    this.#timer ??= setInterval(() => this.#tick(), 50).unref()
    if (conn.server.unserved > 0) this.#relieve(conn.server)
  }

  #removeIdle(conn: Connection): void {
    const conns = this.#idle.get(conn.server)
    if (conns === undefined || !conns.delete(conn)) return
    if (conns.size === 0) this.#idle.delete(conn.server)
    if (--this.#idleCount === 0 && this.#timer !== undefined) {
      clearInterval(this.#timer)
      this.#timer = undefined
    }
  }

  /** Another thread waits for this server: close idle connections for it, oldest first. */
  #relieve(server: ServerBudget): void {
    for (const conn of this.#idle.get(server) ?? []) {
      if (server.unserved <= 0 || !server.claimFree()) return
      conn.leave()
      this.#close(conn, 'free')
    }
  }

  /** The budget is spent: this thread's least recently used idle connection to the server makes room. */
  async #evictOwn(server: ServerBudget): Promise<boolean> {
    const oldest = this.#idle.get(server)?.values().next().value
    if (oldest === undefined) return false
    oldest.leave()
    await this.#close(oldest, 'transfer')
    return true
  }

  #tick(): void {
    const expired = Date.now() - this.#options.idleMillis
    for (const [server, conns] of this.#idle) {
      if (server.unserved > 0) this.#relieve(server)
      for (const conn of conns) {
        if (conn.since > expired) break
        conn.leave()
        this.#close(conn, 'release')
      }
    }
  }

  /** Closes a connection no pool holds any more, then settles its budget unit. */
  #close(conn: Connection, settle: Settle): Promise<void> {
    const closing = end(conn.client).then(() => {
      this.#closing.delete(closing)
      if (settle === 'release') conn.server.release()
      else if (settle === 'free') conn.server.freed()
    })
    this.#closing.add(closing)
    return closing
  }
}
