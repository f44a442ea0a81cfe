// A project's own API roles (issue 13 item 8): roles besides anon,
// authenticated and service_role that its tokens may name, as a Supabase
// developer makes with `create role editor; grant editor to authenticator`.
// The owner role cannot make roles: CREATEROLE on PostgreSQL 15 would let it
// alter other tenants' roles. So the platform makes them, for the CLI
// (commands/roles.ts) and the admin API (projectRoleRoutes).
//
// Like anon and authenticated, a project role is a cluster-wide NOLOGIN
// NOINHERIT role, shared by every project on the server that adds the same
// name: grants live in each project's database, and only its own login role
// connects there, so sharing shows no project anything of another. The
// platform marks the roles it makes with a comment (tenants, without
// CREATEROLE, cannot comment on roles) and refuses any other existing role,
// so a name can never hand a project's API another tenant's login role, a
// superuser or a platform role.
//
// Adding makes the role on the server (if needed), lets the project's login
// role SET ROLE to it and grants it what the API roles get in the platform's
// schemas, and only then commits the catalogue row: the data plane never
// accepts a role it cannot switch to. Removing commits the row's deletion
// first (the gate refuses the role from the next request), then takes back
// what adding gave. The owner's own grants and policies naming the role stay
// (they come back to life if it is added again); the role itself is dropped
// when no project of the server uses it and nothing in any database refers to it.
import { escapeIdentifier } from 'pg'
import type pg from 'pg'
import type { ProjectRecord } from '../lib/catalogue.ts'
import { API_ROLES, withPoolTransaction } from '../lib/db/request-transaction.ts'
import { platformErrors } from '../lib/errors.ts'
import { log } from '../lib/log.ts'
import { adminFields, REF_PARAM, type AdminRoute } from './admin-api.ts'
import type { ControlPlane } from './control-plane.ts'
import { runInProjectDatabase, withClient } from './project-database.ts'

/** Enough for any scheme of editors, moderators and readers; few enough that a loop cannot fill a server with roles. */
export const MAX_PROJECT_ROLES = 32

/** The comment that marks a role as one the platform made for projects. */
export const PROJECT_ROLE_MARK = 'baseplane project role'

/** A lowercase identifier: needs no quoting in the owner's SQL (`grant ... to editor`). */
const ROLE_NAME = /^[a-z][a-z0-9_]{0,62}$/

/** Names of the server's own roles, the platform's and Supabase's. */
const RESERVED_NAMES = new Set(['postgres', 'public', 'none', 'authenticator', 'current_user', 'current_role', 'session_user'])
const RESERVED_PREFIXES = ['pg_', 'bp_', 'baseplane', 'supabase']

/** What the API roles get in the platform's schemas (sql/project/0001); graphql's usage is PUBLIC's (0022). */
const PLATFORM_GRANTS = ['usage on schema auth', 'execute on function auth.uid(), auth.role(), auth.email(), auth.jwt()']

export function validateRoleName(name: string): string {
  if (!ROLE_NAME.test(name)) {
    throw platformErrors.invalidArgument(
      `Invalid role name "${name}": a lowercase letter, then lowercase letters, digits or underscores (at most 63 characters)`,
    )
  }
  if ((API_ROLES as readonly string[]).includes(name)) {
    throw platformErrors.invalidArgument(`"${name}" is a built-in API role of every project: it needs no adding`)
  }
  if (RESERVED_NAMES.has(name)) throw platformErrors.invalidArgument(`"${name}" is reserved: choose another role name`)
  const prefix = RESERVED_PREFIXES.find((reserved) => name.startsWith(reserved))
  if (prefix !== undefined) throw platformErrors.invalidArgument(`Role names starting with "${prefix}" are reserved: choose another name`)
  return name
}

export interface ProjectRolesView {
  ref: string
  /** The project's own roles, sorted; anon, authenticated and service_role are always accepted besides. */
  roles: string[]
}

function rolesView(project: ProjectRecord): ProjectRolesView {
  return { ref: project.ref, roles: project.projectRoles }
}

export async function listProjectRoles(controlPlane: ControlPlane, ref: string): Promise<ProjectRolesView> {
  return rolesView(await controlPlane.get(ref))
}

/**
 * Role changes of one server happen one at a time across the catalogue, so
 * "does another project still use it" holds until the change is done.
 */
