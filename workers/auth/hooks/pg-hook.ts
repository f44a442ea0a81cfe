// Runs a `pg-functions://` hook as GoTrue does: `select "<schema>"."<fn>"(event)`
// inside the caller's transaction, with statement_timeout 2 s, here as
// supabase_auth_admin (the role Supabase's documented grants name,
// sql/cluster/0004). One round trip: switch, call, switch back. A failure
// aborts the caller's transaction, so nothing the request wrote survives it.
import type pg from 'pg'
import type { Queryable } from '../db/pool.ts'
import { escapeIdentifier, escapeLiteral } from 'pg'
import { AUTH_ROLE, AUTH_SESSION_SETTINGS } from '../../../lib/db/auth-transaction.ts'
import { classifyDatabaseError } from '../../../lib/db/database-errors.ts'
import { log } from '../../../lib/log.ts'
import { authErrors } from '../errors.ts'
import type { PgHook } from './settings.ts'

/** GoTrue's statement_timeout for a Postgres hook. */
export const PG_HOOK_TIMEOUT_SECONDS = 2

/** The role a hook function runs as. */
export const HOOK_ROLE = 'supabase_auth_admin'

/**
 * The function's answer (parsed JSON). `client` must be in a transaction
 * (SET LOCAL lasts until its end): the caller's, which rolls back when this
 * throws. Errors: the hook's timeout (504), its failure (502: a raised
 * exception, a missing function or grant), logged with their cause.
 */
export async function runPgHook(client: Queryable, hook: PgHook, name: string, event: unknown): Promise<unknown> {
  // Simple protocol (no parameters) so that the five statements go in one message; from PostgreSQL 13
  // each statement of a message gets its own statement_timeout, read when it starts.
  const text = [
    `set local role ${HOOK_ROLE}`,
    `set local statement_timeout = '${PG_HOOK_TIMEOUT_SECONDS}s'`,
    `select ${escapeIdentifier(hook.schema)}.${escapeIdentifier(hook.fn)}(${escapeLiteral(JSON.stringify(event))}) as output`,
    `set local role ${AUTH_ROLE}`,
    `set local statement_timeout = '${AUTH_SESSION_SETTINGS.statement_timeout}'`,
  ].join('; ')
  let results: pg.QueryResult[]
  try {
    results = (await client.query(text)) as unknown as pg.QueryResult[]
  } catch (error) {
    const failure = classifyDatabaseError(error)
    if (failure === 'unavailable') throw error
    log.error('auth hook failed', error, { hook: name, uri: hook.uri })
    if (failure === 'timeout') throw authErrors.hookTimeout(name, hook.uri, PG_HOOK_TIMEOUT_SECONDS)
    throw authErrors.hookFailed(name, hook.uri)
  }
  const output = results[2]?.rows[0]?.output
  if (typeof output !== 'string') return output
  try {
    return JSON.parse(output)
  } catch {
    return output
  }
}
