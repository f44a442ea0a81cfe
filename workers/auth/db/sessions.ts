// SQL on auth.sessions, auth.refresh_tokens and auth.mfa_amr_claims. Each
// operation is one statement so that a sign-in or a refresh costs one round
// trip besides the user lookup.
import type { Queryable } from './pool.ts'
import { USER_COLUMNS, type UserRow } from './users.ts'


export interface AmrEntry {
  method: string
  timestamp: number
}

export interface NewSession {
  userId: string
  method: string
  refreshToken: string
  aal?: 'aal1' | 'aal2'
  factorId?: string | null
  ip: string
  userAgent: string | undefined
  /** Audit action (login, user_signedup...). */
  action: string
}

/** Creates a session with its first refresh token and amr claim; stamps last_sign_in_at; audits. */
export async function insertSession(db: Queryable, s: NewSession): Promise<{ sessionId: string; signedInAt: Date }> {
  const { rows } = await db.query<{ session_id: string; signed_in_at: Date }>({
    name: 'auth_insert_session',
    text: `with s as (
             insert into auth.sessions (user_id, aal, factor_id, ip, user_agent)
             values ($1, $2::auth.aal_level, $3, nullif($4, '')::inet, $5) returning id, user_id, created_at
           ), t as (
             insert into auth.refresh_tokens (token, user_id, session_id) select $6, s.user_id::text, s.id from s
           ), c as (
             insert into auth.mfa_amr_claims (session_id, authentication_method) select s.id, $7 from s
           ), u as (
             update auth.users set last_sign_in_at = now() where id = $1
           ), i as (
             update auth.identities set last_sign_in_at = now() where user_id = $1 and provider = 'email'
           ), a as (
             insert into auth.audit_log_entries (payload, ip_address)
             select json_build_object('actor_id', s.user_id, 'action', $8::text, 'log_type', 'account',
                                      'traits', json_build_object('provider', $7::text)), $4 from s
           )
           select s.id as session_id, s.created_at as signed_in_at from s`,
    values: [s.userId, s.aal ?? 'aal1', s.factorId ?? null, safeInet(s.ip), s.userAgent ?? null, s.refreshToken, s.method, s.action],
  })
  return { sessionId: rows[0]!.session_id, signedInAt: rows[0]!.signed_in_at }
}

/** The data plane's addresses are IPs; anything else is not stored as inet. */
export function safeInet(ip: string): string {
  return /^[0-9a-f:.]+$/i.test(ip) && ip.length <= 45 ? ip : ''
}

export async function amrOf(db: Queryable, sessionId: string): Promise<AmrEntry[]> {
  const { rows } = await db.query<{ amr: AmrEntry[] | null }>({
    name: 'auth_amr_of',
    text: `select json_agg(json_build_object('method', authentication_method, 'timestamp', extract(epoch from updated_at)::bigint)
             order by updated_at desc) as amr from auth.mfa_amr_claims where session_id = $1`,
    values: [sessionId],
  })
  return rows[0]?.amr ?? []
}

export type RefreshedRow = UserRow & { session_id: string; aal: 'aal1' | 'aal2'; amr: AmrEntry[] | null }

/**
 * Rotates `token` to `next` in one statement: the old token is revoked only if
 * it was active (the row lock makes exactly one of concurrent refreshes win),
 * its session must be alive and its user not banned. No row: the caller asks
 * `refreshFailure` why.
 */
export async function rotateRefreshToken(db: Queryable, token: string, next: string, ip: string): Promise<RefreshedRow | undefined> {
  const { rows } = await db.query<RefreshedRow>({
    name: 'auth_rotate_refresh_token',
    text: `with old as (
             update auth.refresh_tokens r set revoked = true, updated_at = now()
             where r.token = $1 and not r.revoked
               and exists (select 1 from auth.sessions s join auth.users u on u.id = s.user_id
                           where s.id = r.session_id and (s.not_after is null or s.not_after > now())
                             and (u.banned_until is null or u.banned_until <= now()))
             returning r.session_id
           ), s as (
             update auth.sessions set refreshed_at = now()::timestamp, updated_at = now()
             where id = (select session_id from old) returning id, user_id, aal
           ), fresh as (
             insert into auth.refresh_tokens (token, user_id, parent, session_id) select $2, s.user_id::text, $1, s.id from s
           ), a as (
             insert into auth.audit_log_entries (payload, ip_address)
             select json_build_object('actor_id', s.user_id, 'action', 'token_refreshed', 'log_type', 'token'), $3 from s
           )
           select ${USER_COLUMNS}, s.id as session_id, s.aal,
             (select json_agg(json_build_object('method', c.authentication_method, 'timestamp', extract(epoch from c.updated_at)::bigint)
                order by c.updated_at desc) from auth.mfa_amr_claims c where c.session_id = s.id) as amr
           from s join auth.users u on u.id = s.user_id`,
    values: [token, next, ip],
  })
  return rows[0]
}