function underServerLock<T>(controlPlane: ControlPlane, server: string, work: (catalogue: pg.PoolClient) => Promise<T>): Promise<T> {
  return withPoolTransaction(controlPlane.catalogue, async (catalogue) => {
    await catalogue.query(`select pg_advisory_xact_lock(hashtext('baseplane.project_roles'), hashtext($1))`, [server])
    return work(catalogue)
  })
}

/**
 * The same on the server itself, for platforms whose catalogues share it (a
 * session lock: the project database's grants run on another connection).
 */
async function onServer<T>(serverUrl: string, work: (admin: pg.Client) => Promise<T>): Promise<T> {
  return withClient(serverUrl, async (admin) => {
    await admin.query(`select pg_advisory_lock(hashtext('baseplane.project_roles'))`)
    return work(admin)
  })
}

interface ExistingRole {
  mark: string | null
  /** May log in, or holds an attribute beyond NOLOGIN NOINHERIT. */
  privileged: boolean
  /** Is a member of some role, so switching to it could lead further. */
  member: boolean
}

async function existingRole(admin: pg.ClientBase, name: string): Promise<ExistingRole | undefined> {
  const { rows } = await admin.query<ExistingRole>(
    `select shobj_description(r.oid, 'pg_authid') as mark,
            r.rolcanlogin or r.rolsuper or r.rolcreaterole or r.rolcreatedb or r.rolreplication or r.rolbypassrls or r.rolinherit as privileged,
            exists (select from pg_auth_members m where m.member = r.oid) as member
       from pg_roles r where r.rolname = $1`,
    [name],
  )
  return rows[0]
}

function checkReusable(name: string, role: ExistingRole): void {
  if (role.mark !== PROJECT_ROLE_MARK) {
    throw platformErrors.invalidArgument(`A role "${name}" already exists on the project's database server and Baseplane did not make it: choose another name`)
  }
  if (role.privileged || role.member) {
    throw platformErrors.invalidArgument(
      `The role "${name}" on the project's database server was changed after Baseplane made it (it may log in, has attributes or is a member of another role): restore it or drop it there first`,
    )
  }
}

/** Makes the role, marked in the same transaction, unless the server has a reusable one of the name. */
async function ensureServerRole(admin: pg.ClientBase, name: string): Promise<void> {
  const existing = await existingRole(admin, name)
  if (existing !== undefined) return checkReusable(name, existing)
  const role = escapeIdentifier(name)
  await admin.query('begin')
  try {
    await admin.query(`create role ${role} nologin noinherit`)
    await admin.query(`comment on role ${role} is '${PROJECT_ROLE_MARK}'`)
    await admin.query('commit')
  } catch (error) {
    await admin.query('rollback')
    throw error
  }
}

async function grantToProject(serverUrl: string, project: ProjectRecord, name: string): Promise<void> {
  await onServer(serverUrl, async (admin) => {
    await ensureServerRole(admin, name)
    await admin.query(`grant ${escapeIdentifier(name)} to ${escapeIdentifier(project.dbApiRole)}`)
    await runInProjectDatabase(serverUrl, project.dbName, async (client) => {
      for (const grant of PLATFORM_GRANTS) await client.query(`grant ${grant} to ${escapeIdentifier(name)}`)
    })
  })
}

/** DROP ROLE refuses while any database still grants the role something (another project's, or the owner's): then it stays. */
async function dropIfUnreferenced(admin: pg.ClientBase, name: string): Promise<void> {
  try {
    await admin.query(`drop role if exists ${escapeIdentifier(name)}`)
  } catch (error) {
    if ((error as { code?: string }).code !== '2BP01') throw error
    log.info('a project role is still referenced on its server and stays', { role: name })
  }
}

async function usedElsewhere(catalogue: pg.ClientBase, server: string, name: string): Promise<boolean> {
  const { rows } = await catalogue.query<{ used: boolean }>(
    `select exists (select from baseplane.project_roles r join baseplane.projects p using (ref) where r.name = $1 and p.db_server = $2) as used`,
    [name, server],
  )
  return rows[0]!.used
}

export interface RoleAdded extends ProjectRolesView {
  role: string
  /** False when the project had the role already (its grants are made again all the same). */
  added: boolean
}

