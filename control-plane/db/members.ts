// SQL on the catalogue's members (sql/catalogue/0024_members.sql): the
// accounts, their memberships, sessions, invitation and reset links, personal
// access tokens, their mail record and the sign-in throttle.
import type { MemberRole } from '../access.ts'
import type { Queryable } from './queryable.ts'

export interface MemberRow {
  id: string
  email: string
  password_hash: string | null
  totp_secret: string | null
  totp_last_step: string | null
  created_at: Date
}

export interface MembershipRow {
  member_id: string
  email: string
  ref: string
  role: MemberRole
  created_at: Date
  /** Whether the member has set a password (accepted an invitation). */
  joined: boolean
}

export interface TokenRow {
  id: string
  member_id: string
  name: string
  prefix: string
  created_at: Date
  expires_at: Date
  revoked_at: Date | null
  last_used_at: Date | null
}

const MEMBER = 'id, email, password_hash, totp_secret, totp_last_step, created_at'
const TOKEN = 'id, member_id, name, prefix, created_at, expires_at, revoked_at, last_used_at'
const MEMBERSHIP = `m.member_id, a.email, m.ref, m.role, m.created_at, (a.password_hash is not null) as joined`

export async function memberByEmail(db: Queryable, email: string): Promise<MemberRow | undefined> {
  const { rows } = await db.query<MemberRow>(`select ${MEMBER} from baseplane.members where email = $1`, [email])
  return rows[0]
}

export async function memberById(db: Queryable, id: string): Promise<MemberRow | undefined> {
  const { rows } = await db.query<MemberRow>(`select ${MEMBER} from baseplane.members where id = $1`, [id])
  return rows[0]
}

/** The member of that email, made (without a password) when there is none. */
export async function ensureMember(db: Queryable, email: string): Promise<MemberRow> {
  const { rows } = await db.query<MemberRow>(
    `insert into baseplane.members (email) values ($1) on conflict (email) do update set email = excluded.email returning ${MEMBER}`,
    [email],
  )
  return rows[0]!
}

export async function setPassword(db: Queryable, memberId: string, hash: string): Promise<void> {
  await db.query('update baseplane.members set password_hash = $2 where id = $1', [memberId, hash])
}

export async function setTotp(db: Queryable, memberId: string, secret: string | null, step: number | null): Promise<void> {
  await db.query('update baseplane.members set totp_secret = $2, totp_last_step = $3 where id = $1', [memberId, secret, step])
}

/** Records a TOTP step as used, unless it (or a later one) was: answers whether it was new. */
export async function useTotpStep(db: Queryable, memberId: string, step: number): Promise<boolean> {
  const { rowCount } = await db.query('update baseplane.members set totp_last_step = $2 where id = $1 and (totp_last_step is null or totp_last_step < $2)', [memberId, step])
  return rowCount === 1
}

export async function memberships(db: Queryable, filter: { memberId?: string; ref?: string }): Promise<MembershipRow[]> {
  const { rows } = await db.query<MembershipRow>(
    `select ${MEMBERSHIP} from baseplane.memberships m join baseplane.members a on a.id = m.member_id
      where ($1::uuid is null or m.member_id = $1) and ($2::text is null or m.ref = $2)
      order by a.email, m.ref`,
    [filter.memberId ?? null, filter.ref ?? null],
  )
  return rows
}

export async function allMembers(db: Queryable): Promise<MemberRow[]> {
  const { rows } = await db.query<MemberRow>(`select ${MEMBER} from baseplane.members order by email`)
  return rows
}

/** Sets the member's role on the project; answers the role before (undefined: a new membership). */
export async function upsertMembership(db: Queryable, memberId: string, ref: string, role: MemberRole): Promise<MemberRole | undefined> {
  const { rows } = await db.query<{ before: MemberRole | null }>(
    `with before as (select role from baseplane.memberships where member_id = $1 and ref = $2 for update)
     insert into baseplane.memberships (member_id, ref, role) values ($1, $2, $3)
     on conflict (member_id, ref) do update set role = excluded.role
     returning (select role from before) as before`,
    [memberId, ref, role],
  )
  return rows[0]!.before ?? undefined
}

/** Ends a membership; answers the role it had (undefined: there was none). */
export async function deleteMembership(db: Queryable, memberId: string, ref: string): Promise<MemberRole | undefined> {
  const { rows } = await db.query<{ role: MemberRole }>('delete from baseplane.memberships where member_id = $1 and ref = $2 returning role', [memberId, ref])
  return rows[0]?.role
}

export async function roleOf(db: Queryable, memberId: string, ref: string): Promise<MemberRole | undefined> {
  const { rows } = await db.query<{ role: MemberRole }>('select role from baseplane.memberships where member_id = $1 and ref = $2 for update', [memberId, ref])
  return rows[0]?.role
}

export async function insertLink(db: Queryable, memberId: string, purpose: 'invitation' | 'reset', tokenHash: string, seconds: number): Promise<void> {
  await db.query(`insert into baseplane.member_links (token_hash, member_id, purpose, expires_at) values ($1, $2, $3, now() + make_interval(secs => $4))`, [
    tokenHash,
    memberId,
    purpose,
    seconds,
  ])
}