export type RefreshFailure =
  | 'not_found'
  | 'session_not_found'
  | 'session_expired'
  | 'user_banned'
  | 'reused_recently'
  | 'reused'

/** Why a rotation found nothing to rotate; a reuse outside the grace interval revokes the session. */
export async function refreshFailure(db: Queryable, token: string, reuseIntervalSeconds: number, ip: string): Promise<RefreshFailure> {
  const { rows } = await db.query<{ revoked: boolean; session_exists: boolean; session_expired: boolean; banned: boolean; recent: boolean; session_id: string | null; user_id: string | null }>(
    `select r.revoked, s.id is not null as session_exists, coalesce(s.not_after <= now(), false) as session_expired,
            coalesce(u.banned_until > now(), false) as banned, r.updated_at > now() - make_interval(secs => $2) as recent,
            r.session_id, s.user_id
     from auth.refresh_tokens r left join auth.sessions s on s.id = r.session_id left join auth.users u on u.id = s.user_id
     where r.token = $1`,
    [token, reuseIntervalSeconds],
  )
  const row = rows[0]
  if (row === undefined) return 'not_found'
  if (!row.session_exists) return 'session_not_found'
  if (row.session_expired) return 'session_expired'
  if (row.banned) return 'user_banned'
  if (!row.revoked) return 'not_found'
  // Concurrent refreshes of one token (several tabs) lose within the interval without ending the session.
  if (row.recent) return 'reused_recently'
  await db.query(
    `with d as (delete from auth.sessions where id = $1 returning user_id)
     insert into auth.audit_log_entries (payload, ip_address)
     select json_build_object('actor_id', d.user_id, 'action', 'token_revoked', 'log_type', 'token'), $2 from d`,
    [row.session_id, ip],
  )
  return 'reused'
}

export async function deleteSessions(db: Queryable, userId: string, sessionId: string | null, scope: 'global' | 'local' | 'others', ip: string): Promise<void> {
  const condition = scope === 'global' ? '($2::uuid is null or true)' : scope === 'local' ? 'id = $2::uuid' : 'id is distinct from $2::uuid'
  await db.query(
    `with d as (delete from auth.sessions where user_id = $1 and ${condition} returning id)
     insert into auth.audit_log_entries (payload, ip_address)
     values (json_build_object('actor_id', $1::uuid, 'action', 'logout', 'log_type', 'account', 'traits', json_build_object('scope', $3::text)), $4)`,
    [userId, sessionId, scope, ip],
  )
}

/**
 * After a second factor (GoTrue's updateMFASessionAndClaims): the session
 * becomes aal2 with the factor, gains the `method` amr claim, and its refresh
 * token is swapped for `next` (the aal1 token can no longer refresh into an
 * aal2 session). The user's other aal1 sessions end (InvalidateSessionsWithAALLessThan).
 */
export async function upgradeSession(db: Queryable, sessionId: string, factorId: string, method: string, next: string, ip: string): Promise<boolean> {
  const { rows } = await db.query<{ id: string }>({
    name: 'auth_upgrade_session',
    text: `with s as (
             update auth.sessions set aal = 'aal2', factor_id = $2, updated_at = now() where id = $1 returning id, user_id
           ), c as (
             insert into auth.mfa_amr_claims (session_id, authentication_method) select s.id, $3 from s
             on conflict (session_id, authentication_method) do update set updated_at = now()
           ), old as (
             update auth.refresh_tokens set revoked = true, updated_at = now() where session_id = $1 and not revoked returning token
           ), fresh as (
             insert into auth.refresh_tokens (token, user_id, parent, session_id)
             select $4, s.user_id::text, (select max(token) from old), s.id from s
           ), others as (
             delete from auth.sessions where user_id = (select user_id from s) and id <> $1 and aal < 'aal2'
           ), a as (
             insert into auth.audit_log_entries (payload, ip_address)
             select json_build_object('actor_id', s.user_id, 'action', 'verification_attempted', 'log_type', 'user',
                                      'traits', json_build_object('factor_id', $2::text, 'method', $3::text)), $5 from s
           )
           select id from s`,
    values: [sessionId, factorId, method, next, ip],
  })
  return rows.length === 1
}

/** Ends every session of the user, unaudited (an admin's ban or soft delete audits its own action). */
export async function deleteSessionsOfUser(db: Queryable, userId: string): Promise<void> {
  await db.query('delete from auth.sessions where user_id = $1', [userId])
}
