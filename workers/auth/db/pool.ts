// The auth worker's way to a project database, through lib/db's auth variant
// (lib/db/auth-transaction.ts), as baseplane_auth_admin: a single statement in
// one round trip, the steps of an endpoint together in one transaction
// (transaction()). The pools live per worker thread (lib/worker-context.ts)
// and only auth code uses them.
//
// A database that cannot be reached, or a statement that runs out of time,
// becomes a catalogue error here (database_unavailable, request_timeout), so
// every handler, and the redirects of /verify and /callback, answer it in
// GoTrue's shapes.
import type pg from 'pg'
import { authSessions, withAuthTransaction } from '../../../lib/db/auth-transaction.ts'
import { firstRoundTrip } from '../../../lib/db/stale-retry.ts'
import { classifyDatabaseError, databaseAnswered, reportDatabaseFailure, type DatabaseLocation } from '../../../lib/db/database-errors.ts'
import type { DatabasePool, ProjectDatabase } from '../../../lib/db/project-pools.ts'
import { projectPools } from '../../../lib/worker-context.ts'
import { authErrors } from '../errors.ts'

/** Anything a statement can run on: an AuthDb or a checked-out client (pg.ClientBase). */
export interface Queryable {
  query<R extends pg.QueryResultRow = any>(config: pg.QueryConfig, values?: unknown[]): Promise<pg.QueryResult<R>>
  query<R extends pg.QueryResultRow = any>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>
}

/** A project database as the auth code holds it: single statements and transactions, as baseplane_auth_admin. */
export interface AuthDb extends Queryable {
  readonly ref: string
  readonly pool: DatabasePool
  /** Where it lives, for the log of outages (lib/db/database-errors.ts). */
  readonly database: DatabaseLocation
}

/** The catalogue error a database failure answers as (told once, as an outage's incident), or the error itself, for the handler. */
function translated(error: unknown, database: DatabaseLocation): unknown {
  // Auth never makes its transactions read-only: a read-only refusal is the server's (a standby, a promotion).
  const context = { readOnlyByPlatform: false }
  if (classifyDatabaseError(error, context) === undefined) return error
  const failure = reportDatabaseFailure(error, database, 'auth', context)
  return failure === 'timeout' ? authErrors.requestTimeout() : authErrors.databaseUnavailable()
}

/** `pool`'s single statements, a database failure answered in GoTrue's shapes. */
function translatingQuery(pool: DatabasePool, database: DatabaseLocation): Queryable['query'] {
  return (async (config: pg.QueryConfig | string, values?: unknown[]) => {
    try {
      const result = await pool.query(config as pg.QueryConfig, values)
      databaseAnswered(database)
      return result
    } catch (error) {
      throw translated(error, database)
    }
  }) as Queryable['query']
}

const dbs = new WeakMap<DatabasePool, AuthDb>()

export function authPool(database: ProjectDatabase): AuthDb {
  const pool = projectPools().get(database)
  let db = dbs.get(pool)
  if (db === undefined) {
    db = { ref: database.ref, pool, database, query: translatingQuery(authSessions(pool), database) }
    dbs.set(pool, db)
  }
  return db
}

const platformDbs = new WeakMap<DatabasePool, Queryable>()

/**
 * Single statements on the project's platform login role (lib/db/platform-logins.ts),
 * where no owner code runs: the quota counters, which Auth's own connections
 * (and so a trigger or hook running there) cannot write.
 */
export function platformQueries(database: ProjectDatabase): Queryable {
  const pool = projectPools().get(database)
  let db = platformDbs.get(pool)
  if (db === undefined) {
    db = { query: translatingQuery(pool, database) }
    platformDbs.set(pool, db)
  }
  return db
}

/**
 * One connection of `db` for statements in a row, each committing on its own
 * (no transaction), with PostgreSQL's failures as they are, for a caller that
 * tells them apart itself (a hook's timeout is the hook's, not the request's);
 * run it inside `translating`. A connection found dead at once is replaced,
 * as for a single statement, and `work` runs again from the start.
 */
export async function onOneConnection<T>(db: AuthDb, work: (client: Queryable) => Promise<T>): Promise<T> {
  const { client, result } = await firstRoundTrip(() => authSessions(db.pool).connect(), work)
  client.release()
  return result
}

/** Runs `work`, answering a database failure it lets through as `db`'s statements would. */
export async function translating<T>(db: AuthDb, work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (error) {
    throw translated(error, db.database)
  }
}

/** Runs `work` in one transaction (as baseplane_auth_admin); rolls back when it throws. */
export async function transaction<T>(db: AuthDb, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  try {
    const result = await withAuthTransaction(db.pool, work)
    databaseAnswered(db.database)
    return result
  } catch (error) {
    throw translated(error, db.database)
  }
}
