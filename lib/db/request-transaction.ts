// The one way every service runs work against a project database: one
// transaction, under the caller's role, with `request.jwt.claims` set, exactly
// as Supabase's PostgREST does, so auth.uid() and auth.jwt() see the caller.
import type pg from 'pg'
import { escapeLiteral } from 'pg'

export type ApiRole = 'anon' | 'authenticated' | 'service_role'

export const API_ROLES: readonly ApiRole[] = ['anon', 'authenticated', 'service_role']

export interface RequestIdentity {
  role: ApiRole
  /** The verified JWT claims of the caller (or of the apikey when no user token is sent). */
  claims: Record<string, unknown>
}

export function isApiRole(value: unknown): value is ApiRole {
  return typeof value === 'string' && (API_ROLES as readonly string[]).includes(value)
}

/**
 * The statement that makes the open transaction the caller's: role and
 * claims, both local to the transaction. The role comes from a fixed list and
 * the claims are escaped. GraphQL sends it in the same message as its first
 * query (after `begin`, or as the first statement of a message that is one
 * implicit transaction).
 */
export function identityStatement(identity: RequestIdentity): string {
  if (!isApiRole(identity.role)) throw new TypeError(`not an API role: ${String(identity.role)}`)
  const claims = escapeLiteral(JSON.stringify(identity.claims))
  // auth.uid(), auth.role() and auth.email() read the single-claim settings
  // first (as in Supabase); set, they spare a policy parsing the claims JSON
  // on every row it checks.
  const single = (name: string) => {
    const value = identity.claims[name]
    return typeof value === 'string' ? `, set_config('request.jwt.claim.${name}', ${escapeLiteral(value)}, true)` : ''
  }
  return (
    `select set_config('role', '${identity.role}', true), set_config('request.jwt.claims', ${claims}, true)` +
    single('sub') +
    single('role') +
    single('email')
  )
}

/** The statement that opens a request transaction: one simple-protocol round trip. */
export function beginStatement(identity: RequestIdentity): string {
  return `begin; ${identityStatement(identity)}`
}

/**
 * Runs `work` in one transaction on a client from `connect`, opened with
 * `begin` (which may carry more statements). Commits when `work` resolves,
 * rolls back when it throws (and rethrows). The client goes back to its pool
 * either way; a client whose connection broke is discarded.
 */
export async function withTransaction<T>(
  connect: () => Promise<pg.PoolClient>,
  begin: string,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await connect()
  let broken: Error | undefined
  try {
    await client.query(begin)
    const result = await work(client)
    await client.query('commit')
    return result
  } catch (error) {
    try {
      await client.query('rollback')
    } catch (rollbackError) {
      broken = rollbackError as Error
    }
    throw error
  } finally {
    client.release(broken)
  }
}

/** Runs `work` in one transaction as `identity` (role and claims set for RLS). */
export async function withRequestTransaction<T>(
  pool: pg.Pool,
  identity: RequestIdentity,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  return withTransaction(() => pool.connect(), beginStatement(identity), work)
}
