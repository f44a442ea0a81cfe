// SQL on the catalogue's added database servers (baseplane.db_servers) and
// what the control plane asks a server about itself (its settings, its
// identity, the connections the platform's API roles hold there).
import type { Plan } from '../../lib/catalogue.ts'
import type { Queryable } from './queryable.ts'

/** An added server's admin URL; undefined when no such row. */
export async function serverAdminUrl(db: Queryable, id: string): Promise<string | undefined> {
  const { rows } = await db.query<{ admin_url: string }>('select admin_url from baseplane.db_servers where id = $1', [id])
  return rows[0]?.admin_url
}

export async function serverIds(db: Queryable): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>('select id from baseplane.db_servers')
  return rows.map((row) => row.id)
}

export async function serverIdTaken(db: Queryable, id: string): Promise<boolean> {
  const { rowCount } = await db.query('select 1 from baseplane.db_servers where id = $1', [id])
  return Boolean(rowCount)
}

/** The id under which a server (by its system identifier) is added already, if it is. */
export async function serverIdOfSystem(db: Queryable, systemIdentifier: string): Promise<string | undefined> {
  const { rows } = await db.query<{ id: string }>('select id from baseplane.db_servers where system_identifier = $1', [systemIdentifier])
  return rows[0]?.id
}

export async function insertServer(db: Queryable, server: { id: string; url: string; budget: number; systemIdentifier: string }): Promise<void> {
  await db.query('insert into baseplane.db_servers (id, admin_url, connection_budget, system_identifier) values ($1, $2, $3, $4)', [
    server.id,
    server.url,
    server.budget,
    server.systemIdentifier,
  ])
}

export interface ServerRow {
  id: string
  /** null for the default server (the catalogue's own, which has no row). */
  url: string | null
  budget: number | null
  draining: boolean
  /** The plans of its projects. */
  plans: Plan[]
}

/** Every server, the default (named `defaultId`) first, then in the order they were added. */
export async function serverRows(db: Queryable, defaultId: string): Promise<ServerRow[]> {
  const { rows } = await db.query<ServerRow>(
    `select s.id, s.admin_url as url, s.connection_budget as budget, s.draining,
            coalesce(array_agg(p.plan) filter (where p.ref is not null), '{}') as plans
       from (select $1::text as id, null::text as admin_url, null::integer as connection_budget, false as draining, null::timestamptz as created_at
             union all select id, admin_url, connection_budget, draining, created_at from baseplane.db_servers) s
       left join baseplane.projects p on p.db_server = s.id
      group by s.id, s.admin_url, s.connection_budget, s.draining, s.created_at
      order by s.created_at nulls first, s.id`,
    [defaultId],
  )
  return rows
}

export async function updateServerBudget(db: Queryable, id: string, budget: number): Promise<void> {
  await db.query('update baseplane.db_servers set connection_budget = $2 where id = $1', [id, budget])
}

export async function updateServerDraining(db: Queryable, id: string, draining: boolean): Promise<void> {
  await db.query('update baseplane.db_servers set draining = $2 where id = $1', [id, draining])
}

export async function countProjectsOn(db: Queryable, id: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>('select count(*)::int as n from baseplane.projects where db_server = $1', [id])
  return rows[0]!.n
}

/** Deletes the row unless a project is placed there (the foreign key would refuse it anyway). */
export async function deleteEmptyServer(db: Queryable, id: string): Promise<void> {
  await db.query('delete from baseplane.db_servers where id = $1 and not exists (select 1 from baseplane.projects where db_server = $1)', [id])
}

/** On the server itself: its PostgreSQL's identity (distinguishes two servers, whatever their addresses). */
export async function systemIdentifier(db: Queryable): Promise<string> {
  const { rows } = await db.query<{ id: string }>('select system_identifier::text as id from pg_control_system()')
  return rows[0]!.id
}

export interface ServerSettings {
  role: string
  superuser: boolean
  max: string
  superuser_reserved: string
  reserved: string | null
}

/** On the server: who we connect as, and the connection settings the budget is computed from. */
export async function serverSettings(db: Queryable): Promise<ServerSettings> {
  const { rows } = await db.query<ServerSettings>(
    `select current_user as role, (select rolsuper from pg_roles where rolname = current_user) as superuser,
            current_setting('max_connections') as max,
            current_setting('superuser_reserved_connections') as superuser_reserved,
            current_setting('reserved_connections', true) as reserved`,
  )
  return rows[0]!
}

/** On the server: connections the platform's project login roles (bp_*_api, bp_*_auth, bp_*_platform: lib/db/platform-logins.ts) hold now. */
export async function apiConnectionsInUse(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`select count(*)::int as n from pg_stat_activity where usename ~ '^bp_.+_(api|auth|platform)$'`)
  return rows[0]!.n
}
