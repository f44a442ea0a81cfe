// SQL on auth.mail_messages: every mail a project sent (the outbox when no
// SMTP server is set), and the count the per-hour ceiling is checked against.
import type { Queryable } from './pool.ts'

/**
 * Mail sent in the last hour, read under a transaction-scoped lock so that
 * concurrent senders are counted one after the other (the caller's
 * transaction holds the lock until it records its mail or rolls back).
 */
export async function mailSentLastHourLocked(db: Queryable): Promise<number> {
  await db.query(`select pg_advisory_xact_lock(hashtext('baseplane.auth.mail'))`)
  const { rows } = await db.query<{ sent: string }>({
    name: 'auth_mail_count',
    text: `select count(*) as sent from auth.mail_messages where created_at > now() - interval '1 hour'`,
  })
  return Number(rows[0]!.sent)
}

/** The platform's mail (SMTP or the outbox, not a send email hook's) this UTC month; call under mailSentLastHourLocked's lock. */
export async function platformMailThisMonth(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ sent: string }>({
    name: 'auth_mail_month_count',
    text: `select count(*) as sent from auth.mail_messages
            where created_at >= date_trunc('month', now() at time zone 'utc') at time zone 'utc' and delivery <> 'hook'`,
  })
  return Number(rows[0]!.sent)
}

/** A mail of the record as the operator and the project's service_role read it; `html` only for the outbox's. */
export interface OutboxMail {
  id: number
  created_at: string
  kind: string
  to: string
  subject: string
  html: string | null
  delivery: string
}

/** The project's mail record, newest first (bodies kept for outbox delivery only). */
export async function latestMail(db: Queryable, limit: number): Promise<OutboxMail[]> {
  const { rows } = await db.query<{ id: string; created_at: Date; kind: string; recipient: string; subject: string; html: string | null; delivery: string }>({
    name: 'auth_mail_latest',
    text: 'select id, created_at, kind, recipient, subject, html, delivery from auth.mail_messages order by id desc limit $1',
    values: [limit],
  })
  return rows.map((row) => ({ id: Number(row.id), created_at: row.created_at.toISOString(), kind: row.kind, to: row.recipient, subject: row.subject, html: row.html, delivery: row.delivery }))
}

export interface MailRecord {
  kind: string
  recipient: string
  subject: string
  /** The body when it went to the outbox; null when SMTP or the send email hook delivered it. */
  html: string | null
  delivery: 'smtp' | 'outbox' | 'hook'
}

export async function recordMail(db: Queryable, mail: MailRecord): Promise<void> {
  await db.query({
    name: 'auth_mail_record',
    text: `insert into auth.mail_messages (kind, recipient, subject, html, delivery) values ($1, $2, $3, $4, $5)`,
    values: [mail.kind, mail.recipient, mail.subject, mail.html, mail.delivery],
  })
}
