// SQL of a project's own API roles (control-plane/project-roles.ts): the
// catalogue's rows (baseplane.project_roles) and lock, and on the project's
// server the role itself, its mark, its membership and what it is granted in
// the project's database.
import { escapeIdentifier } from 'pg'
import type { Queryable } from './queryable.ts'

/** What the API roles get in the platform's schemas (sql/project/0001); graphql's usage is PUBLIC's (0022). */
const PLATFORM_GRANTS = ['usage on schema auth', 'execute on function auth.uid(), auth.role(), auth.email(), auth.jwt()']

/** In the catalogue: one change of a server's project roles at a time (until the transaction ends). */
export async function lockServerRolesInCatalogue(db: Queryable, server: string): Promise<void> {
  await db.query(`select pg_advisory_xact_lock(hashtext('baseplane.project_roles'), hashtext($1))`, [server])
}

/** On the server itself, for platforms whose catalogues share it: a session lock (the grants run on another connection). */
export async function lockServerRolesOnServer(db: Queryable): Promise<void> {
  await db.query(`select pg_advisory_lock(hashtext('baseplane.project_roles'))`)
}

/** How many roles the project has, and whether `name` is one of them. */
export async function countProjectRoles(db: Queryable, ref: string, name: string): Promise<{ count: number; present: boolean }> {
  const { rows } = await db.query<{ count: number; present: boolean }>(
    `select count(*)::int as count, coalesce(bool_or(name = $2), false) as present from baseplane.project_roles where ref = $1`,
    [ref, name],
  )
  return rows[0]!
}

export async function insertProjectRole(db: Queryable, ref: string, name: string): Promise<void> {
  await db.query('insert into baseplane.project_roles (ref, name) values ($1, $2)', [ref, name])
}

/** False when the project had no such role. */
export async function deleteProjectRole(db: Queryable, ref: string, name: string): Promise<boolean> {
  const deleted = await db.query('delete from baseplane.project_roles where ref = $1 and name = $2', [ref, name])
  return deleted.rowCount !== 0
}

export async function projectHasRole(db: Queryable, ref: string, name: string): Promise<boolean> {
  const { rowCount } = await db.query('select from baseplane.project_roles where ref = $1 and name = $2', [ref, name])
  return rowCount !== 0
}

/** Whether any project on `server` has a role `name`. */
export async function roleUsedOnServer(db: Queryable, server: string, name: string): Promise<boolean> {
  const { rows } = await db.query<{ used: boolean }>(
    `select exists (select from baseplane.project_roles r join baseplane.projects p using (ref) where r.name = $1 and p.db_server = $2) as used`,
    [name, server],
  )
  return rows[0]!.used
}

export interface ServerRole {
  /** The role's comment. */
  mark: string | null
  /** May log in, or holds an attribute beyond NOLOGIN NOINHERIT. */
  privileged: boolean
  /** Is a member of some role, so switching to it could lead further. */
  member: boolean
}

/** On the server: the role of that name, if there is one. */
export async function serverRole(db: Queryable, name: string): Promise<ServerRole | undefined> {
  const { rows } = await db.query<ServerRole>(
    `select shobj_description(r.oid, 'pg_authid') as mark,
            r.rolcanlogin or r.rolsuper or r.rolcreaterole or r.rolcreatedb or r.rolreplication or r.rolbypassrls or r.rolinherit as privileged,
            exists (select from pg_auth_members m where m.member = r.oid) as member
       from pg_roles r where r.rolname = $1`,
    [name],
  )
  return rows[0]
}

/** On the server: a NOLOGIN NOINHERIT role marked with `mark` (run both in one transaction). */
export async function createMarkedRole(db: Queryable, name: string, mark: string): Promise<void> {
  const role = escapeIdentifier(name)
  await db.query(`create role ${role} nologin noinherit`)
  await db.query(`comment on role ${role} is '${mark.replace(/'/g, "''")}'`)
}

/** On the server: lets `member` (a project's login role) SET ROLE to `role`. */
export async function grantMembership(db: Queryable, role: string, member: string): Promise<void> {
  await db.query(`grant ${escapeIdentifier(role)} to ${escapeIdentifier(member)}`)
}

export async function revokeMembership(db: Queryable, role: string, member: string): Promise<void> {
  await db.query(`revoke ${escapeIdentifier(role)} from ${escapeIdentifier(member)}`)
}

/** In the project's database: what the API roles get in the platform's schemas. */
export async function grantPlatformSchemas(db: Queryable, role: string): Promise<void> {
  for (const grant of PLATFORM_GRANTS) await db.query(`grant ${grant} to ${escapeIdentifier(role)}`)
}

export async function revokePlatformSchemas(db: Queryable, role: string): Promise<void> {
  for (const grant of PLATFORM_GRANTS) await db.query(`revoke ${grant} from ${escapeIdentifier(role)}`)
}