export async function addProjectRole(controlPlane: ControlPlane, ref: string, name: string): Promise<RoleAdded> {
  const project = await controlPlane.get(ref)
  validateRoleName(name)
  const serverUrl = await controlPlane.serverUrl(project.dbServer)
  const added = await underServerLock(controlPlane, project.dbServer, async (catalogue) => {
    const { rows } = await catalogue.query<{ count: number; present: boolean }>(
      `select count(*)::int as count, coalesce(bool_or(name = $2), false) as present from baseplane.project_roles where ref = $1`,
      [ref, name],
    )
    const { count, present } = rows[0]!
    if (!present && count >= MAX_PROJECT_ROLES) {
      throw platformErrors.invalidArgument(`Project "${ref}" has ${count} roles, the most a project may have: remove one first`)
    }
    await grantToProject(serverUrl, project, name)
    if (present) return false
    await catalogue.query('insert into baseplane.project_roles (ref, name) values ($1, $2)', [ref, name])
    return true
  })
  await controlPlane.changed()
  return { ...(await listProjectRoles(controlPlane, ref)), role: name, added }
}

export interface RoleRemoved extends ProjectRolesView {
  role: string
  removed: true
}

export async function removeProjectRole(controlPlane: ControlPlane, ref: string, name: string): Promise<RoleRemoved> {
  const project = await controlPlane.get(ref)
  const deleted = await controlPlane.catalogue.query('delete from baseplane.project_roles where ref = $1 and name = $2', [ref, name])
  if (deleted.rowCount === 0) throw platformErrors.unknownProjectRole(ref, name)
  // Refused everywhere before the grants go, so no request meets a role it cannot switch to.
  await controlPlane.changed()
  const serverUrl = await controlPlane.serverUrl(project.dbServer)
  await underServerLock(controlPlane, project.dbServer, async (catalogue) => {
    const { rowCount } = await catalogue.query('select from baseplane.project_roles where ref = $1 and name = $2', [ref, name])
    if (rowCount !== 0) return // added again meanwhile: its grants are wanted
    const used = await usedElsewhere(catalogue, project.dbServer, name)
    await onServer(serverUrl, async (admin) => {
      if (await existingRole(admin, name) === undefined) return
      await admin.query(`revoke ${escapeIdentifier(name)} from ${escapeIdentifier(project.dbApiRole)}`)
      await runInProjectDatabase(serverUrl, project.dbName, async (client) => {
        for (const grant of PLATFORM_GRANTS) await client.query(`revoke ${grant} from ${escapeIdentifier(name)}`)
      })
      if (!used) await dropIfUnreferenced(admin, name)
    })
  })
  return { ...(await listProjectRoles(controlPlane, ref)), role: name, removed: true }
}

/**
 * After a project's database and login roles are dropped: its roles that no
 * other project of the server uses are dropped too (when nothing else refers to them).
 */
export async function releaseProjectRoles(controlPlane: ControlPlane, project: ProjectRecord, serverUrl: string): Promise<void> {
  if (project.projectRoles.length === 0) return
  await underServerLock(controlPlane, project.dbServer, async (catalogue) => {
    const unused: string[] = []
    for (const name of project.projectRoles) if (!(await usedElsewhere(catalogue, project.dbServer, name))) unused.push(name)
    if (unused.length === 0) return
    await onServer(serverUrl, async (admin) => {
      for (const name of unused) {
        const existing = await existingRole(admin, name)
        if (existing?.mark === PROJECT_ROLE_MARK) await dropIfUnreferenced(admin, name)
      }
    })
  })
}

/** Admin API routes (`/platform/v1/projects/{ref}/roles`), the same operations as the CLI. */
export function projectRoleRoutes(controlPlane: ControlPlane): AdminRoute[] {
  const path = '/projects/:ref/roles'
  return [
    { method: 'GET', path, where: REF_PARAM, handler: async ({ params }) => [200, await listProjectRoles(controlPlane, params.ref!)] },
    {
      method: 'POST',
      path,
      where: REF_PARAM,
      handler: async ({ params, body }) => {
        const name = adminFields(await body()).string('name')
        const result = await addProjectRole(controlPlane, params.ref!, name)
        return [result.added ? 201 : 200, { ref: result.ref, roles: result.roles }]
      },
    },
    {
      method: 'DELETE',
      path: `${path}/:name`,
      where: REF_PARAM,
      handler: async ({ params }) => {
        const result = await removeProjectRole(controlPlane, params.ref!, params.name!)
        return [200, { ref: result.ref, roles: result.roles }]
      },
    },
  ]
}