/** Marks a live link used, once; answers its member (undefined: unknown, used or expired). */
export async function useLink(db: Queryable, purpose: 'invitation' | 'reset', tokenHash: string): Promise<string | undefined> {
  const { rows } = await db.query<{ member_id: string }>(
    `update baseplane.member_links set used_at = now()
      where token_hash = $1 and purpose = $2 and used_at is null and expires_at > now() returning member_id`,
    [tokenHash, purpose],
  )
  return rows[0]?.member_id
}

export async function insertToken(db: Queryable, memberId: string, name: string, tokenHash: string, prefix: string, expiresAt: Date): Promise<TokenRow> {
  const { rows } = await db.query<TokenRow>(
    `insert into baseplane.member_tokens (member_id, name, token_hash, prefix, expires_at) values ($1, $2, $3, $4, $5) returning ${TOKEN}`,
    [memberId, name, tokenHash, prefix, expiresAt],
  )
  return rows[0]!
}

export async function tokensOf(db: Queryable, memberId: string): Promise<TokenRow[]> {
  const { rows } = await db.query<TokenRow>(`select ${TOKEN} from baseplane.member_tokens where member_id = $1 order by created_at desc, id`, [memberId])
  return rows
}

export async function revokeToken(db: Queryable, memberId: string, id: string): Promise<TokenRow | undefined> {
  const { rows } = await db.query<TokenRow>(
    `update baseplane.member_tokens set revoked_at = coalesce(revoked_at, now()) where member_id = $1 and id = $2 returning ${TOKEN}`,
    [memberId, id],
  )
  return rows[0]
}

/** The token of that hash with whether it still works; its last use noted when it does. */
export async function tokenByHash(db: Queryable, tokenHash: string): Promise<(TokenRow & { email: string; live: boolean }) | undefined> {
  const { rows } = await db.query<TokenRow & { email: string; live: boolean }>(
    `with found as (
       select t.*, a.email, (t.revoked_at is null and t.expires_at > now()) as live
         from baseplane.member_tokens t join baseplane.members a on a.id = t.member_id where t.token_hash = $1
     ), noted as (
       update baseplane.member_tokens t set last_used_at = now() from found
        where t.id = found.id and found.live and (t.last_used_at is null or t.last_used_at < now() - interval '1 minute')
     )
     select ${TOKEN}, email, live from found`,
    [tokenHash],
  )
  return rows[0]
}

export async function insertSession(db: Queryable, memberId: string, idHash: string, seconds: number): Promise<void> {
  await db.query('delete from baseplane.member_sessions where expires_at < now()')
  await db.query('insert into baseplane.member_sessions (id_hash, member_id, expires_at) values ($1, $2, now() + make_interval(secs => $3))', [idHash, memberId, seconds])
}

export async function sessionMember(db: Queryable, idHash: string): Promise<string | undefined> {
  const { rows } = await db.query<{ member_id: string }>('select member_id from baseplane.member_sessions where id_hash = $1 and expires_at > now()', [idHash])
  return rows[0]?.member_id
}

export async function deleteSession(db: Queryable, idHash: string): Promise<void> {
  await db.query('delete from baseplane.member_sessions where id_hash = $1', [idHash])
}

/** Every session of the member (a password reset or change signs them out elsewhere). */
export async function deleteSessionsOf(db: Queryable, memberId: string): Promise<void> {
  await db.query('delete from baseplane.member_sessions where member_id = $1', [memberId])
}

export async function recordMail(db: Queryable, mail: { recipient: string; subject: string; html: string | null; delivery: 'smtp' | 'outbox' }): Promise<void> {
  await db.query('insert into baseplane.member_mail (recipient, subject, html, delivery) values ($1, $2, $3, $4)', [mail.recipient, mail.subject, mail.html, mail.delivery])
}

export async function mailTo(db: Queryable, recipient: string | null, limit: number): Promise<Array<{ id: string; recipient: string; subject: string; html: string | null; delivery: string; at: Date }>> {
  const { rows } = await db.query<{ id: string; recipient: string; subject: string; html: string | null; delivery: string; at: Date }>(
    `select id, recipient, subject, html, delivery, at from baseplane.member_mail where ($1::text is null or recipient = $1) order by id desc limit $2`,
    [recipient, limit],
  )
  return rows
}

/** Whether any of the keys is blocked: `limit` failures within `windowSeconds`. */
export async function throttled(db: Queryable, keys: string[], limit: number, windowSeconds: number): Promise<boolean> {
  const { rowCount } = await db.query(
    `select 1 from baseplane.member_throttle where key = any($1) and failures >= $2 and window_start > now() - make_interval(secs => $3)`,
    [keys, limit, windowSeconds],
  )
  return (rowCount ?? 0) > 0
}

/** Counts a failure against each key (a window past its time starts again). */
export async function noteFailure(db: Queryable, keys: string[], windowSeconds: number): Promise<void> {
  await db.query(
    `insert into baseplane.member_throttle (key, window_start, failures) select k, now(), 1 from unnest($1::text[]) k
     on conflict (key) do update set
       failures = case when member_throttle.window_start > now() - make_interval(secs => $2) then member_throttle.failures + 1 else 1 end,
       window_start = case when member_throttle.window_start > now() - make_interval(secs => $2) then member_throttle.window_start else now() end`,
    [keys, windowSeconds],
  )
}

export async function clearFailures(db: Queryable, keys: string[]): Promise<void> {
  await db.query('delete from baseplane.member_throttle where key = any($1)', [keys])
}
