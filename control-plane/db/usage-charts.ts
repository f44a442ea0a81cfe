// SQL for the fleet-wide charts (the dashboard's Overview, the admin API's
// `/projects/{ref}/usage/recent`): one project's counts since an instant, from
// the hours already rolled up and the minutes not yet (sql/catalogue/0013_usage.sql).
// Both are read in one statement: the rollup moves minutes into hours in one
// statement too (db/usage.ts rollUpMinutes), so a count is seen once, never
// twice or not at all, whichever node wrote it.
import type { Queryable } from './queryable.ts'

export interface RecentCount {
  /** The hour's start (an hourly row) or the minute's (a row not yet rolled up). */
  at: Date
  /** True for a minute not yet rolled up; false for an hour. */
  minute: boolean
  counter: string
  value: number
}

/** `ref`'s hourly and pending minute counts from `from` (inclusive) to `to` (exclusive), oldest first. */
export async function projectRecentCounts(db: Queryable, ref: string, from: Date, to: Date): Promise<RecentCount[]> {
  const { rows } = await db.query<{ at: Date; minute: boolean; counter: string; value: string }>({
    name: 'baseplane_usage_recent_counts',
    text: `select hour as at, false as minute, counter, value::text from baseplane.usage_hours where ref = $1 and hour >= $2 and hour < $3
           union all
           select minute, true, counter, value::text from baseplane.usage_minutes where ref = $1 and minute >= $2 and minute < $3
           order by 1, 3`,
    values: [ref, from, to],
  })
  return rows.map((row) => ({ at: row.at, minute: row.minute, counter: row.counter, value: Number(row.value) }))
}
