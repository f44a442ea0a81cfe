// Creating, upgrading and dropping one project's database and its roles, on
// the server the catalogue places it on, as that server's admin role.
import pg from 'pg'
import type { Plan, ProjectRecord } from '../lib/catalogue.ts'
import { migrate, runScript } from '../lib/db/migrations.ts'
import { inTransaction } from '../lib/db/request-transaction.ts'
import { AUTH_SESSION } from '../lib/db/auth-transaction.ts'
import { boundRoundTrips, KEEPALIVE_IDLE_MS } from '../lib/db/round-trip-deadline.ts'
import { platformLoginName, platformLoginOf, platformLoginRoles } from '../lib/db/platform-logins.ts'
import { adminUrlFor } from '../lib/db/server-url.ts'
import { apiRoleLimit, planLimits } from '../lib/plans.ts'
import * as db from './db/project-database.ts'
import { installDefaultExtensions } from './default-extensions.ts'

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

/**
 * A round trip of the control plane's own on a project's server: generous (CREATE DATABASE on a
 * busy server takes seconds), but bounded, so a server that hangs answers 503, never a hang;
 * migrations hold a longer one of their own (lib/db/migrations.ts).
 */
export const ADMIN_DEADLINE_MS = 60_000

export async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>, deadlineMs = ADMIN_DEADLINE_MS): Promise<T> {
  const client = new pg.Client({ connectionString: url, application_name: 'baseplane-control-plane', connectionTimeoutMillis: CONNECT_TIMEOUT_MS, keepAlive: true, keepAliveInitialDelayMillis: KEEPALIVE_IDLE_MS })
  boundRoundTrips(client, deadlineMs)
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end().catch(() => {})
  }
}

function migrationVars(names: ProjectDatabaseNames): Record<string, string> {
  return {
    api_role: names.apiRole,
    auth_role: platformLoginName(names.apiRole, 'auth'),
    platform_role: platformLoginName(names.apiRole, 'platform'),
    owner_role: names.ownerRole,
    database: names.database,
  }
}

/**
 * The platform's own login roles beside the API's (lib/db/platform-logins.ts),
 * made when missing: a project made before they existed gets them on the next
 * start's upgrade, before the SQL that grants them (sql/project/0030). The
 * platform's role is BYPASSRLS, so no policy of the owner's runs on its reads.
 */
