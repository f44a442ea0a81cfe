// Creating, upgrading and dropping one project's database and its roles, on
// the server the catalogue places it on, as that server's admin role.
import pg from 'pg'
import type { Plan, ProjectRecord } from '../lib/catalogue.ts'
import { migrate, runScript } from '../lib/db/migrations.ts'
import { inTransaction } from '../lib/db/request-transaction.ts'
import { adminUrlFor } from '../lib/db/server-url.ts'
import { apiRoleLimit, planLimits } from '../lib/plans.ts'
import * as db from './db/project-database.ts'

export interface ProjectDatabaseNames {
  database: string
  apiRole: string
  apiPassword: string
  ownerRole: string
  ownerPassword: string
}

/** A project's database and roles, as its catalogue row names them. */
export function projectDatabaseNames(project: ProjectRecord): ProjectDatabaseNames {
  return {
    database: project.dbName,
    apiRole: project.dbApiRole,
    apiPassword: project.dbApiPassword,
    ownerRole: project.dbOwnerRole,
    ownerPassword: project.dbOwnerPassword,
  }
}


/** Runs `work` on a connection of its own to `url` (a server's admin URL), closed afterwards. */
/**
 * How long a connection attempt to a project's server may take: a server that
 * accepts and never answers fails the operation (classified unavailable, so
 * the admin API and the dashboard answer 503 with Retry-After) instead of
 * holding the caller forever.
 */
export const CONNECT_TIMEOUT_MS = 5000

export async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, application_name: 'baseplane-control-plane', connectionTimeoutMillis: CONNECT_TIMEOUT_MS })
  client.on('error', () => {})
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end().catch(() => {})
  }
}

function migrationVars(names: ProjectDatabaseNames): Record<string, string> {
  return { api_role: names.apiRole, owner_role: names.ownerRole, database: names.database }
}

/** The cluster-wide roles every project database relies on (idempotent). */
export async function ensureClusterRoles(serverUrl: string): Promise<void> {
  await withClient(serverUrl, (admin) => runScript(admin, 'cluster'))
}

/** PostgreSQL 16 added reserved_connections and the role that may use them. */
const RESERVED_CONNECTIONS_VERSION = 160000

/**
 * The plan's CONNECTION LIMIT on both login roles, so an owner's tools cannot
 * take the server's connections from every other project. On PostgreSQL 16+
 * the api role may also use the server's reserved_connections slots: when the
 * owners have taken the rest, the platform's own API connections still get in.
 */
async function limitRoles(admin: pg.ClientBase, names: Pick<ProjectDatabaseNames, 'apiRole' | 'ownerRole'>, plan: Plan, apiLimit: number, version: number): Promise<void> {
  const limits = planLimits(plan)
  await db.setConnectionLimit(admin, names.apiRole, apiLimit)
  await db.setConnectionLimit(admin, names.ownerRole, limits.ownerConnections)
  // The api role is NOINHERIT (it may only SET ROLE to the API roles), so this
  // one grant must say INHERIT: the reserved slots are checked against the
  // privileges a role has, not the roles it is a member of.
  if (version >= RESERVED_CONNECTIONS_VERSION) {
    await db.grantReservedConnections(admin, names.apiRole)
  }
}

export interface PlacedProject {
  names: Pick<ProjectDatabaseNames, 'apiRole' | 'ownerRole'>
  plan: Plan
  /** The api role's CONNECTION LIMIT for the fleet as it is (lib/plans.ts apiRoleLimit). */
  apiLimit: number
}

/** A project as limitProjectRoles() takes it for a fleet of `nodes`; a project on the default server has its budget, `defaultServerBudget`. */
export function placedProject(project: ProjectRecord, nodes: number, defaultServerBudget: number): PlacedProject {
  return { names: projectDatabaseNames(project), plan: project.plan, apiLimit: apiRoleLimit(project.plan, nodes, project.dbServerBudget ?? defaultServerBudget) }
}

/**
 * Brings the role limits of projects on one server to their plans and the
 * fleet's size, touching only roles that differ (start-up runs this for every
 * project, and a node that sees the fleet change size).
 */
