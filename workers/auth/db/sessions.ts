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
 * `reuseRefreshToken`, which hands the losers of a race the winner's token.
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

/**
 * Undoes `rotateRefreshToken(token, next)` when the token it issued could not
 * be handed out (a custom access token hook refused it): `next` goes, `token`
 * is current again. Nothing happens if `next` already has a child.
 */
export async function restoreRefreshToken(db: Queryable, token: string, next: string): Promise<void> {
  await db.query({
    name: 'auth_restore_refresh_token',
    text: `with fresh as (
             delete from auth.refresh_tokens f where f.token = $2 and f.parent = $1 and not f.revoked returning f.session_id
           )
           update auth.refresh_tokens r set revoked = false, updated_at = now()
           where r.token = $1 and r.session_id = (select session_id from fresh)`,
    values: [token, next],
  })
}

export type RefreshFailure = 'not_found' | 'session_not_found' | 'session_expired' | 'user_banned' | 'reused_recently' | 'reused'

export type ReuseAnswer = { why: 'current'; row: RefreshedRow; refreshToken: string } | { why: RefreshFailure }

/**
 * A token `rotateRefreshToken` did not rotate: GoTrue's reuse rules
 * (counter-based refresh tokens, supabase/auth internal/tokens/service.go).
 * The parent of the session's current token always gets the current token
 * (a client that lost the answer, or lost a race to a concurrent refresh of
 * the same token); an older token of the same chain gets it within
 * `reuseIntervalSeconds` of the session's last refresh; past that, reuse is
 * detected and the session is deleted in the same statement. A token from
 * before a second factor (the chain restarts at the aal2 token) never gets the
 * aal2 token: refused, and the session ends once the interval since its
 * revocation has passed. One statement, one snapshot: it sees every rotation
 * committed before it, so it holds across nodes and concurrent requests.
 */
export async function reuseRefreshToken(db: Queryable, token: string, reuseIntervalSeconds: number, ip: string): Promise<ReuseAnswer> {
  const { rows } = await db.query<RefreshedRow & { why: RefreshFailure | 'current'; current_token: string | null }>({
    name: 'auth_reuse_refresh_token',
    text: `with t as (
             select id, revoked, updated_at, session_id from auth.refresh_tokens where token = $1
           ), cur as (
             select c.token, c.parent from auth.refresh_tokens c join t on c.session_id = t.session_id
             where not c.revoked order by c.id desc limit 1
           ), root as (
             select max(r.id) as id from auth.refresh_tokens r join t on r.session_id = t.session_id where r.parent is null
           ), v as (
             select case
                 when s.id is null then 'session_not_found'
                 when s.not_after <= now() then 'session_expired'
                 when u.banned_until > now() then 'user_banned'
                 when not t.revoked then 'not_found'
                 when t.id < root.id then
                   case when t.updated_at > now() - make_interval(secs => $2) then 'reused_recently' else 'reused' end
                 when cur.parent = $1 then 'current'
                 when cur.token is not null and s.refreshed_at > now()::timestamp - make_interval(secs => $2) then 'current'
                 else 'reused'
               end as why, s.id as session_id, s.user_id, s.aal, cur.token as current_token
             from t left join auth.sessions s on s.id = t.session_id left join auth.users u on u.id = s.user_id
               left join cur on true cross join root
           ), d as (
             delete from auth.sessions where id = (select session_id from v where why = 'reused') returning user_id
           ), a as (
             insert into auth.audit_log_entries (payload, ip_address)
             select json_build_object('actor_id', d.user_id, 'action', 'token_revoked', 'log_type', 'token'), $3 from d
           )
           select v.why, v.current_token, ${USER_COLUMNS}, v.session_id, v.aal,
             (select json_agg(json_build_object('method', c.authentication_method, 'timestamp', extract(epoch from c.updated_at)::bigint)
                order by c.updated_at desc) from auth.mfa_amr_claims c where c.session_id = v.session_id) as amr
           from v left join auth.users u on u.id = v.user_id`,
    values: [token, reuseIntervalSeconds, ip],
  })
  const row = rows[0]
  if (row === undefined) return { why: 'not_found' }
  if (row.why !== 'current') return { why: row.why }
  return { why: 'current', row, refreshToken: row.current_token! }
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
 * aal2 session; the new token has no parent). The user's other aal1 sessions end (InvalidateSessionsWithAALLessThan).
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
             update auth.refresh_tokens set revoked = true, updated_at = now() where session_id = $1 and not revoked
           ), fresh as (
             -- No parent: the chain restarts, so an aal1 token never gets this one (see reuseRefreshToken).
             insert into auth.refresh_tokens (token, user_id, session_id) select $4, s.user_id::text, s.id from s
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

export interface SessionRow {
  id: string
  created_at: Date
  updated_at: Date | null
  aal: string | null
  user_agent: string | null
  ip: string | null
}

/** The user's sessions, newest first, at most `limit` (what support staff look at; GoTrue's API has no call for it). */
export async function sessionsOfUser(db: Queryable, userId: string, limit: number): Promise<SessionRow[]> {
  const { rows } = await db.query<SessionRow>(
    `select id, created_at, updated_at, aal::text as aal, user_agent, host(ip) as ip
       from auth.sessions where user_id = $1 order by created_at desc limit $2`,
    [userId, limit],
  )
  return rows
}
