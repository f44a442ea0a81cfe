// SQL on auth.users and auth.identities.
import type pg from 'pg'
import type { Queryable } from './pool.ts'


/** The user row as the API shows it, with identities and factors (one statement). */
export const USER_COLUMNS = `
  u.id, u.aud, u.role, u.email, u.encrypted_password, u.email_confirmed_at, u.invited_at,
  u.confirmation_sent_at, u.recovery_sent_at, u.email_change, u.email_change_sent_at,
  u.last_sign_in_at, u.raw_app_meta_data, u.raw_user_meta_data, u.created_at, u.updated_at,
  u.phone, u.phone_confirmed_at, u.confirmed_at, u.banned_until, u.deleted_at, u.is_anonymous,
  coalesce((select json_agg(json_build_object(
      'identity_id', i.id, 'id', i.provider_id, 'user_id', i.user_id, 'identity_data', i.identity_data,
      'provider', i.provider, 'last_sign_in_at', i.last_sign_in_at, 'created_at', i.created_at,
      'updated_at', i.updated_at, 'email', i.email) order by i.created_at)
    from auth.identities i where i.user_id = u.id), '[]'::json) as identities,
  (select json_agg(json_build_object(
      'id', f.id, 'created_at', f.created_at, 'updated_at', f.updated_at, 'status', f.status,
      'friendly_name', coalesce(f.friendly_name, ''), 'factor_type', f.factor_type, 'phone', coalesce(f.phone, ''),
      'last_challenged_at', f.last_challenged_at, 'web_authn_aaguid', f.web_authn_aaguid) order by f.created_at)
    from auth.mfa_factors f where f.user_id = u.id) as factors`

export interface UserRow {
  id: string
  aud: string | null
  role: string | null
  email: string | null
  encrypted_password: string | null
  email_confirmed_at: Date | null
  invited_at: Date | null
  confirmation_sent_at: Date | null
  recovery_sent_at: Date | null
  email_change: string | null
  email_change_sent_at: Date | null
  last_sign_in_at: Date | null
  raw_app_meta_data: Record<string, unknown>
  raw_user_meta_data: Record<string, unknown>
  created_at: Date
  updated_at: Date
  phone: string | null
  phone_confirmed_at: Date | null
  confirmed_at: Date | null
  banned_until: Date | null
  deleted_at: Date | null
  is_anonymous: boolean
  identities: Array<Record<string, unknown>>
  factors: Array<Record<string, unknown>> | null
}

export async function userById(db: Queryable, id: string): Promise<UserRow | undefined> {
  const { rows } = await db.query<UserRow>({ name: 'auth_user_by_id', text: `select ${USER_COLUMNS} from auth.users u where u.id = $1`, values: [id] })
  return rows[0]
}

export async function userByEmail(db: Queryable, email: string): Promise<UserRow | undefined> {
  const { rows } = await db.query<UserRow>({
    name: 'auth_user_by_email',
    text: `select ${USER_COLUMNS} from auth.users u where u.email = $1 and not u.is_sso_user`,
    values: [email],
  })
  return rows[0]
}

/** The user of an access token, and whether its session still exists (GET /user: one statement). */
export async function userWithSession(db: Queryable, id: string, sessionId: string | null): Promise<(UserRow & { session_ok: boolean; session_aal: string | null }) | undefined> {
  const { rows } = await db.query<UserRow & { session_ok: boolean; session_aal: string | null }>({
    name: 'auth_user_with_session',
    text: `select ${USER_COLUMNS}, s.id is not null as session_ok, s.aal::text as session_aal
           from auth.users u left join auth.sessions s on s.id = $2 and s.user_id = u.id where u.id = $1`,
    values: [id, sessionId],
  })
  return rows[0]
}

export interface NewUser {
  id?: string
  email: string
  encryptedPassword: string | null
  confirmed: boolean
  invited?: boolean
  userMetadata: Record<string, unknown>
  appMetadata?: Record<string, unknown>
  bannedUntil?: Date | null
}

/** Inserts the user and its email identity (GoTrue: provider_id = user id for email). */
export async function insertUser(client: pg.ClientBase, user: NewUser): Promise<string> {
  const appMetadata = { provider: 'email', providers: ['email'], ...(user.appMetadata ?? {}) }
  const { rows } = await client.query<{ id: string }>({
    name: 'auth_insert_user',
    text: `with u as (
             insert into auth.users (id, aud, role, email, encrypted_password, email_confirmed_at, invited_at,
                                     raw_app_meta_data, raw_user_meta_data, banned_until)
             values (coalesce($1::uuid, gen_random_uuid()), 'authenticated', 'authenticated', $2, $3,
                     case when $4 then now() end, case when $5 then now() end, $6, $7, $8)
             returning id
           )
           insert into auth.identities (provider_id, user_id, identity_data, provider, last_sign_in_at)
           select u.id::text, u.id,
                  jsonb_build_object('sub', u.id::text, 'email', $2::text, 'email_verified', $4::boolean, 'phone_verified', false),
                  'email', now()
           from u returning user_id as id`,
    values: [user.id ?? null, user.email, user.encryptedPassword, user.confirmed, user.invited === true, appMetadata, user.userMetadata, user.bannedUntil ?? null],
  })
  return rows[0]!.id
}

