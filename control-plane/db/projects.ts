// SQL on the catalogue's project rows (baseplane.projects): creating and
// deleting them, plan, products, keys, auth settings and the API roles'
// timeouts. Reading a project whole is lib/catalogue.ts's (readProject,
// listProjects). Every update fires the row's trigger, which bumps the
// catalogue's change counter so the data planes reload the project.
import type { ProjectRecord, StoredRoleTimeouts } from '../../lib/catalogue.ts'
import type { Queryable } from './queryable.ts'

/** A new project's row: its record's stored columns, the plan by name. */
export type ProjectRow = Pick<
  ProjectRecord,
  'ref' | 'name' | 'dbServer' | 'dbName' | 'dbApiRole' | 'dbApiPassword' | 'dbOwnerRole' | 'dbOwnerPassword' | 'jwtSecret' | 'anonKey' | 'serviceRoleKey'
> & { plan: string }

/** Inserts a project's row; false when the ref is taken. */
export async function insertProject(db: Queryable, row: ProjectRow): Promise<boolean> {
  const inserted = await db.query(
    `insert into baseplane.projects (ref, name, plan, db_server, db_name, db_api_role, db_api_password, db_owner_role,
       db_owner_password, jwt_secret, anon_key, service_role_key)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) on conflict (ref) do nothing`,
    [row.ref, row.name, row.plan, row.dbServer, row.dbName, row.dbApiRole, row.dbApiPassword, row.dbOwnerRole, row.dbOwnerPassword, row.jwtSecret, row.anonKey, row.serviceRoleKey],
  )
  return inserted.rowCount !== 0
}

export async function deleteProjectRow(db: Queryable, ref: string): Promise<void> {
  await db.query('delete from baseplane.projects where ref = $1', [ref])
}

/** The plan, the row locked until the transaction ends; undefined when no such project. */
export async function lockPlan(db: Queryable, ref: string): Promise<string | undefined> {
  const { rows } = await db.query<{ plan: string }>('select plan from baseplane.projects where ref = $1 for update', [ref])
  return rows[0]?.plan
}

/** False when no such project. */
export async function updatePlan(db: Queryable, ref: string, plan: string): Promise<boolean> {
  const updated = await db.query('update baseplane.projects set plan = $2 where ref = $1', [ref, plan])
  return updated.rowCount !== 0
}

/** `product` is a validated product name (its column is `<product>_enabled`). */
export async function updateProductEnabled(db: Queryable, ref: string, product: string, enabled: boolean): Promise<void> {
  await db.query(`update baseplane.projects set ${product}_enabled = $2 where ref = $1`, [ref, enabled])
}

/** A new JWT secret and API keys; false when no such project. */
export async function updateKeys(db: Queryable, ref: string, keys: { jwtSecret: string; anonKey: string; serviceRoleKey: string }): Promise<boolean> {
  const updated = await db.query('update baseplane.projects set jwt_secret = $2, anon_key = $3, service_role_key = $4 where ref = $1', [
    ref,
    keys.jwtSecret,
    keys.anonKey,
    keys.serviceRoleKey,
  ])
  return updated.rowCount !== 0
}

/** The stored auth settings, the row locked until the transaction ends (for a read-modify-write). */
export async function lockAuthSettings<S>(db: Queryable, ref: string): Promise<S | undefined> {
  const { rows } = await db.query<{ auth_settings: S }>('select auth_settings from baseplane.projects where ref = $1 for update', [ref])
  return rows[0]?.auth_settings
}

export async function updateAuthSettings(db: Queryable, ref: string, settings: unknown): Promise<void> {
  await db.query('update baseplane.projects set auth_settings = $2 where ref = $1', [ref, settings])
}

/** The operator's timeout overrides; undefined when no such project. */
export async function readRoleTimeouts(db: Queryable, ref: string): Promise<StoredRoleTimeouts | undefined> {
  const { rows } = await db.query<{ role_timeouts: StoredRoleTimeouts }>('select role_timeouts from baseplane.projects where ref = $1', [ref])
  return rows[0]?.role_timeouts
}

/**
 * Changes the overrides in one statement (no read-modify-write race): all
 * dropped first when `reset`, then `cleared` removed and `values` set.
 * Returns the new overrides, undefined when no such project.
 */
export async function updateRoleTimeouts(
  db: Queryable,
  ref: string,
  change: { reset: boolean; cleared: string[]; values: Record<string, unknown> },
): Promise<StoredRoleTimeouts | undefined> {
  const { rows } = await db.query<{ role_timeouts: StoredRoleTimeouts }>(
    `update baseplane.projects
        set role_timeouts = ((case when $2 then '{}'::jsonb else role_timeouts end) - $3::text[]) || $4::jsonb
      where ref = $1
      returning role_timeouts`,
    [ref, change.reset, change.cleared, JSON.stringify(change.values)],
  )
  return rows[0]?.role_timeouts
}

/** One node at a time sizes the role limits: a session lock, false when another node holds it. */
export async function tryLockRoleLimits(db: Queryable): Promise<boolean> {
  const { rows } = await db.query<{ taken: boolean }>(`select pg_try_advisory_lock(hashtext('baseplane.role_limits')) as taken`)
  return rows[0]!.taken
}

export async function unlockRoleLimits(db: Queryable): Promise<void> {
  await db.query(`select pg_advisory_unlock(hashtext('baseplane.role_limits'))`)
}