export async function limitProjectRoles(serverUrl: string, projects: PlacedProject[]): Promise<void> {
  if (projects.length === 0) return
  await withClient(serverUrl, async (admin) => {
    const version = await db.serverVersion(admin)
    const rows = await db.roleLimits(admin, projects.flatMap((p) => [p.names.apiRole, p.names.ownerRole]), version >= RESERVED_CONNECTIONS_VERSION)
    const current = new Map(rows.map((row) => [row.rolname, row]))
    for (const project of projects) {
      const limits = planLimits(project.plan)
      const api = current.get(project.names.apiRole)
      const owner = current.get(project.names.ownerRole)
      if (!api || !owner) continue
      if (api.rolconnlimit !== project.apiLimit || owner.rolconnlimit !== limits.ownerConnections || !api.reserved) {
        await limitRoles(admin, project.names, project.plan, project.apiLimit, version)
      }
    }
  })
}

/**
 * Creates roles and database, then installs the project SQL. On failure it
 * drops what it created (and only that), so nothing partial is left.
 */
export async function createProjectDatabase(serverUrl: string, names: ProjectDatabaseNames, plan: Plan, apiLimit: number): Promise<void> {
  const created: Array<(admin: pg.ClientBase) => Promise<void>> = []
  try {
    await withClient(serverUrl, async (admin) => {
      await runScript(admin, 'cluster')
      await db.createLoginRole(admin, names.apiRole, names.apiPassword, { noinherit: true })
      created.push((a) => db.dropRole(a, names.apiRole))
      await db.grantApiRoles(admin, names.apiRole)
      await db.createLoginRole(admin, names.ownerRole, names.ownerPassword, { noinherit: false })
      created.push((a) => db.dropRole(a, names.ownerRole))
      await limitRoles(admin, names, plan, apiLimit, await db.serverVersion(admin))
      await db.createDatabase(admin, names.database)
      created.push((a) => db.dropDatabase(a, names.database))
    })
    await upgradeProjectDatabase(serverUrl, names)
  } catch (error) {
    await withClient(serverUrl, async (admin) => {
      for (const undo of created.reverse()) await undo(admin)
    }).catch(() => {})
    throw error
  }
}

/** Applies project migrations not yet in this database; returns the versions applied. */
export async function upgradeProjectDatabase(serverUrl: string, names: ProjectDatabaseNames): Promise<number[]> {
  return withClient(adminUrlFor(serverUrl, names.database), (client) => migrate(client, 'project', migrationVars(names)))
}

export async function dropProjectDatabase(serverUrl: string, names: Pick<ProjectDatabaseNames, 'database' | 'apiRole' | 'ownerRole'>): Promise<void> {
  await withClient(serverUrl, async (admin) => {
    await db.dropDatabase(admin, names.database)
    await db.dropRole(admin, names.apiRole)
    await db.dropRole(admin, names.ownerRole)
  })
}

/**
 * Refuses (`login` false) or admits again the project's two login roles at
 * connect. Refusing ends nothing already connected: endProjectSessions() does,
 * once the data planes have stopped sending the project's requests.
 */
export async function setProjectLogin(serverUrl: string, names: Pick<ProjectDatabaseNames, 'apiRole' | 'ownerRole'>, login: boolean): Promise<void> {
  await withClient(serverUrl, async (admin) => {
    await db.setLogin(admin, names.apiRole, login)
    await db.setLogin(admin, names.ownerRole, login)
  })
}

/** Ends every session of the project's login roles: the nodes' pools see their connections end and drop them. */
export async function endProjectSessions(serverUrl: string, names: Pick<ProjectDatabaseNames, 'apiRole' | 'ownerRole'>): Promise<number> {
  return withClient(serverUrl, (admin) => db.terminateSessions(admin, [names.apiRole, names.ownerRole]))
}

/** Runs `sql` in the project's database as the admin role, in one transaction. */
export async function runInProjectDatabase<T>(
  serverUrl: string,
  database: string,
  work: (client: pg.Client) => Promise<T>,
): Promise<T> {
  return withClient(adminUrlFor(serverUrl, database), (client) => inTransaction(client, work))
}

/**
 * Runs `work` on a connection of its own to the project's database as the
 * admin role (a superuser, so it may SET ROLE to any role), with no
 * transaction open: `work` opens and ends its own (the GraphQL explorer's runs).
 */
export async function withProjectDatabase<T>(serverUrl: string, database: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  return withClient(adminUrlFor(serverUrl, database), work)
}