/**
 * An anonymous user (POST /signup with neither email nor phone): no email,
 * phone, password or identity, empty app_metadata (GoTrue's ToUserModel
 * with provider "anonymous"), role authenticated.
 */
export async function insertAnonymousUser(db: Queryable, userMetadata: Record<string, unknown>): Promise<string> {
  const { rows } = await db.query<{ id: string }>({
    name: 'auth_insert_anonymous_user',
    text: `insert into auth.users (aud, role, raw_app_meta_data, raw_user_meta_data, is_anonymous)
           values ('authenticated', 'authenticated', '{}'::jsonb, $1, true) returning id`,
    values: [userMetadata],
  })
  return rows[0]!.id
}

/**
 * Confirms the address (GoTrue's Confirm): email_verified true in metadata and identity.
 * A confirmed address makes an anonymous user permanent (GoTrue's admin update with email_confirm).
 */
export async function confirmEmail(client: pg.ClientBase, userId: string): Promise<void> {
  await client.query({
    name: 'auth_confirm_email',
    text: `with u as (
             update auth.users set email_confirmed_at = coalesce(email_confirmed_at, now()),
               raw_user_meta_data = raw_user_meta_data || '{"email_verified": true}'::jsonb, is_anonymous = false, updated_at = now()
             where id = $1 returning id
           )
           update auth.identities set identity_data = identity_data || '{"email_verified": true}'::jsonb, updated_at = now()
           where user_id = (select id from u) and provider = 'email'`,
    values: [userId],
  })
}

export async function setPassword(client: Queryable, userId: string, encryptedPassword: string): Promise<void> {
  await client.query('update auth.users set encrypted_password = $2, updated_at = now() where id = $1', [userId, encryptedPassword])
}

/** Merges metadata as GoTrue does: keys are replaced, a null value removes the key. */
export async function mergeMetadata(client: Queryable, userId: string, column: 'raw_user_meta_data' | 'raw_app_meta_data', patch: Record<string, unknown>): Promise<void> {
  const removed = Object.keys(patch).filter((key) => patch[key] === null)
  const kept = Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== null))
  await client.query(`update auth.users set ${column} = (${column} || $2::jsonb) - $3::text[], updated_at = now() where id = $1`, [userId, kept, removed])
}

/**
 * Applies a confirmed address change: the email identity follows (verified),
 * the pending change is cleared, the address counts as confirmed. An
 * anonymous user has no identity: it gets its email identity here and
 * becomes permanent (GoTrue's emailChangeVerify and ConfirmEmailChange).
 */
export async function setEmail(client: pg.ClientBase, userId: string, email: string): Promise<void> {
  await client.query({
    name: 'auth_set_email',
    text: `with u as (
             update auth.users set email = $2, email_change = null, email_change_sent_at = null, email_change_token_new = null,
               email_change_token_current = '', email_change_confirm_status = 0, email_confirmed_at = coalesce(email_confirmed_at, now()),
               raw_app_meta_data = case when is_anonymous then raw_app_meta_data || '{"provider": "email", "providers": ["email"]}'::jsonb
                                        else raw_app_meta_data end,
               is_anonymous = false, updated_at = now()
             where id = $1 returning id
           ), updated as (
             update auth.identities set identity_data = identity_data || jsonb_build_object('email', $2::text, 'email_verified', true), updated_at = now()
             where user_id = (select id from u) and provider = 'email' returning id
           )
           insert into auth.identities (provider_id, user_id, identity_data, provider, last_sign_in_at)
           select u.id::text, u.id, jsonb_build_object('sub', u.id::text, 'email', $2::text, 'email_verified', true, 'phone_verified', false), 'email', now()
           from u where not exists (select 1 from auth.identities i where i.user_id = u.id and i.provider = 'email')`,
    values: [userId, email],
  })
}

export interface EmailChangeState {
  /** The address asked for, or null when no change is pending. */
  email_change: string | null
  /** GoTrue's email_change_confirm_status: 1 once one of the two addresses has confirmed. */
  email_change_confirm_status: number
}

/** Locked: the two addresses confirming at the same moment are taken one after the other, so the second sees the first. */
export async function emailChangeState(db: Queryable, userId: string): Promise<EmailChangeState> {
  const { rows } = await db.query<EmailChangeState>(
    'select email_change, coalesce(email_change_confirm_status, 0)::int as email_change_confirm_status from auth.users where id = $1 for update',
    [userId],
  )
  return rows[0] ?? { email_change: null, email_change_confirm_status: 0 }
}

