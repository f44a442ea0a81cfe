// SQL on auth.audit_log_entries, in GoTrue's payload shape.
import type { Queryable } from './pool.ts'

export async function insertAuditEntry(db: Queryable, actorId: string | null, action: string, traits: Record<string, unknown>, ip: string): Promise<void> {
  await db.query(
    `insert into auth.audit_log_entries (payload, ip_address) values (json_build_object('actor_id', $1::text, 'action', $2::text, 'log_type', 'account', 'traits', $3::json), $4)`,
    [actorId, action, JSON.stringify(traits), ip],
  )
}

/**
 * Anonymous sign-ups from `ip` in the last hour (their sessions' audit
 * entries: action user_signedup, provider anonymous; the partial index of
 * sql/project/0007). Takes a transaction-scoped lock per address first, so
 * concurrent sign-ups from one address are counted one after the other and
 * the limit holds exactly.
 */
export async function anonymousSignupsInLastHour(db: Queryable, ip: string): Promise<number> {
  await db.query({ name: 'auth_anonymous_signup_lock', text: `select pg_advisory_xact_lock(hashtext('auth.anonymous_signups:' || $1))`, values: [ip] })
  const { rows } = await db.query<{ n: number }>({
    name: 'auth_anonymous_signups',
    text: `select count(*)::int as n from auth.audit_log_entries
           where ip_address = $1 and created_at > now() - interval '1 hour'
             and (payload ->> 'action') = 'user_signedup' and (payload -> 'traits' ->> 'provider') = 'anonymous'`,
    values: [ip],
  })
  return rows[0]!.n
}