async function ensurePlatformLogins(admin: pg.ClientBase, names: Pick<ProjectDatabaseNames, 'apiRole' | 'apiPassword'>): Promise<void> {
  const logins = { dbApiRole: names.apiRole, dbApiPassword: names.apiPassword }
  for (const login of ['auth', 'platform'] as const) {
    const role = platformLoginOf(logins, login)
    if (await db.roleExists(admin, role.user)) continue
    await db.createLoginRole(admin, role.user, role.password, { noinherit: true, bypassrls: login === 'platform' })
    // A project made before these roles: they take the API role's limit and slots until the next sizing.
    const api = (await db.roleLimits(admin, [names.apiRole], false))[0]
    if (api !== undefined) await db.setConnectionLimit(admin, role.user, api.rolconnlimit)
    if ((await db.serverVersion(admin)) >= RESERVED_CONNECTIONS_VERSION) await db.grantReservedConnections(admin, role.user)
  }
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
  // Auth's and Push's login roles serve the same requests as the API's, so each may take the API's share.
  for (const role of platformLoginRoles(names.apiRole)) await db.setConnectionLimit(admin, role, apiLimit)
  await db.setConnectionLimit(admin, names.ownerRole, limits.ownerConnections)
  // The api role is NOINHERIT (it may only SET ROLE to the API roles), so this
  // one grant must say INHERIT: the reserved slots are checked against the
  // privileges a role has, not the roles it is a member of.
  if (version >= RESERVED_CONNECTIONS_VERSION) {
    for (const role of platformLoginRoles(names.apiRole)) await db.grantReservedConnections(admin, role)
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
    const rows = await db.roleLimits(admin, projects.flatMap((p) => [...platformLoginRoles(p.names.apiRole), p.names.ownerRole]), version >= RESERVED_CONNECTIONS_VERSION)
    const current = new Map(rows.map((row) => [row.rolname, row]))
    for (const project of projects) {
      const limits = planLimits(project.plan)
      const logins = platformLoginRoles(project.names.apiRole).map((role) => current.get(role))
      const owner = current.get(project.names.ownerRole)
      // A project whose platform logins are not made yet is limited after its upgrade makes them.
      if (logins.some((login) => login === undefined) || !owner) continue
      if (logins.some((login) => login!.rolconnlimit !== project.apiLimit || !login!.reserved) || owner.rolconnlimit !== limits.ownerConnections) {
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
      created.push(async (a) => {
        for (const role of platformLoginRoles(names.apiRole).slice(1)) await db.dropRole(a, role)
      })
      await ensurePlatformLogins(admin, names)
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
  return withClient(adminUrlFor(serverUrl, names.database), async (client) => {
    await ensurePlatformLogins(client, names)
    const applied = await migrate(client, 'project', migrationVars(names))
    await installDefaultExtensions(client, names.database)
    return applied
  })
}

export async function dropProjectDatabase(serverUrl: string, names: Pick<ProjectDatabaseNames, 'database' | 'apiRole' | 'ownerRole'>): Promise<void> {
  await withClient(serverUrl, async (admin) => {
    await db.dropDatabase(admin, names.database)
    for (const role of platformLoginRoles(names.apiRole)) await db.dropRole(admin, role)
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
    for (const role of platformLoginRoles(names.apiRole)) await db.setLogin(admin, role, login)
    await db.setLogin(admin, names.ownerRole, login)
  })
}

/** Ends every session of the project's login roles: the nodes' pools see their connections end and drop them. */
export async function endProjectSessions(serverUrl: string, names: Pick<ProjectDatabaseNames, 'apiRole' | 'ownerRole'>): Promise<number> {
  return withClient(serverUrl, (admin) => db.terminateSessions(admin, [...platformLoginRoles(names.apiRole), names.ownerRole]))
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

/**
 * Runs `work` on a connection of its own to the project's database as one of
 * its login roles, never as the server's admin role: for what may run the
 * owner's code (a trigger on auth.users or push.messages, a function a GraphQL
 * document calls), which as a superuser could reset its role to the server's
 * admin. `api`: the API's role, which may only become the API roles; `auth`:
 * Auth's, switched to baseplane_auth_admin as Auth's worker is; `owner`: the
 * project's owner role, as its developers connect (what `baseplane db url`
 * names: the table editor's reads and writes, the migrations and the SQL
 * editor's owner runs, so row-level security and grants are the owner's
 * own). `deadlineMs` bounds each round trip (the platform's own by default).
 */
export async function withProjectLogin<T>(
  serverUrl: string,
  project: ProjectRecord,
  login: 'api' | 'auth' | 'owner',
  work: (client: pg.Client) => Promise<T>,
  deadlineMs = ADMIN_DEADLINE_MS,
): Promise<T> {
  const url = new URL(adminUrlFor(serverUrl, project.dbName))
  const role =
    login === 'api' ? { user: project.dbApiRole, password: project.dbApiPassword } : login === 'owner' ? { user: project.dbOwnerRole, password: project.dbOwnerPassword } : platformLoginOf(project, 'auth')
  url.username = encodeURIComponent(role.user)
  url.password = encodeURIComponent(role.password)
  return withClient(
    url.toString(),
    async (client) => {
      if (login === 'auth') await client.query(AUTH_SESSION)
      return work(client)
    },
    deadlineMs,
  )
}

/** Runs `work` in one transaction as withProjectLogin() connects. */
export async function runAsProjectLogin<T>(serverUrl: string, project: ProjectRecord, login: 'api' | 'auth' | 'owner', work: (client: pg.Client) => Promise<T>): Promise<T> {
  return withProjectLogin(serverUrl, project, login, (client) => inTransaction(client, work))
}
