// SQL on auth.mfa_factors and auth.mfa_challenges (GoTrue's models/factor.go
// and challenge.go), plus Baseplane's `last_timestep`: the last accepted TOTP
// step of a factor, so a code is accepted once (SPEC 5.5, 8.4).
import type pg from 'pg'
import type { Queryable } from './pool.ts'
import { safeInet } from './sessions.ts'

/** GoTrue's GOTRUE_MFA_CHALLENGE_EXPIRY_DURATION and FACTOR_EXPIRY_DURATION defaults (and minimums). */
export const CHALLENGE_EXPIRY_SECONDS = 300
export const UNVERIFIED_FACTOR_EXPIRY_SECONDS = 300
/** GOTRUE_MFA_MAX_ENROLLED_FACTORS and MAX_VERIFIED_FACTORS defaults. */
export const MAX_ENROLLED_FACTORS = 10
export const MAX_VERIFIED_FACTORS = 10

export interface FactorRow {
  id: string
  user_id: string
  friendly_name: string | null
  factor_type: string
  status: 'verified' | 'unverified'
}

/** Locks the user's row so that concurrent enrolments of one user count factors one after the other. */
export async function lockUserFactors(client: pg.ClientBase, userId: string): Promise<FactorRow[]> {
  await client.query({ name: 'auth_lock_user', text: 'select 1 from auth.users where id = $1 for update', values: [userId] })
  // GoTrue's DeleteExpiredFactors: abandoned enrolments (unverified, never challenged lately) go first.
  await client.query({
    name: 'auth_delete_expired_factors',
    text: `delete from auth.mfa_factors where user_id = $1 and status = 'unverified'
             and created_at < now() - make_interval(secs => $2)
             and (last_challenged_at is null or last_challenged_at < now() - make_interval(secs => $2))`,
    values: [userId, UNVERIFIED_FACTOR_EXPIRY_SECONDS],
  })
  const { rows } = await client.query<FactorRow>({
    name: 'auth_factors_of_user',
    text: `select id, user_id, friendly_name, factor_type::text as factor_type, status::text as status
           from auth.mfa_factors where user_id = $1 order by created_at`,
    values: [userId],
  })
  return rows
}

export async function insertTotpFactor(client: pg.ClientBase, userId: string, friendlyName: string, secret: string): Promise<{ id: string }> {
  const { rows } = await client.query<{ id: string }>({
    name: 'auth_insert_totp_factor',
    text: `insert into auth.mfa_factors (user_id, friendly_name, factor_type, status, secret)
           values ($1, $2, 'totp', 'unverified', $3) returning id`,
    values: [userId, friendlyName, secret],
  })
  return rows[0]!
}

/** The caller's own factor (GoTrue's FindOwnedFactorByID), or undefined. */
export async function ownedFactor(db: Queryable, userId: string, factorId: string): Promise<FactorRow | undefined> {
  const { rows } = await db.query<FactorRow>({
    name: 'auth_owned_factor',
    text: `select id, user_id, friendly_name, factor_type::text as factor_type, status::text as status
           from auth.mfa_factors where id = $1 and user_id = $2`,
    values: [factorId, userId],
  })
  return rows[0]
}

/** A challenge of the factor, bound to the caller's address; stamps last_challenged_at. */
export async function insertChallenge(db: Queryable, factorId: string, ip: string): Promise<{ id: string; expires_at: number }> {
  const { rows } = await db.query<{ id: string; expires_at: number }>({
    name: 'auth_insert_challenge',
    text: `with c as (
             insert into auth.mfa_challenges (factor_id, ip_address)
             values ($1, coalesce(nullif($2, '')::inet, '0.0.0.0'::inet)) returning id, created_at
           ), f as (
             update auth.mfa_factors set last_challenged_at = now(), updated_at = now() where id = $1
           )
           select id, (extract(epoch from created_at)::bigint + $3)::int as expires_at from c`,
    values: [factorId, safeInet(ip), CHALLENGE_EXPIRY_SECONDS],
  })
  return rows[0]!
}

export interface ChallengeCheck {
  factor_id: string
  status: 'verified' | 'unverified'
  factor_type: string
  secret: string
  last_timestep: string | null
  challenge_id: string | null
  challenge_verified: boolean
  same_ip: boolean
  expired: boolean
}

/**
 * The factor (locked until the transaction ends, so two verifications of one
 * factor run one after the other and the second sees the first's time step)
 * with the named challenge, if it belongs to that factor.
 */
export async function lockFactorForVerify(client: pg.ClientBase, userId: string, factorId: string, challengeId: string | null, ip: string): Promise<ChallengeCheck | undefined> {
  const { rows } = await client.query<ChallengeCheck>({
    name: 'auth_lock_factor_for_verify',
    text: `select f.id as factor_id, f.status::text as status, f.factor_type::text as factor_type, f.secret, f.last_timestep::text as last_timestep,
                  c.id as challenge_id, c.verified_at is not null as challenge_verified,
                  coalesce(c.ip_address = coalesce(nullif($4, '')::inet, '0.0.0.0'::inet), false) as same_ip,
                  coalesce(c.created_at < now() - make_interval(secs => $5), false) as expired
           from auth.mfa_factors f left join auth.mfa_challenges c on c.id = $3::uuid and c.factor_id = f.id
           where f.id = $1 and f.user_id = $2
           for update of f`,
    values: [factorId, userId, challengeId, safeInet(ip), CHALLENGE_EXPIRY_SECONDS],
  })
  return rows[0]
}

export async function deleteChallenge(client: pg.ClientBase, challengeId: string): Promise<void> {
  await client.query('delete from auth.mfa_challenges where id = $1', [challengeId])
}

/**
 * Marks the challenge used and the factor verified with its accepted time
 * step, only if that step is later than the last accepted one. False: the
 * step was already used (a replayed code).
 */
export async function acceptTimeStep(client: pg.ClientBase, factorId: string, challengeId: string, timeStep: number): Promise<boolean> {
  const { rows } = await client.query<{ id: string }>({
    name: 'auth_accept_time_step',
    text: `with f as (
             update auth.mfa_factors set last_timestep = $3, status = 'verified', updated_at = now()
             where id = $1 and (last_timestep is null or last_timestep < $3) returning id
           )
           update auth.mfa_challenges set verified_at = now() where id = $2 and exists (select 1 from f) returning id`,
    values: [factorId, challengeId, timeStep],
  })
  return rows.length === 1
}

/** GoTrue's DeleteUnverifiedFactors: once one factor is verified, the user's other unverified ones of its type go. */
export async function deleteUnverifiedFactors(client: pg.ClientBase, userId: string, factorType: string): Promise<void> {
  await client.query(`delete from auth.mfa_factors where user_id = $1 and factor_type = $2::auth.factor_type and status = 'unverified'`, [userId, factorType])
}

/** Unenrols: sessions verified with the factor drop back to aal1 (GoTrue's DowngradeSessionsToAAL1), then the factor goes. */
export async function deleteFactor(client: pg.ClientBase, factorId: string): Promise<void> {
  await client.query(
    // The claim of the factor's own method: totp, or GoTrue's mfa/webauthn.
    `delete from auth.mfa_amr_claims
       where authentication_method = (select case factor_type when 'webauthn' then 'mfa/webauthn' else factor_type::text end from auth.mfa_factors where id = $1)
         and session_id in (select id from auth.sessions where factor_id = $1)`,
    [factorId],
  )
  await client.query(`update auth.sessions set aal = 'aal1', factor_id = null, updated_at = now() where factor_id = $1`, [factorId])
  await client.query('delete from auth.mfa_factors where id = $1', [factorId])
}
