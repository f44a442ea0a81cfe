// SQL on auth.audit_log_entries, in GoTrue's payload shape.
import type { Queryable } from './pool.ts'

export async function insertAuditEntry(db: Queryable, actorId: string | null, action: string, traits: Record<string, unknown>, ip: string): Promise<void> {
  await db.query(
    `insert into auth.audit_log_entries (payload, ip_address) values (json_build_object('actor_id', $1::text, 'action', $2::text, 'log_type', 'account', 'traits', $3::json), $4)`,
    [actorId, action, JSON.stringify(traits), ip],
  )
}
