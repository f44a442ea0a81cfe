// Auth's variant of the database helpers. Auth works on schema `auth`, which
// the API roles cannot touch, so it runs as baseplane_auth_admin (the role
// holding those rights, sql/project/0002) instead of as the caller. Auth's
// worker threads hold only Auth's connections, so each connection is switched
// once, the first time it is handed out, and keeps it: a single statement is
// then one round trip (GET /user, token refresh) and a transaction needs only
// BEGIN, through the same transaction helper as every other service.
import type pg from 'pg'
import type { DatabasePool } from './project-pools.ts'
import { withTransaction } from './request-transaction.ts'
import { firstRoundTrip } from './stale-retry.ts'

export const AUTH_ROLE = 'baseplane_auth_admin'

/**
 * The role; timestamps read and written in UTC, as GoTrue's; and GoTrue's
 * GOTRUE_API_MAX_REQUEST_DURATION for every statement (baseplane_auth_admin is
 * not an API role, whose per-request timeouts would apply).
 */
export const AUTH_SESSION_SETTINGS: Readonly<Record<string, string>> = Object.freeze({ role: AUTH_ROLE, timezone: 'UTC', statement_timeout: '10s' })
/** The statement that switches a connection of Auth's login role to Auth's session. */
export const AUTH_SESSION = Object.entries(AUTH_SESSION_SETTINGS).map(([name, value]) => `set ${name} = '${value}'`).join('; ')

const switched = new WeakSet<pg.ClientBase>()
const sessions = new WeakMap<DatabasePool, DatabasePool>()

/** `pool`'s connections as Auth uses them: switched to baseplane_auth_admin once, on first use. */
export function authSessions(pool: DatabasePool): DatabasePool {
  let auth = sessions.get(pool)
  if (auth === undefined) {
    const connect = async (): Promise<pg.PoolClient> => {
      const client = await pool.connect()
      if (!switched.has(client)) {
        try {
          await client.query(AUTH_SESSION)
        } catch (error) {
          client.release(error as Error)
          throw error
        }
        switched.add(client)
      }
      return client
    }
    auth = {
      connect,
      // One statement, one round trip; a connection found dead on it is replaced once (stale-retry.ts).
      query: ((config: string | pg.QueryConfig, values?: unknown[]) =>
        firstRoundTrip(connect, (client) => client.query(config, values)).then(({ client, result }) => {
          client.release()
          return result
        })) as pg.ClientBase['query'],
    }
    sessions.set(pool, auth)
  }
  return auth
}

/** Runs `work` in one transaction as baseplane_auth_admin; commits when it resolves, rolls back when it throws. */
export async function withAuthTransaction<T>(pool: DatabasePool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const auth = authSessions(pool)
  return withTransaction(() => auth.connect(), 'begin', work)
}
