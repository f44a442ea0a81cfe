// SQL of WebAuthn factors (GoTrue's models/factor.go and challenge.go, the
// web_authn_* columns of sql/project/0008): the credential of a verified
// factor, the ceremony state of a challenge.
import type pg from 'pg'
import type { CeremonyState, StoredCredential } from '../webauthn.ts'
import { CHALLENGE_EXPIRY_SECONDS } from './factors.ts'
import type { Queryable } from './pool.ts'
import { safeInet } from './sessions.ts'

export async function insertWebAuthnFactor(client: pg.ClientBase, userId: string, friendlyName: string): Promise<{ id: string }> {
  const { rows } = await client.query<{ id: string }>({
    name: 'auth_insert_webauthn_factor',
    text: `insert into auth.mfa_factors (user_id, friendly_name, factor_type, status)
           values ($1, $2, 'webauthn', 'unverified') returning id`,
    values: [userId, friendlyName],
  })
  return rows[0]!
}

/** The credentials of the user's verified WebAuthn factors, oldest first. */
export async function verifiedCredentials(db: Queryable, userId: string): Promise<Array<{ factor_id: string; credential: StoredCredential }>> {
  const { rows } = await db.query<{ factor_id: string; credential: StoredCredential }>({
    name: 'auth_webauthn_credentials',
    text: `select id as factor_id, web_authn_credential as credential from auth.mfa_factors
           where user_id = $1 and factor_type = 'webauthn' and status = 'verified' and web_authn_credential is not null
           order by created_at`,
    values: [userId],
  })
  return rows
}

/** A challenge bound to the caller's address, with its ceremony; stamps last_challenged_at. */
export async function insertWebAuthnChallenge(db: Queryable, factorId: string, ip: string, state: CeremonyState): Promise<{ id: string; expires_at: number }> {
  const { rows } = await db.query<{ id: string; expires_at: number }>({
    name: 'auth_insert_webauthn_challenge',
    text: `with c as (
             insert into auth.mfa_challenges (factor_id, ip_address, web_authn_session_data)
             values ($1, coalesce(nullif($2, '')::inet, '0.0.0.0'::inet), $4) returning id, created_at
           ), f as (
             update auth.mfa_factors set last_challenged_at = now(), updated_at = now() where id = $1
           )
           select id, (extract(epoch from created_at)::bigint + $3)::int as expires_at from c`,
    values: [factorId, safeInet(ip), CHALLENGE_EXPIRY_SECONDS, state],
  })
  return rows[0]!
}

export interface WebAuthnChallengeCheck {
  status: 'verified' | 'unverified'
  challenge_id: string | null
  state: CeremonyState | null
  challenge_verified: boolean
  same_ip: boolean
  expired: boolean
}

/**
 * The factor, locked until the transaction ends (two verifications of one
 * challenge run one after the other; the second sees it used), with the named
 * challenge if it belongs to that factor.
 */
export async function lockWebAuthnChallenge(client: pg.ClientBase, userId: string, factorId: string, challengeId: string | null, ip: string): Promise<WebAuthnChallengeCheck | undefined> {
  const { rows } = await client.query<WebAuthnChallengeCheck>({
    name: 'auth_lock_webauthn_challenge',
    text: `select f.status::text as status, c.id as challenge_id, c.web_authn_session_data as state,
                  c.verified_at is not null as challenge_verified,
                  coalesce(c.ip_address = coalesce(nullif($4, '')::inet, '0.0.0.0'::inet), false) as same_ip,
                  coalesce(c.created_at < now() - make_interval(secs => $5), false) as expired
           from auth.mfa_factors f left join auth.mfa_challenges c on c.id = $3::uuid and c.factor_id = f.id
           where f.id = $1 and f.user_id = $2 and f.factor_type = 'webauthn'
           for update of f`,
    values: [factorId, userId, challengeId, safeInet(ip), CHALLENGE_EXPIRY_SECONDS],
  })
  return rows[0]
}

/** Registration done: the factor is verified with its credential, the challenge used. False: the factor was verified meanwhile. */
export async function saveCredential(client: pg.ClientBase, factorId: string, challengeId: string, credential: StoredCredential, aaguid: string | null): Promise<boolean> {
  const { rows } = await client.query<{ id: string }>({
    name: 'auth_save_webauthn_credential',
    text: `with f as (
             update auth.mfa_factors set status = 'verified', web_authn_credential = $3, web_authn_aaguid = $4::uuid, updated_at = now()
             where id = $1 and status = 'unverified' returning id
           )
           update auth.mfa_challenges set verified_at = now() where id = $2 and exists (select 1 from f) returning id`,
    values: [factorId, challengeId, credential, aaguid],
  })
  return rows.length === 1
}

/** Assertion done: the credential's factor keeps the new signature counter, the challenge is used. */
export async function acceptAssertion(client: pg.ClientBase, credentialFactorId: string, challengeId: string, signCount: number): Promise<void> {
  await client.query({
    name: 'auth_accept_webauthn_assertion',
    text: `with f as (
             update auth.mfa_factors set web_authn_credential = jsonb_set(web_authn_credential, '{sign_count}', to_jsonb($3::bigint)), updated_at = now()
             where id = $1
           )
           update auth.mfa_challenges set verified_at = now() where id = $2`,
    values: [credentialFactorId, challengeId, signCount],
  })
}
