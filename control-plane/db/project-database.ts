// SQL on a project's server as its admin role: the project's database and its
// two login roles (the API's, which only SET ROLE to the API roles, and the
// owner's), their connection limits. Names are escaped here; passwords are
// literals (CREATE ROLE takes no parameters).
import { escapeIdentifier, escapeLiteral } from 'pg'
import type { Queryable } from './queryable.ts'

/** server_version_num, e.g. 160004. */
export async function serverVersion(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ version: string }>(`select current_setting('server_version_num') as version`)
  return Number(rows[0]!.version)
}

export async function setConnectionLimit(db: Queryable, role: string, limit: number): Promise<void> {
  await db.query(`alter role ${escapeIdentifier(role)} connection limit ${Number(limit)}`)
}

/**
 * PostgreSQL 16+: lets the role use the server's reserved_connections slots.
 * WITH INHERIT: the slots are checked against the privileges a role has, and
 * the API's login role is NOINHERIT.
 */
export async function grantReservedConnections(db: Queryable, role: string): Promise<void> {
  // SET FALSE: a membership the role (and owner code on its connections) cannot switch to.
  await db.query(`grant pg_use_reserved_connections to ${escapeIdentifier(role)} with inherit true, set false`)
}

export interface RoleLimitRow {
  rolname: string
  rolconnlimit: number
  /** May use the reserved slots (always true where the server has none, before PostgreSQL 16). */
  reserved: boolean
}

/** The connection limits of these roles, and whether they may use the reserved slots (`hasReservedSlots`: PostgreSQL 16+). */
export async function roleLimits(db: Queryable, roles: string[], hasReservedSlots: boolean): Promise<RoleLimitRow[]> {
  const { rows } = await db.query<RoleLimitRow>(
    `select rolname, rolconnlimit,
            ${hasReservedSlots ? `pg_has_role(oid, 'pg_use_reserved_connections', 'usage')` : 'true'} as reserved
       from pg_roles where rolname = any($1)`,
    [roles],
  )
  return rows
}

/** A login role; `noinherit` for the API's, which only switches to the API roles; `bypassrls` for the platform's (lib/db/platform-logins.ts). */
export async function createLoginRole(db: Queryable, role: string, password: string, options: { noinherit: boolean; bypassrls?: boolean }): Promise<void> {
  await db.query(
    `create role ${escapeIdentifier(role)} login${options.noinherit ? ' noinherit' : ''}${options.bypassrls ? ' bypassrls' : ''} password ${escapeLiteral(password)}`,
  )
}

export async function roleExists(db: Queryable, role: string): Promise<boolean> {
  const { rows } = await db.query('select 1 from pg_roles where rolname = $1', [role])
  return rows.length > 0
}

/** Lets the API's login role SET ROLE to the API roles. */
export async function grantApiRoles(db: Queryable, role: string): Promise<void> {
  await db.query(`grant anon, authenticated, service_role to ${escapeIdentifier(role)}`)
}

export async function createDatabase(db: Queryable, database: string): Promise<void> {
  await db.query(`create database ${escapeIdentifier(database)}`)
}

/** Drops the database, ending its connections. */
export async function dropDatabase(db: Queryable, database: string): Promise<void> {
  await db.query(`drop database if exists ${escapeIdentifier(database)} with (force)`)
}

/** Refused (2BP01) while any database still grants the role something. */
export async function dropRole(db: Queryable, role: string): Promise<void> {
  await db.query(`drop role if exists ${escapeIdentifier(role)}`)
}

/** LOGIN or NOLOGIN: a suspended or paused project's login roles are refused at connect; sessions already open are not ended by this. */
export async function setLogin(db: Queryable, role: string, login: boolean): Promise<void> {
  await db.query(`alter role ${escapeIdentifier(role)} ${login ? 'login' : 'nologin'}`)
}

/** Ends every session of these roles on the server (the data planes' pools, push actors, the owner's tools); answers how many. */
export async function terminateSessions(db: Queryable, roles: string[]): Promise<number> {
  const { rows } = await db.query<{ ended: number }>(
    'select count(*) filter (where pg_terminate_backend(pid))::int as ended from pg_stat_activity where usename = any($1) and pid <> pg_backend_pid()',
    [roles],
  )
  return rows[0]!.ended
}
