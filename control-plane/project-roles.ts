// A project's own API roles (issue 13 item 8): roles besides anon,
// authenticated and service_role that its tokens may name, as a Supabase
// developer makes with `create role editor; grant editor to authenticator`.
// The owner role cannot make roles: CREATEROLE on PostgreSQL 15 would let it
// alter other tenants' roles. So the platform makes them, for the CLI
// (commands/roles.ts) and the admin API (admin-api/roles.ts); the roles
// themselves, on the project's server, are server-roles.ts's.
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
import type { ProjectRecord } from '../lib/catalogue.ts'
import { API_ROLES } from '../lib/roles.ts'
import { platformErrors } from '../lib/errors.ts'
import type { ControlPlane } from './control-plane.ts'
import { getProject } from './projects.ts'
import * as db from './db/project-roles.ts'
import { grantToProject, revokeFromProject, underServerLock } from './server-roles.ts'

export { PROJECT_ROLE_MARK } from './server-roles.ts'

/** Enough for any scheme of editors, moderators and readers; few enough that a loop cannot fill a server with roles. */
export const MAX_PROJECT_ROLES = 32

/** A lowercase identifier: needs no quoting in the owner's SQL (`grant ... to editor`). */
const ROLE_NAME = /^[a-z][a-z0-9_]{0,62}$/

/** Names of the server's own roles, the platform's and Supabase's. */
const RESERVED_NAMES = new Set(['postgres', 'public', 'none', 'authenticator', 'current_user', 'current_role', 'session_user'])
const RESERVED_PREFIXES = ['pg_', 'bp_', 'baseplane', 'supabase']

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
  return rolesView(await getProject(controlPlane, ref))
}

export interface RoleAdded extends ProjectRolesView {
  role: string
  /** False when the project had the role already (its grants are made again all the same). */
  added: boolean
}

export async function addProjectRole(controlPlane: ControlPlane, ref: string, name: string): Promise<RoleAdded> {
  const project = await getProject(controlPlane, ref)
  validateRoleName(name)
  const serverUrl = await controlPlane.serverUrl(project.dbServer)
  const added = await underServerLock(controlPlane.catalogue, project.dbServer, async (catalogue) => {
    const { count, present } = await db.countProjectRoles(catalogue, ref, name)
    if (!present && count >= MAX_PROJECT_ROLES) {
      throw platformErrors.invalidArgument(`Project "${ref}" has ${count} roles, the most a project may have: remove one first`)
    }
    await grantToProject(serverUrl, project, name)
    if (present) return false
    await db.insertProjectRole(catalogue, ref, name)
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
  const project = await getProject(controlPlane, ref)
  if (!(await db.deleteProjectRole(controlPlane.catalogue, ref, name))) throw platformErrors.unknownProjectRole(ref, name)
  // Refused everywhere before the grants go, so no request meets a role it cannot switch to.
  await controlPlane.changed()
  const serverUrl = await controlPlane.serverUrl(project.dbServer)
  await revokeFromProject(controlPlane.catalogue, serverUrl, project, name)
  return { ...(await listProjectRoles(controlPlane, ref)), role: name, removed: true }
}
