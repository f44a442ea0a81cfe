// SQL on the catalogue's usage tables (sql/catalogue/0013_usage.sql): the
// fleet's periodic jobs (claiming them, rolling minutes up, pruning, the
// database sizes) and the reads of a month (one project's, and every
// project's for the export, read through a cursor). Times cross as UTC
// instants and `YYYY-MM-DD` dates; day and hour boundaries are taken in UTC
// whatever the session's time zone.
import type { Queryable } from './queryable.ts'
import { PEAK_COUNTER_SQL } from '../../lib/metrics/usage-counters.ts'

/** A counter's figure over several rows: their sum, or a peak's largest (lib/metrics/usage-counters.ts isPeakCounter). */
const ROLLED = `case when ${PEAK_COUNTER_SQL} then max(value) else sum(value) end`
/** PEAK_COUNTER_SQL on the counter of `table` (an upsert's target, beside `excluded`). */
const PEAK_OF = (table: string) => PEAK_COUNTER_SQL.replace('counter', `${table}.counter`)

/** Claims the jobs that are due (moving each one's `due_at` a period on), in one statement; answers those this node got. */
export async function claimDueJobs(db: Queryable, holder: string, periods: Record<string, number>): Promise<string[]> {
  const jobs = Object.keys(periods)
  const { rows } = await db.query<{ job: string }>({
    name: 'baseplane_usage_claim_jobs',
    text: `update baseplane.usage_jobs j
              set due_at = now() + make_interval(secs => p.seconds), holder = $1, claimed_at = now()
             from unnest($2::text[], $3::float8[]) as p(job, seconds)
            where j.job = p.job and j.due_at <= now()
        returning j.job`,
    values: [holder, jobs, jobs.map((job) => periods[job]!)],
  })
  return rows.map((row) => row.job)
}

export interface RolledUp {
  minutes: number
  hours: number
  days: number
}

/**
 * Moves every minute row before `before` into the hours and days (added to
 * what they hold) and deletes it, in one statement: a read never sees a count
 * twice or not at all, and a node's write to a minute being moved waits and
 * then inserts it afresh, for the next rollup.
 */
export async function rollUpMinutes(db: Queryable, before: Date): Promise<RolledUp> {
  const { rows } = await db.query<RolledUp>({
    name: 'baseplane_usage_roll_up',
    text: `with moved as (
             delete from baseplane.usage_minutes where minute < $1 returning ref, minute, counter, value
           ), hours as (
             insert into baseplane.usage_hours as h (ref, hour, counter, value)
             select ref, date_trunc('hour', minute, 'UTC'), counter, ${ROLLED} from moved group by 1, 2, 3
             on conflict (ref, hour, counter) do update set value = case when ${PEAK_OF('h')} then greatest(h.value, excluded.value) else h.value + excluded.value end
             returning 1
           ), days as (
             insert into baseplane.usage_days as d (ref, day, counter, value)
             select ref, (minute at time zone 'UTC')::date, counter, ${ROLLED} from moved group by 1, 2, 3
             on conflict (ref, day, counter) do update set value = case when ${PEAK_OF('d')} then greatest(d.value, excluded.value) else d.value + excluded.value end
             returning 1
           )
           select (select count(*) from moved)::int as minutes, (select count(*) from hours)::int as hours, (select count(*) from days)::int as days`,
    values: [before],
  })
  return rows[0]!
}

export interface Pruned {
  hours: number
  days: number
  activeUsers: number
  sizes: number
}

/** Deletes hourly rows before `hoursBefore` and daily rows, active users and sizes before `daysBefore` (`YYYY-MM-DD`). */
export async function pruneBefore(db: Queryable, hoursBefore: Date, daysBefore: string): Promise<Pruned> {
  const { rows } = await db.query<Pruned>({
    name: 'baseplane_usage_prune',
    text: `with h as (delete from baseplane.usage_hours where hour < $1 returning 1),
                d as (delete from baseplane.usage_days where day < $2::date returning 1),
                u as (delete from baseplane.usage_active_users where month < $2::date returning 1),
                s as (delete from baseplane.usage_database_sizes where day < $2::date returning 1),
                z as (delete from baseplane.usage_storage_sizes where day < $2::date returning 1)
           select (select count(*) from h)::int as hours, (select count(*) from d)::int as days,
                  (select count(*) from u)::int as "activeUsers", (select count(*) from s)::int as sizes`,
    values: [hoursBefore, daysBefore],
  })
  return rows[0]!
}

