// Connection pools to project databases, kept in an LRU whose size is the
// number of connections they may open. A node can serve thousands of projects:
// idle connections close after `idleMillis`, and when the bound is reached the
// least recently used project's pool is ended (its running queries finish first).
import { LRUCache } from 'lru-cache'
import pg from 'pg'

export interface ProjectDatabase {
  ref: string
  host: string
  port: number
  database: string
  user: string
  password: string
}

export interface ProjectPoolOptions {
  maxConnections: number
  poolSize: number
  idleMillis: number
  /** Name shown in pg_stat_activity. */
  applicationName: string
}

export class ProjectPools {
  readonly #pools: LRUCache<string, pg.Pool>
  readonly #options: ProjectPoolOptions
  readonly #poolSize: number

  constructor(options: ProjectPoolOptions) {
    this.#options = options
    this.#poolSize = Math.min(options.poolSize, options.maxConnections)
    this.#pools = new LRUCache<string, pg.Pool>({
      maxSize: options.maxConnections,
      sizeCalculation: () => this.#poolSize,
      dispose: (pool) => {
        pool.end().catch(() => {})
      },
    })
  }

  get(db: ProjectDatabase): pg.Pool {
    const key = `${db.ref}\0${db.host}\0${db.port}\0${db.database}\0${db.user}\0${db.password}`
    let pool = this.#pools.get(key)
    if (pool === undefined) {
      pool = new pg.Pool({
        host: db.host,
        port: db.port,
        database: db.database,
        user: db.user,
        password: db.password,
        max: this.#poolSize,
        idleTimeoutMillis: this.#options.idleMillis,
        connectionTimeoutMillis: 10000,
        application_name: this.#options.applicationName,
      })
      // A connection dropped while idle (server restart, admin termination) must not crash the process.
      pool.on('error', () => {})
      this.#pools.set(key, pool)
    }
    return pool
  }

  get size(): number {
    return this.#pools.size
  }

  async closeAll(): Promise<void> {
    const pools = [...this.#pools.values()]
    this.#pools.clear()
    await Promise.all(pools.map((pool) => pool.end().catch(() => {})))
  }
}
