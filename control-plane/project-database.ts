// Creating, upgrading and dropping one project's database and its roles, on
// the server the catalogue places it on, as that server's admin role.
import pg from 'pg'
import { escapeIdentifier, escapeLiteral } from 'pg'
import { migrate, runScript } from '../lib/db/migrations.ts'

export interface ProjectDatabaseNames {
  database: string
  apiRole: string
  apiPassword: string
  ownerRole: string
  ownerPassword: string
}

export function adminUrlFor(serverUrl: string, database: string): string {
  const url = new URL(serverUrl)
  url.pathname = `/${database}`
  return url.toString()
}

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
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

/**
 * Creates roles and database, then installs the project SQL. On failure it
 * drops what it created (and only that), so nothing partial is left.
 */
export async function createProjectDatabase(serverUrl: string, names: ProjectDatabaseNames): Promise<void> {
  const created: Array<() => string> = []
  try {
    await withClient(serverUrl, async (admin) => {
      await runScript(admin, 'cluster')
      await admin.query(`create role ${escapeIdentifier(names.apiRole)} login noinherit password ${escapeLiteral(names.apiPassword)}`)
      created.push(() => `drop role if exists ${escapeIdentifier(names.apiRole)}`)
      await admin.query(`grant anon, authenticated, service_role to ${escapeIdentifier(names.apiRole)}`)
      await admin.query(`create role ${escapeIdentifier(names.ownerRole)} login password ${escapeLiteral(names.ownerPassword)}`)
      created.push(() => `drop role if exists ${escapeIdentifier(names.ownerRole)}`)
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
  return withClient(adminUrlFor(serverUrl, database), async (client) => {
    await client.query('begin')
    try {
      const result = await work(client)
      await client.query('commit')
      return result
    } catch (error) {
      await client.query('rollback').catch(() => {})
      throw error
    }
  })
}