/** The first of the two confirmations of a secure email change. */
export async function markEmailChangeHalfConfirmed(db: Queryable, userId: string): Promise<void> {
  await db.query('update auth.users set email_change_confirm_status = 1, updated_at = now() where id = $1', [userId])
}

/** A page of the users not deleted whose address or full name matches `like` (an ILIKE pattern; null: all), newest first. */
export async function listUsers(db: Queryable, like: string | null, limit: number, offset: number): Promise<UserRow[]> {
  const { rows } = await db.query<UserRow>(`select ${USER_COLUMNS} from auth.users u ${LISTED} order by u.created_at desc, u.id limit $2 offset $3`, [like, limit, offset])
  return rows
}

/** How many users listUsers() pages through. */
export async function countUsers(db: Queryable, like: string | null): Promise<number> {
  const { rows } = await db.query<{ total: string }>(`select count(*) as total from auth.users u ${LISTED}`, [like])
  return Number(rows[0]!.total)
}

const LISTED = `where u.deleted_at is null and ($1::text is null or u.email ilike $1 or u.raw_user_meta_data ->> 'full_name' ilike $1)`

/** Whether another user already has this address. */
export async function emailTakenByOther(db: Queryable, email: string, userId: string): Promise<boolean> {
  const taken = await db.query('select 1 from auth.users where email = $1 and id <> $2', [email, userId])
  return (taken.rowCount ?? 0) > 0
}

/** An admin's change of address: at once, any pending change dropped, the email identity following. */
export async function replaceEmail(db: Queryable, userId: string, email: string): Promise<void> {
  await db.query(
    `with u as (update auth.users set email = $2, email_change = null, updated_at = now() where id = $1 returning id)
     update auth.identities set identity_data = identity_data || jsonb_build_object('email', $2::text) where user_id = $1 and provider = 'email'`,
    [userId, email],
  )
}

/**
 * Records an address change waiting for confirmation, none of its addresses
 * confirmed yet; `sent` also stamps when its link was issued.
 */
export async function setEmailChange(db: Queryable, userId: string, email: string, sent: boolean): Promise<void> {
  await db.query(
    `update auth.users set email_change = $2, email_change_confirm_status = 0, updated_at = now(),
       email_change_sent_at = case when $3 then now() else email_change_sent_at end where id = $1`,
    [userId, email, sent],
  )
}

/** A repeated signup of an unconfirmed user: its new password and metadata replace the old. */
export async function resetSignup(db: Queryable, userId: string, encryptedPassword: string, userMetadata: Record<string, unknown>): Promise<void> {
  await db.query('update auth.users set encrypted_password = $2, raw_user_meta_data = $3, updated_at = now() where id = $1', [userId, encryptedPassword, userMetadata])
}

export async function setBannedUntil(db: Queryable, userId: string, until: Date | null): Promise<void> {
  await db.query('update auth.users set banned_until = $2, updated_at = now() where id = $1', [userId, until])
}

export async function setRole(db: Queryable, userId: string, role: string): Promise<void> {
  await db.query('update auth.users set role = $2, updated_at = now() where id = $1', [userId, role])
}

/** The columns that record when a link of each kind was last mailed. */
const SENT_AT = {
  signup: 'confirmation_sent_at = now()',
  invite: 'confirmation_sent_at = now(), invited_at = coalesce(invited_at, now())',
  recovery: 'recovery_sent_at = now()',
  magiclink: 'recovery_sent_at = now()',
  email_change: 'email_change_sent_at = now()',
  reauthentication: 'reauthentication_sent_at = now()',
} as const

export async function markMailSent(db: Queryable, userId: string, link: keyof typeof SENT_AT): Promise<void> {
  await db.query(`update auth.users set ${SENT_AT[link]}, updated_at = now() where id = $1`, [userId])
}

/** Whether the session began less than `seconds` ago (GoTrue's reauthentication exemption for fresh sessions). */
export async function sessionIsRecent(db: Queryable, userId: string, sessionId: string, seconds: number): Promise<boolean> {
  const { rows } = await db.query<{ recent: boolean }>(
    'select created_at > now() - make_interval(secs => $3) as recent from auth.sessions where id = $1 and user_id = $2',
    [sessionId, userId, seconds],
  )
  return rows[0]?.recent === true
}

/** GoTrue's soft delete: the row stays (for foreign keys), unusable and without personal data. */
export async function softDeleteUser(db: Queryable, userId: string): Promise<void> {
  await db.query(
    `update auth.users set deleted_at = now(), email = null, phone = null, encrypted_password = null,
       raw_user_meta_data = '{}'::jsonb, email_change = null, updated_at = now() where id = $1`,
    [userId],
  )
}

/** Deletes the user; its identities, sessions, factors and codes go with it (foreign keys). */
export async function deleteUser(db: Queryable, userId: string): Promise<void> {
  await db.query('delete from auth.users where id = $1', [userId])
}
