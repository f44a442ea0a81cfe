// SQL on auth.flow_state: PKCE flows (email links and, in issue 6, OAuth).
import crypto from 'node:crypto'
import type { Queryable } from './pool.ts'

/** GoTrue's flow-state lifetime (GOTRUE_EXTERNAL_FLOW_STATE_EXPIRY_DURATION). */
export const FLOW_STATE_EXPIRY_SECONDS = 300

export interface Pkce {
  challenge: string
  method: 's256' | 'plain'
}

export interface FlowState {
  id: string
  user_id: string | null
  auth_code: string
  code_challenge_method: 's256' | 'plain' | null
  code_challenge: string | null
  provider_type: string
  provider_access_token: string | null
  provider_refresh_token: string | null
  authentication_method: string
  referrer: string | null
  expired: boolean
}

export async function createFlowState(
  db: Queryable,
  flow: { userId: string | null; pkce: Pkce | undefined; providerType: string; method: string; referrer: string; stateSecret?: string },
): Promise<{ id: string; authCode: string }> {
  const authCode = crypto.randomUUID()
  const { rows } = await db.query<{ id: string }>(
    `insert into auth.flow_state (user_id, auth_code, code_challenge_method, code_challenge, provider_type, authentication_method, referrer, state_secret)
     values ($1, $2, $3, $4, $5, $6, $7, $8) returning id`,
    [flow.userId, authCode, flow.pkce?.method ?? null, flow.pkce?.challenge ?? null, flow.providerType, flow.method, flow.referrer, flow.stateSecret ?? null],
  )
  return { id: rows[0]!.id, authCode }
}

/** Marks the flow's code issued now (the 300 s expiry runs from here), with its user. */
export async function issueAuthCode(db: Queryable, id: string, userId: string, tokens?: { access?: string; refresh?: string }): Promise<string | undefined> {
  const { rows } = await db.query<{ auth_code: string }>(
    `update auth.flow_state set auth_code_issued_at = now(), user_id = $2, provider_access_token = $3, provider_refresh_token = $4, updated_at = now()
     where id = $1 returning auth_code`,
    [id, userId, tokens?.access ?? null, tokens?.refresh ?? null],
  )
  return rows[0]?.auth_code
}

/**
 * Locks the flow of `authCode` until the caller's transaction ends. The row
 * stays until the caller deletes it after a verifier matched (GoTrue keeps it
 * too), so a wrong verifier cannot spend the code; the lock makes a right
 * verifier sent twice at once win only once (the second finds no row).
 */
export async function lockFlowState(db: Queryable, authCode: string, expirySeconds: number): Promise<FlowState | undefined> {
  const { rows } = await db.query<FlowState>(
    `select id, user_id, auth_code, code_challenge_method::text as code_challenge_method, code_challenge, provider_type,
       provider_access_token, provider_refresh_token, authentication_method, referrer,
       coalesce(auth_code_issued_at, created_at) < now() - make_interval(secs => $2) as expired
     from auth.flow_state where auth_code = $1 for update`,
    [authCode, expirySeconds],
  )
  return rows[0]
}

export function challengeMatches(flow: Pick<FlowState, 'code_challenge' | 'code_challenge_method'>, verifier: string): boolean {
  if (!flow.code_challenge) return false
  const computed = flow.code_challenge_method === 'plain' ? verifier : crypto.createHash('sha256').update(verifier).digest('base64url')
  const a = Buffer.from(computed)
  const b = Buffer.from(flow.code_challenge)
  return a.length === b.length && crypto.timingSafeEqual(a, b)
}

export interface ClaimedOAuthFlow {
  id: string
  referrer: string
  pkce: boolean
  expired: boolean
  /** The user a linkIdentity() flow attaches the identity to (null for a sign-in). */
  link_user_id: string | null
}

/**
 * Claims an OAuth flow for its callback: the state's secret must match, and
 * is cleared in the same statement, so a state works once. Undefined with
 * `used` true: the flow exists but its state was already spent.
 */
export async function claimOAuthFlow(db: Queryable, id: string, secretHash: string, provider: string, expirySeconds: number): Promise<{ flow?: ClaimedOAuthFlow; used: boolean }> {
  const { rows } = await db.query<ClaimedOAuthFlow>({
    name: 'auth_claim_oauth_flow',
    text: `update auth.flow_state set state_secret = null, updated_at = now()
           where id = $1 and state_secret = $2 and provider_type = $3
           returning id, coalesce(referrer, '') as referrer, code_challenge is not null as pkce,
             created_at < now() - make_interval(secs => $4) as expired, user_id as link_user_id`,
    values: [id, secretHash, provider, expirySeconds],
  })
  if (rows[0] !== undefined) return { flow: rows[0], used: false }
  const { rowCount } = await db.query('select 1 from auth.flow_state where id = $1 and provider_type = $2 and state_secret is null', [id, provider])
  return { used: (rowCount ?? 0) > 0 }
}

export async function deleteFlowState(db: Queryable, id: string): Promise<void> {
  await db.query('delete from auth.flow_state where id = $1', [id])
}
