// What the benchmark's projects hold on their PostgreSQL server, read as the
// server's admin: open connections of their api roles, and sizes on disk.
import { platformLoginRoles } from '../../lib/db/platform-logins.ts'
import fs from 'node:fs'
import pg from 'pg'
import type { Tenant } from './tenants-projects.ts'

export interface ServerSizes {
  /** The catalogue database (pg_database_size). */
  catalogueBytes: number
  /** Shared catalogs (roles, databases), tablespace pg_global. */
  globalBytes: number
  /** The projects' databases together (pg_database_size). */
  projectBytes: number
}

export class ServerWatch {
  private constructor(private readonly admin: pg.Client, private readonly catalogue: string) {}

  static async open(serverUrl: string, catalogueUrl: string): Promise<ServerWatch> {
    const admin = new pg.Client({ connectionString: serverUrl, application_name: 'bench-tenants' })
    await admin.connect()
    return new ServerWatch(admin, new URL(catalogueUrl).pathname.slice(1))
  }

  /**
   * Connections of these projects' login roles (api, auth, platform: lib/db/platform-logins.ts), the
   * platform's only ways into a project database (by name, so a shared DATABASE_URL server's other
   * platforms do not count).
   */
  async projectConnections(tenants: Tenant[]): Promise<number> {
    const { rows } = await this.admin.query<{ count: number }>('select count(*)::int as count from pg_stat_activity where usename = any($1)', [
      tenants.flatMap((t) => platformLoginRoles(t.record.dbApiRole)),
    ])
    return rows[0]!.count
  }

  async sizes(tenants: Tenant[]): Promise<ServerSizes> {
    const { rows } = await this.admin.query<{ catalogue: string; global: string; projects: string | null }>(
      `select pg_database_size($1) as catalogue, pg_tablespace_size('pg_global') as global,
              (select sum(pg_database_size(datname)) from pg_database where datname = any($2)) as projects`,
      [this.catalogue, tenants.map((t) => t.record.dbName)],
    )
    const row = rows[0]!
    return { catalogueBytes: Number(row.catalogue), globalBytes: Number(row.global), projectBytes: Number(row.projects ?? 0) }
  }

  close(): Promise<void> {
    return this.admin.end()
  }
}

/**
 * Memory of every PostgreSQL process on this machine (the embedded server's,
 * or a local DATABASE_URL's), as proportional set size: shared memory split
 * between the processes that map it, so backends are not counted for the
 * shared buffers each of them maps. Undefined where /proc cannot tell.
 */
export function postgresMemoryBytes(): number | undefined {
  let total = 0
  let seen = 0
  for (const pid of fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const command = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8')
      if (!/(^|\/)postgres(\0|:|$)/.test(command.split('\0')[0]!) && !command.startsWith('postgres:')) continue
      const pss = /^Pss:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))
      if (!pss) continue
      total += Number(pss[1]) * 1024
      seen += 1
    } catch {
      // The process ended while we looked, or is not ours to read.
    }
  }
  return seen > 0 ? total : undefined
}