/** Every project's server and database (the size sampling's list; lighter than a project's record). */
export async function projectDatabases(db: Queryable): Promise<Array<{ ref: string; server: string; database: string }>> {
  const { rows } = await db.query<{ ref: string; server: string; database: string }>(
    'select ref, db_server as server, db_name as database from baseplane.projects order by db_server, ref',
  )
  return rows
}

/** Sizes on disk of `databases`, asked of their server as its admin. */
export async function databaseSizes(db: Queryable, databases: string[]): Promise<Map<string, number>> {
  const { rows } = await db.query<{ name: string; bytes: string }>(
    'select datname as name, pg_database_size(datname)::text as bytes from pg_database where datname = any($1::text[])',
    [databases],
  )
  return new Map(rows.map((row) => [row.name, Number(row.bytes)]))
}

/** Records Storage's samples taken at `at`: the day's latest per project. */
export async function upsertStorageSizes(db: Queryable, refs: string[], bytes: number[], at: Date): Promise<void> {
  await db.query(
    `insert into baseplane.usage_storage_sizes as z (ref, day, last_bytes, sampled_at)
     select u.ref, ($3::timestamptz at time zone 'UTC')::date, u.bytes, $3 from unnest($1::text[], $2::bigint[]) as u(ref, bytes)
     on conflict (ref, day) do update set
       last_bytes = case when excluded.sampled_at >= z.sampled_at then excluded.last_bytes else z.last_bytes end,
       sampled_at = greatest(z.sampled_at, excluded.sampled_at)`,
    [refs, bytes, at],
  )
}

/** Records samples taken at `at`: the day's peak and latest per project. */
export async function upsertDatabaseSizes(db: Queryable, refs: string[], bytes: number[], at: Date): Promise<void> {
  await db.query({
    name: 'baseplane_usage_sizes',
    text: `insert into baseplane.usage_database_sizes as z (ref, day, peak_bytes, last_bytes, sampled_at)
           select u.ref, ($3::timestamptz at time zone 'UTC')::date, u.bytes, u.bytes, $3
             from unnest($1::text[], $2::bigint[]) as u(ref, bytes)
           on conflict (ref, day) do update set
             peak_bytes = greatest(z.peak_bytes, excluded.peak_bytes),
             last_bytes = case when excluded.sampled_at >= z.sampled_at then excluded.last_bytes else z.last_bytes end,
             sampled_at = greatest(z.sampled_at, excluded.sampled_at)`,
    values: [refs, bytes, at],
  })
}

/** A month as the reads take it: its first day and the next month's (`YYYY-MM-DD`), and the same as instants. */
export interface MonthRange {
  firstDay: string
  nextFirstDay: string
  from: Date
  to: Date
}

// A month's counts: its days as rolled up, and its minutes not yet rolled up
// (moved in one statement, so the union counts each once). $1..$4: MonthRange.
const MONTH_COUNTS = `
  select ref, day, counter, value from baseplane.usage_days where day >= $1::date and day < $2::date
  union all
  select ref, (minute at time zone 'UTC')::date, counter, value from baseplane.usage_minutes where minute >= $3 and minute < $4`

/** One project's counts in the month, per day and counter (days without any are absent). */
export async function projectDayCounts(db: Queryable, ref: string, month: MonthRange): Promise<Array<{ day: string; counter: string; value: number }>> {
  const { rows } = await db.query<{ day: string; counter: string; value: string }>({
    name: 'baseplane_usage_project_days',
    text: `select to_char(day, 'YYYY-MM-DD') as day, counter, (${ROLLED})::text as value
             from (${MONTH_COUNTS}) c where ref = $5 group by day, counter order by day, counter`,
    values: [month.firstDay, month.nextFirstDay, month.from, month.to, ref],
  })
  return rows.map((row) => ({ day: row.day, counter: row.counter, value: Number(row.value) }))
}

