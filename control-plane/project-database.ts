// Creating, upgrading and dropping one project's database and its roles, on
// the server the catalogue places it on, as that server's admin role.
import pg from 'pg'
import { escapeIdentifier, escapeLiteral } from 'pg'
import type { Plan } from '../lib/catalogue.ts'
import { migrate, runScript } from '../lib/db/migrations.ts'
import { inTransaction } from '../lib/db/request-transaction.ts'
import { adminUrlFor } from '../lib/db/server-url.ts'
import { planLimits } from '../lib/plans.ts'

export interface ProjectDatabaseNames {
  database: string
  apiRole: string
  apiPassword: string
  ownerRole: string
  ownerPassword: string
}


/** Runs `work` on a connection of its own to `url` (a server's admin URL), closed afterwards. */
export async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, application_name: 'baseplane-control-plane' })
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

async function serverVersion(admin: pg.ClientBase): Promise<number> {
  const { rows } = await admin.query<{ version: string }>(`select current_setting('server_version_num') as version`)
  return Number(rows[0]!.version)
}

/**
 * The plan's CONNECTION LIMIT on both login roles, so an owner's tools cannot
 * take the server's connections from every other project. On PostgreSQL 16+
 * the api role may also use the server's reserved_connections slots: when the
 * owners have taken the rest, the platform's own API connections still get in.
 */
async function limitRoles(admin: pg.ClientBase, names: Pick<ProjectDatabaseNames, 'apiRole' | 'ownerRole'>, plan: Plan, apiLimit: number, version: number): Promise<void> {
  const limits = planLimits(plan)
  await admin.query(`alter role ${escapeIdentifier(names.apiRole)} connection limit ${apiLimit}`)
  await admin.query(`alter role ${escapeIdentifier(names.ownerRole)} connection limit ${limits.ownerConnections}`)
  // The api role is NOINHERIT (it may only SET ROLE to the API roles), so this
  // one grant must say INHERIT: the reserved slots are checked against the
  // privileges a role has, not the roles it is a member of.
  if (version >= RESERVED_CONNECTIONS_VERSION) {
    await admin.query(`grant pg_use_reserved_connections to ${escapeIdentifier(names.apiRole)} with inherit true`)
  }
}

export interface PlacedProject {
  names: Pick<ProjectDatabaseNames, 'apiRole' | 'ownerRole'>
  plan: Plan
  /** The api role's CONNECTION LIMIT for the fleet as it is (lib/plans.ts apiRoleLimit). */
  apiLimit: number
}

/**
 * Brings the role limits of projects on one server to their plans and the
 * fleet's size, touching only roles that differ (start-up runs this for every
 * project, and a node that sees the fleet change size).
 */
export async function limitProjectRoles(serverUrl: string, projects: PlacedProject[]): Promise<void> {
  if (projects.length === 0) return
  await withClient(serverUrl, async (admin) => {
    const version = await serverVersion(admin)
    const { rows } = await admin.query<{ rolname: string; rolconnlimit: number; reserved: boolean }>(
      `select rolname, rolconnlimit,
              ${version >= RESERVED_CONNECTIONS_VERSION ? `pg_has_role(oid, 'pg_use_reserved_connections', 'usage')` : 'true'} as reserved
         from pg_roles where rolname = any($1)`,
      [projects.flatMap((p) => [p.names.apiRole, p.names.ownerRole])],
    )
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
  const created: Array<() => string> = []
  try {
    await withClient(serverUrl, async (admin) => {
      await runScript(admin, 'cluster')
      await admin.query(`create role ${escapeIdentifier(names.apiRole)} login noinherit password ${escapeLiteral(names.apiPassword)}`)
      created.push(() => `drop role if exists ${escapeIdentifier(names.apiRole)}`)
      await admin.query(`grant anon, authenticated, service_role to ${escapeIdentifier(names.apiRole)}`)
      await admin.query(`create role ${escapeIdentifier(names.ownerRole)} login password ${escapeLiteral(names.ownerPassword)}`)
      created.push(() => `drop role if exists ${escapeIdentifier(names.ownerRole)}`)
      await limitRoles(admin, names, plan, apiLimit, await serverVersion(admin))
      await admin.query(`create database ${escapeIdentifier(names.database)}`)
      created.push(() => `drop database if exists ${escapeIdentifier(names.database)} with (force)`)
    })
    await upgradeProjectDatabase(serverUrl, names)
  } catch (error) {
    await withClient(serverUrl, async (admin) => {
      for (const undo of created.reverse()) await admin.query(undo())
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
    await admin.query(`drop database if exists ${escapeIdentifier(names.database)} with (force)`)
    await admin.query(`drop role if exists ${escapeIdentifier(names.apiRole)}`)
    await admin.query(`drop role if exists ${escapeIdentifier(names.ownerRole)}`)
  })
}

/** Runs `sql` in the project's database as the admin role, in one transaction. */
export async function runInProjectDatabase<T>(
  serverUrl: string,
  database: string,
  work: (client: pg.Client) => Promise<T>,
): Promise<T> {
  return withClient(adminUrlFor(serverUrl, database), (client) => inTransaction(client, work))
}
