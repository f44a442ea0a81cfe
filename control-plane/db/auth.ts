// SQL the control plane runs on Auth's tables in a project's database, as the
// server's admin role: removing old anonymous users. (The mail record is read
// with Auth's own statement, workers/auth/face.ts latestMail.)
import type { Queryable } from './queryable.ts'

/** Deletes anonymous users created more than `days` days ago (their sessions, identities, factors and codes cascade); returns how many. */
export async function deleteAnonymousUsers(db: Queryable, days: number): Promise<number> {
  const { rowCount } = await db.query(`delete from auth.users where is_anonymous and created_at < now() - make_interval(days => $1)`, [days])
  return rowCount ?? 0
}