export async function projectActiveUsers(db: Queryable, ref: string, firstDay: string): Promise<{ total: number; anonymous: number }> {
  const { rows } = await db.query<{ total: number; anonymous: number }>({
    name: 'baseplane_usage_project_active_users',
    text: `select count(*)::int as total, (count(*) filter (where anonymous))::int as anonymous
             from baseplane.usage_active_users where ref = $1 and month = $2::date`,
    values: [ref, firstDay],
  })
  return rows[0]!
}

export interface DaySize {
  day: string
  peakBytes: number
  lastBytes: number
  sampledAt: Date
}

export async function projectDatabaseSizes(db: Queryable, ref: string, month: MonthRange): Promise<DaySize[]> {
  const { rows } = await db.query<{ day: string; peak_bytes: string; last_bytes: string; sampled_at: Date }>({
    name: 'baseplane_usage_project_sizes',
    text: `select to_char(day, 'YYYY-MM-DD') as day, peak_bytes::text, last_bytes::text, sampled_at
             from baseplane.usage_database_sizes where ref = $1 and day >= $2::date and day < $3::date order by day`,
    values: [ref, month.firstDay, month.nextFirstDay],
  })
  return rows.map((row) => ({ day: row.day, peakBytes: Number(row.peak_bytes), lastBytes: Number(row.last_bytes), sampledAt: row.sampled_at }))
}

/** Whether any usage of `ref` is kept (a deleted project's usage is, for billing). */
export async function usageKept(db: Queryable, ref: string): Promise<boolean> {
  const { rows } = await db.query<{ kept: boolean }>({
    name: 'baseplane_usage_kept',
    text: `select exists (select 1 from baseplane.usage_days where ref = $1)
               or exists (select 1 from baseplane.usage_minutes where ref = $1)
               or exists (select 1 from baseplane.usage_active_users where ref = $1)
               or exists (select 1 from baseplane.usage_database_sizes where ref = $1) as kept`,
    values: [ref],
  })
  return rows[0]!.kept
}

/** A project's line of the month's export, as the cursor reads it. */
export interface ExportRow {
  ref: string
  /** Counter name → value; null when the project has no counts in the month. */
  counters: Record<string, string> | null
  active_users: string | null
  anonymous_active_users: string | null
  last_bytes: string | null
  peak_bytes: string | null
}

/**
 * Every project with usage in the month, in ref order, one row each: its
 * counters summed, its active users, its latest and largest database size.
 * Read through a cursor (control-plane/usage.ts): PostgreSQL aggregates, the
 * platform holds one batch of rows at a time. Values: exportValues(month).
 */
export const EXPORT_SQL = `
  with counts as (
    select ref, jsonb_object_agg(counter, value::text) as counters
      from (select ref, counter, ${ROLLED} as value from (${MONTH_COUNTS}) c group by ref, counter) s
     group by ref
  ), users as (
    select ref, count(*)::text as active_users, (count(*) filter (where anonymous))::text as anonymous_active_users
      from baseplane.usage_active_users where month = $1::date group by ref
  ), sizes as (
    select distinct on (ref) ref, last_bytes::text as last_bytes, (max(peak_bytes) over (partition by ref))::text as peak_bytes
      from baseplane.usage_database_sizes where day >= $1::date and day < $2::date
     order by ref, day desc
  )
  select coalesce(c.ref, u.ref, s.ref) as ref, c.counters, u.active_users, u.anonymous_active_users, s.last_bytes, s.peak_bytes
    from counts c
    full join users u on u.ref = c.ref
    full join sizes s on s.ref = coalesce(c.ref, u.ref)
   order by 1`

export function exportValues(month: MonthRange): unknown[] {
  return [month.firstDay, month.nextFirstDay, month.from, month.to]
}
