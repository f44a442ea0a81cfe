// The auth worker's connections to a project database. A connection of an
// auth worker's pool is switched once, on its first checkout, to
// baseplane_auth_admin, the role that holds the rights on schema `auth`
// (sql/project/0002), so later single statements need no extra round trip.
// The pools live per worker thread (lib/worker-context.ts) and only auth code
// uses them.
import type pg from 'pg'
import type { ProjectDatabase } from '../../../lib/db/project-pools.ts'
import { withTransaction } from '../../../lib/db/request-transaction.ts'
import { projectPools } from '../../../lib/worker-context.ts'

export const AUTH_ROLE = 'baseplane_auth_admin'

const switched = new WeakSet<pg.PoolClient>()

/** Anything a statement can run on: an AuthDb or a checked-out client (pg.ClientBase). */
export interface Queryable {
  query<R extends pg.QueryResultRow = any>(config: pg.QueryConfig, values?: unknown[]): Promise<pg.QueryResult<R>>
  query<R extends pg.QueryResultRow = any>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>
}

/** What the auth code needs of a pool: single statements and checked-out clients, both as baseplane_auth_admin. */
export interface AuthDb extends Queryable {
  connect(): Promise<pg.PoolClient>
}

async function checkout(pool: pg.Pool): Promise<pg.PoolClient> {
  const client = await pool.connect()
  if (!switched.has(client)) {
    try {
      await client.query(`set role ${AUTH_ROLE}; set timezone = 'UTC'`)
    } catch (error) {
      client.release(error as Error)
      throw error
    }
    switched.add(client)
  }
  return client
}

const dbs = new WeakMap<pg.Pool, AuthDb>()

export function authPool(database: ProjectDatabase): AuthDb {
  const pool = projectPools().get(database)
  let db = dbs.get(pool)
  if (db === undefined) {
    db = {
      async query(config: pg.QueryConfig | string, values?: unknown[]) {
        const client = await checkout(pool)
        let broken: Error | undefined
        try {
          return await client.query(config as pg.QueryConfig, values)
        } catch (error) {
          // A statement error leaves the connection usable; a connection error does not.
          if (!(error as { severity?: string }).severity) broken = error as Error
          throw error
        } finally {
          client.release(broken)
        }
      },
      connect: () => checkout(pool),
    } as AuthDb
    dbs.set(pool, db)
  }
  return db
}

/** Runs `work` in one transaction (as baseplane_auth_admin); rolls back when it throws. */
export async function transaction<T>(db: AuthDb, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  return withTransaction(() => db.connect(), 'begin', work)
}
