// The usage recorder's one statement (sql/catalogue/0013_usage.sql): a node's
// counts since its last write added to the minute rows every node adds to,
// and the users it saw become active inserted once per project and month.
// Both tables in one statement (two data-modifying CTEs), so a node writes
// once a minute however many projects it served, and either both land or
// neither does (a failed write is kept whole for the next).
import type pg from 'pg'
import type { ActiveUserBatch } from '../lib/metrics/active-users.ts'
import type { UsageRows } from '../lib/metrics/usage-ledger.ts'

const WRITE_USAGE = `
with counts as (
  insert into baseplane.usage_minutes as m (ref, minute, counter, value)
  select u.ref, to_timestamp(u.minute / 1000.0), u.counter, u.value
    from unnest($1::text[], $2::float8[], $3::text[], $4::bigint[]) as u(ref, minute, counter, value)
  on conflict (ref, minute, counter) do update set value = m.value + excluded.value
  returning 1
), users as (
  insert into baseplane.usage_active_users (ref, month, user_id, anonymous)
  select * from unnest($5::text[], $6::date[], $7::uuid[], $8::bool[])
  on conflict do nothing
  returning 1
)
select (select count(*) from counts)::int as counts, (select count(*) from users)::int as users`

/** Rows written, and users new to the month for the fleet (the others were written by a node before). */
export interface UsageWritten {
  counts: number
  users: number
}

export async function writeUsage(db: Pick<pg.Pool, 'query'>, rows: UsageRows, users: ActiveUserBatch): Promise<UsageWritten> {
  const { rows: answer } = await db.query<UsageWritten>({
    name: 'baseplane_write_usage',
    text: WRITE_USAGE,
    values: [rows.refs, rows.minutes, rows.counters, rows.values, users.refs, users.months, users.users, users.anonymous],
  })
  return answer[0]!
}
