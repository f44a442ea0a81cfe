// A project's own API role on its database server (project-roles.ts has the
// operations and their rules): made NOLOGIN NOINHERIT and marked with
// PROJECT_ROLE_MARK, granted to the project's login role with what the API
// roles get in the platform's schemas, taken back, and dropped when no project
// of the server uses it and nothing refers to it. Changes of one server's
// roles run one at a time: an advisory lock in the catalogue (its transaction
// holds the "does another project use it" answer) and one on the server.
// projects.ts deleteProject releases a deleted project's roles here.
import type pg from 'pg'
import type { ProjectRecord } from '../lib/catalogue.ts'
import { inTransaction, withPoolTransaction } from '../lib/db/request-transaction.ts'
import { platformErrors } from '../lib/errors.ts'
import { log } from '../lib/log.ts'
import { dropRole } from './db/project-database.ts'
import * as db from './db/project-roles.ts'
import { runInProjectDatabase, withClient } from './project-database.ts'

/** The comment that marks a role as one the platform made for projects. */
export const PROJECT_ROLE_MARK = 'baseplane project role'

/**
 * Role changes of one server happen one at a time across the catalogue, so
 * "does another project still use it" holds until the change is done.
 */
export function underServerLock<T>(catalogue: pg.Pool, server: string, work: (catalogue: pg.PoolClient) => Promise<T>): Promise<T> {
  return withPoolTransaction(catalogue, async (catalogue) => {
    await db.lockServerRolesInCatalogue(catalogue, server)
    return work(catalogue)
  })
}

/**
 * The same on the server itself, for platforms whose catalogues share it (a
 * session lock: the project database's grants run on another connection).
 */
async function onServer<T>(serverUrl: string, work: (admin: pg.Client) => Promise<T>): Promise<T> {
  return withClient(serverUrl, async (admin) => {
    await db.lockServerRolesOnServer(admin)
    return work(admin)
  })
}

function checkReusable(name: string, role: db.ServerRole): void {
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
  const existing = await db.serverRole(admin, name)
  if (existing !== undefined) return checkReusable(name, existing)
  await inTransaction(admin, (client) => db.createMarkedRole(client, name, PROJECT_ROLE_MARK))
}

/** Makes the role if needed, lets the project's login role SET ROLE to it, grants it the platform's schemas in the project's database. */
export async function grantToProject(serverUrl: string, project: ProjectRecord, name: string): Promise<void> {
  await onServer(serverUrl, async (admin) => {
    await ensureServerRole(admin, name)
    await db.grantMembership(admin, name, project.dbApiRole)
    await runInProjectDatabase(serverUrl, project.dbName, (client) => db.grantPlatformSchemas(client, name))
  })
}

/** DROP ROLE refuses while any database still grants the role something (another project's, or the owner's): then it stays. */
async function dropIfUnreferenced(admin: pg.ClientBase, name: string): Promise<void> {
  try {
    await dropRole(admin, name)
  } catch (error) {
    if ((error as { code?: string }).code !== '2BP01') throw error
    log.info('a project role is still referenced on its server and stays', { role: name })
  }
}

/**
 * Takes back what grantToProject gave, unless the project has the role again
 * meanwhile; drops the role when no other project of the server uses it.
 */
export async function revokeFromProject(catalogue: pg.Pool, serverUrl: string, project: ProjectRecord, name: string): Promise<void> {
  await underServerLock(catalogue, project.dbServer, async (catalogue) => {
    if (await db.projectHasRole(catalogue, project.ref, name)) return // added again meanwhile: its grants are wanted
    const used = await db.roleUsedOnServer(catalogue, project.dbServer, name)
    await onServer(serverUrl, async (admin) => {
      if ((await db.serverRole(admin, name)) === undefined) return
      await db.revokeMembership(admin, name, project.dbApiRole)
      await runInProjectDatabase(serverUrl, project.dbName, (client) => db.revokePlatformSchemas(client, name))
      if (!used) await dropIfUnreferenced(admin, name)
    })
  })
}

/**
 * After a project's database and login roles are dropped: its roles that no
 * other project of the server uses are dropped too (when nothing else refers to them).
 */
export async function releaseProjectRoles(catalogue: pg.Pool, project: ProjectRecord, serverUrl: string): Promise<void> {
  if (project.projectRoles.length === 0) return
  await underServerLock(catalogue, project.dbServer, async (catalogue) => {
    const unused: string[] = []
    for (const name of project.projectRoles) if (!(await db.roleUsedOnServer(catalogue, project.dbServer, name))) unused.push(name)
    if (unused.length === 0) return
    await onServer(serverUrl, async (admin) => {
      for (const name of unused) {
        const existing = await db.serverRole(admin, name)
        if (existing?.mark === PROJECT_ROLE_MARK) await dropIfUnreferenced(admin, name)
      }
    })
  })
}
