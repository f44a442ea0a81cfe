// The monthly active users cap, checked at sign-in against the project's own
// tables (sql/project/0010) on the platform's login role (sql/project/0011: Auth's
// own role, where owner code runs, cannot write them): the user is added to the
// UTC month's list, and, when new, one is added to the month's count unless the
// count is at the cap. The count's row lock orders concurrent sign-ins.
import type { Queryable } from './pool.ts'

/** Whether `userId` may sign in this month under a cap of `cap` users (true: active already, or admitted now). */
export async function admitActiveUser(db: Queryable, userId: string, cap: number): Promise<boolean> {
  const { rows } = await db.query<{ added: number; counted: number }>({
    name: 'auth_admit_active_user',
    text: `with this_month as (select date_trunc('month', now() at time zone 'utc')::date as month),
      added as (
        insert into auth.monthly_active_users (month, user_id) select month, $1 from this_month
        on conflict do nothing returning month),
      counted as (
        insert into auth.monthly_active_user_counts as c (month, users) select month, 1 from added where $2::integer > 0
        on conflict (month) do update set users = c.users + 1 where c.users < $2::integer
        returning users)
      select (select count(*) from added)::integer as added, (select count(*) from counted)::integer as counted`,
    values: [userId, cap],
  })
  const { added, counted } = rows[0]!
  return added === 0 || counted === 1
}
