// SQL of the quotas (issue 27 item 3) on the catalogue: the operator's
// overrides on the project's row, each project's month as the quotas count it
// (from the usage the fleet records), and the 80% / 100% notices.
import type { QuotaName, QuotaOverrides } from '../../lib/plans.ts'
import type { Queryable } from './queryable.ts'

/** The operator's overrides; undefined when no such project. */
export async function readQuotaOverrides(db: Queryable, ref: string): Promise<QuotaOverrides | undefined> {
  const { rows } = await db.query<{ quota_overrides: QuotaOverrides }>('select quota_overrides from baseplane.projects where ref = $1', [ref])
  return rows[0]?.quota_overrides
}

export async function writeQuotaOverrides(db: Queryable, ref: string, overrides: QuotaOverrides): Promise<boolean> {
  const result = await db.query('update baseplane.projects set quota_overrides = $2 where ref = $1', [ref, JSON.stringify(overrides)])
  return (result.rowCount ?? 0) > 0
}

/** A project's month as its quotas count it, with what decides its quotas. */
export interface QuotaUsageRow {
  ref: string
  plan: string
  quotaOverrides: QuotaOverrides
  readOnly: boolean
  /** Past its storage egress cap this month (workers/storage refuses its downloads). */
  storageEgressCapped: boolean
  dbServer: string
  dbOwnerRole: string
  used: Record<QuotaName, number | null>
}

/**
 * Every project's (or one project's) month from `firstDay` to `nextFirstDay`:
 * active users (exact, the fleet's), push deliveries sent and the platform's
 * mail (the days rolled up plus the minutes not yet), and the latest database
 * size sampled (null before any). One statement for the fleet.
 */
export async function quotaUsage(db: Queryable, firstDay: string, nextFirstDay: string, ref?: string): Promise<QuotaUsageRow[]> {
  const { rows } = await db.query<{
    ref: string
    plan: string
    quota_overrides: QuotaOverrides
    read_only: boolean
    storage_egress_capped: boolean
    storage_egress_bytes: string
    db_server: string
    db_owner_role: string
    monthly_active_users: string
    push_deliveries: string
    mail_sent: string
    database_size_bytes: string | null
    storage_size_bytes: string | null
  }>(
    `with counted as (
       select ref, counter, value from baseplane.usage_days
        where day >= $1::date and day < $2::date and (counter in ('mail_sent', 'bytes_out_storage') or counter like 'push\\_%\\_sent')
       union all
       select ref, counter, value from baseplane.usage_minutes
        where minute >= $1::date and minute < $2::date and (counter in ('mail_sent', 'bytes_out_storage') or counter like 'push\\_%\\_sent')),
     totals as (
       select ref, sum(value) filter (where counter like 'push%') as push, sum(value) filter (where counter = 'mail_sent') as mail, sum(value) filter (where counter = 'bytes_out_storage') as egress
         from counted group by ref),
     users as (
       select ref, count(*) as users from baseplane.usage_active_users where month = $1::date group by ref)
     select p.ref, p.plan, p.quota_overrides, p.read_only, p.storage_egress_capped, p.db_server, p.db_owner_role, coalesce(t.egress, 0) as storage_egress_bytes,
            coalesce(u.users, 0) as monthly_active_users, coalesce(t.push, 0) as push_deliveries, coalesce(t.mail, 0) as mail_sent,
            (select s.last_bytes from baseplane.usage_database_sizes s where s.ref = p.ref order by s.day desc limit 1) as database_size_bytes,
            (select z.last_bytes from baseplane.usage_storage_sizes z where z.ref = p.ref order by z.day desc limit 1) as storage_size_bytes
       from baseplane.projects p
       left join totals t on t.ref = p.ref
       left join users u on u.ref = p.ref
      where $3::text is null or p.ref = $3
      order by p.ref`,
    [firstDay, nextFirstDay, ref ?? null],
  )
  return rows.map((row) => ({
    ref: row.ref,
    plan: row.plan,
    quotaOverrides: row.quota_overrides,
    readOnly: row.read_only,
    storageEgressCapped: row.storage_egress_capped,
    dbServer: row.db_server,
    dbOwnerRole: row.db_owner_role,
    used: {
      monthly_active_users: Number(row.monthly_active_users),
      push_deliveries: Number(row.push_deliveries),
      mail_sent: Number(row.mail_sent),
      database_size_bytes: row.database_size_bytes === null ? null : Number(row.database_size_bytes),
      // The latest sample; a project's own view reads the live figure from its database (quotas.ts projectQuotas).
      storage_size_bytes: row.storage_size_bytes === null ? null : Number(row.storage_size_bytes),
      storage_egress_bytes: Number(row.storage_egress_bytes),
    },
  }))
}

export interface QuotaNotice {
  ref: string
  quota: QuotaName
  percent: 80 | 100
  used: number
  figure: number
}

/** Records crossings not yet recorded this month (one row per project, quota and step); answers the new ones. */
export async function insertQuotaNotices(db: Queryable, month: string, notices: QuotaNotice[]): Promise<QuotaNotice[]> {
  if (notices.length === 0) return []
  const { rows } = await db.query<{ ref: string; quota: QuotaName; percent: 80 | 100; used: string; figure: string }>(
    `insert into baseplane.quota_notices (ref, month, quota, percent, used, figure)
     select ref, $1::date, quota, percent, used, figure
       from unnest($2::text[], $3::text[], $4::int[], $5::bigint[], $6::bigint[]) as n(ref, quota, percent, used, figure)
     on conflict do nothing
     returning ref, quota, percent, used, figure`,
    [month, notices.map((n) => n.ref), notices.map((n) => n.quota), notices.map((n) => n.percent), notices.map((n) => n.used), notices.map((n) => n.figure)],
  )
  return rows.map((row) => ({ ref: row.ref, quota: row.quota, percent: row.percent, used: Number(row.used), figure: Number(row.figure) }))
}

export async function setStorageEgressCapped(db: Queryable, ref: string, capped: boolean): Promise<void> {
  await db.query('update baseplane.projects set storage_egress_capped = $2 where ref = $1 and storage_egress_capped is distinct from $2', [ref, capped])
}

export async function setReadOnly(db: Queryable, ref: string, readOnly: boolean): Promise<void> {
  await db.query('update baseplane.projects set read_only = $2 where ref = $1 and read_only is distinct from $2', [ref, readOnly])
}
