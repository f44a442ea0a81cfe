// The one way every service runs work against a project database: one
// transaction, under the caller's role, with `request.jwt.claims` set, exactly
// as Supabase's PostgREST does, so auth.uid() and auth.jwt() see the caller.
import type pg from 'pg'
import { escapeLiteral } from 'pg'
import type { DatabasePool } from './project-pools.ts'
import { boundCall, type Bind, type PreparedCall } from './prepared-statements.ts'
import { connectAs } from './round-trip-deadline.ts'
import { firstRoundTrip } from './stale-retry.ts'
import type { RoleTimeouts } from '../plans.ts'
import { isApiRole, type RequestIdentity } from '../roles.ts'

/** Whole milliseconds within what PostgreSQL accepts for a timeout setting. */
function timeoutMs(value: number): string {
  if (!Number.isInteger(value) || value < 0 || value > 2147483647) throw new TypeError(`not a timeout in milliseconds: ${String(value)}`)
  return String(value)
}

/**
 * The select items that make the open transaction the caller's: role, claims
 * and the role's timeouts, all local to the transaction, each value through
 * `bind`.
 *
 * The timeouts are set here, per request, because `ALTER ROLE ... SET` does
 * not apply on SET ROLE (PostgREST applies role settings per request for the
 * same reason), and always, default or not, so nothing a previous request
 * left in the session can lift them. PostgreSQL reads statement_timeout when
 * each statement starts, so the value holds from the next statement on, also
 * for the later statements of the same simple-protocol message.
 */
function identityItems(identity: RequestIdentity, timeouts: RoleTimeouts, readOnly: boolean, bind: Bind): string[] {
  const role = identity.role
  // 'none' is no role: set_config('role', 'none') would fall back to the login role itself.
  if (typeof role !== 'string' || role === '' || role === 'none') throw new TypeError(`not a role: ${String(role)}`)
  // A role of the project's own is a signed-in caller's: it gets authenticated's limit.
  const statementTimeout = timeoutMs(timeouts.statementTimeoutMs[isApiRole(role) ? role : 'authenticated'])
  const idleTimeout = timeoutMs(timeouts.idleInTransactionTimeoutMs)
  const items = [`set_config('role', ${bind(role)}, true)`, `set_config('request.jwt.claims', ${bind(JSON.stringify(identity.claims))}, true)`]
  // auth.uid(), auth.role() and auth.email() read the single-claim settings
  // first (as in Supabase); set, they spare a policy parsing the claims JSON
  // on every row it checks.
  for (const name of ['sub', 'role', 'email']) {
    const value = identity.claims[name]
    if (typeof value === 'string') items.push(`set_config('request.jwt.claim.${name}', ${bind(value)}, true)`)
  }
  items.push(`set_config('statement_timeout', '${statementTimeout}', true)`, `set_config('idle_in_transaction_session_timeout', '${idleTimeout}', true)`)
  // Past the project's database size cap (lib/plans.ts): reads answer, writes are refused (25006).
  if (readOnly) items.push(`set_config('transaction_read_only', 'on', true)`)
  return items
}

/**
 * The statement that makes the open transaction the caller's, its values as
 * escaped literals. GraphQL sends it in the same message as its first query
 * (after `begin`, or as the first statement of a message that is one implicit
 * transaction).
 */
export function identityStatement(identity: RequestIdentity, timeouts: RoleTimeouts, readOnly = false): string {
  return `select ${identityItems(identity, timeouts, readOnly, escapeLiteral).join(', ')}`
}

/**
 * The identity statement as a prepared statement of `client` (its values
 * parameters), with `more` select items a concern adds, binding their values
  * the same way (REST's `request.*` settings: workers/rest/answer/settings.ts),
 * and the `returned` items it answers (REST: a write's key guard). Prepared,
 * PostgreSQL plans it once per connection rather than on every request.
 */
