// SQL the control plane runs on Auth's tables in a project's database, as the
// server's admin role: the mail record (`baseplane mail list`) and removing
// old anonymous users.
import type { Queryable } from './queryable.ts'

export interface MailRow {
  id: string
  created_at: Date
  kind: string
  recipient: string
  subject: string
  html: string | null
  delivery: string
}

/** The project's mail record, newest first. */
export async function latestMail(db: Queryable, limit: number): Promise<MailRow[]> {
  const { rows } = await db.query<MailRow>('select id, created_at, kind, recipient, subject, html, delivery from auth.mail_messages order by id desc limit $1', [limit])
  return rows
}

/** Deletes anonymous users created more than `days` days ago (their sessions, identities, factors and codes cascade); returns how many. */
export async function deleteAnonymousUsers(db: Queryable, days: number): Promise<number> {
  const { rowCount } = await db.query(`delete from auth.users where is_anonymous and created_at < now() - make_interval(days => $1)`, [days])
  return rowCount ?? 0
}