export function identityCall(
  client: pg.ClientBase,
  identity: RequestIdentity,
  timeouts: RoleTimeouts,
  readOnly: boolean,
  more: (bind: Bind) => readonly string[],
  returned: (bind: Bind) => readonly string[] = () => [],
): PreparedCall {
  // The values are parameters, so one text (and one prepared statement) serves every role. Only the
  // `returned` items come back (`more`'s columns by name, or expressions of them, evaluated once every
  // setting is made): each set_config's own result would be one more column for PostgreSQL to send and
  // the client to parse, every request. A subquery whose target list calls volatile functions is never
  // flattened or pruned, so each one still runs, and before the outer items.
  return boundCall(client, '', (bind) => {
    const items = [...identityItems(identity, timeouts, readOnly, bind), ...more(bind)]
    return `select ${returned(bind).join(', ')} from (select ${items.join(', ')}) identity_setup`
  })
}

/** How a unit of work opens, commits and rolls back: a transaction of its own, or a savepoint inside the caller's. */
export interface TransactionFrame {
  open: string
  commit: string
  rollback: string
}

export const OWN_TRANSACTION: TransactionFrame = { open: 'begin', commit: 'commit', rollback: 'rollback' }

/** A savepoint in a transaction the caller holds: released on success, rolled back to (and released) on failure. */
export function savepointFrame(name: string): TransactionFrame {
  return { open: `savepoint ${name}`, commit: `release savepoint ${name}`, rollback: `rollback to savepoint ${name}; release savepoint ${name}` }
}

/** The statement that opens a request transaction: one simple-protocol round trip. */
export function beginStatement(identity: RequestIdentity, timeouts: RoleTimeouts): string {
  return `${OWN_TRANSACTION.open}; ${identityStatement(identity, timeouts)}`
}

/**
 * Runs `work` in a transaction already open on `client`: commits when it
 * resolves, rolls back when it throws (and rethrows). `onBroken` hears of a
 * rollback that failed, so a pooled caller can discard the connection.
 */
async function settle<C extends pg.ClientBase, T>(client: C, work: (client: C) => Promise<T>, onBroken: (error: Error) => void): Promise<T> {
  try {
    const result = await work(client)
    await client.query(OWN_TRANSACTION.commit)
    return result
  } catch (error) {
    try {
      await client.query(OWN_TRANSACTION.rollback)
    } catch (rollbackError) {
      onBroken(rollbackError as Error)
    }
    throw error
  }
}

/**
 * Runs `work` in one transaction on a client the caller holds and ends itself
 * (a connection of its own, not a pool's): opened with `begin`, committed when
 * `work` resolves, rolled back when it throws.
 */
export async function inTransaction<C extends pg.ClientBase, T>(client: C, work: (client: C) => Promise<T>, begin = OWN_TRANSACTION.open): Promise<T> {
  await client.query(begin)
  return settle(client, work, () => {})
}

/**
 * Runs `work` in one transaction on a client from `connect`, opened with
 * `begin` (which may carry more statements). Commits when `work` resolves,
 * rolls back when it throws (and rethrows). The client goes back to its pool
 * either way; a client whose connection broke is discarded. A pooled
 * connection found dead on `begin` is replaced once (stale-retry.ts).
 */
export async function withTransaction<T>(
  connect: () => Promise<pg.PoolClient>,
  begin: string,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const { client } = await firstRoundTrip(connect, (client) => client.query(begin))
  let broken: Error | undefined
  try {
    return await settle(client, work, (error) => {
      broken = error
    })
  } finally {
    client.release(broken)
  }
}

/** Runs `work` in one transaction on a connection of `pool`, as the pool's own role (the control plane's catalogue). */
export async function withPoolTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  return withTransaction(() => pool.connect(), OWN_TRANSACTION.open, work)
}

/**
 * Runs `work` in one transaction as `identity` (role and claims set for RLS,
 * the role's timeouts applied, each round trip bounded by the role's
 * statement timeout plus a margin: round-trip-deadline.ts).
 */
export async function withRequestTransaction<T>(
  pool: DatabasePool,
  identity: RequestIdentity,
  timeouts: RoleTimeouts,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  return withTransaction(connectAs(() => pool.connect(), timeouts, identity.role), beginStatement(identity, timeouts), work)
}
