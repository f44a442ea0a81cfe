// GET /authorize?provider=google and GET /callback: sign-in with Google, the
// one external provider (SPEC 1.1, 2.2, 3; GoTrue's external.go, §5.5 of the
// reference). The callback address is always {base_url}/auth/v1/callback.
import type pg from 'pg'
import { BaseplaneError } from '../../lib/errors.ts'
import { log } from '../../lib/log.ts'
import type { ServiceResponse } from '../../lib/service.ts'
import { claimOAuthFlow, createFlowState, deleteFlowState, FLOW_STATE_EXPIRY_SECONDS, issueAuthCode } from './db/flow-state.ts'
import { createIdentityUser, linkIdentity, lockIdentity, signInIdentity, userIdByEmail } from './db/identities.ts'
import { transaction } from './db/pool.ts'
import { userById, type UserRow } from './db/users.ts'
import { authErrors } from './errors.ts'
import { attachIdentity } from './linking.ts'
import { authorizationUrl, exchangeCode, IdTokenError, verifyIdToken, type GoogleClient } from './google-provider.ts'
import { pkceOf } from './links.ts'
import { newStateSecret, nonceOf, secretHash, signState, verifyState } from './oauth-state.ts'
import { redirectTo, type AuthRequest } from './request.ts'
import { googleMissing } from './settings.ts'
import { issueSession, sessionFragmentValues } from './tokens.ts'

const PROVIDER = 'google'

/** Query parameters /authorize keeps to itself; every other one is passed on to Google (as GoTrue does). */
const RESERVED = new Set([
  'provider', 'scopes', 'scope', 'redirect_to', 'client_id', 'client_secret', 'redirect_uri', 'response_type', 'state',
  'code_challenge', 'code_challenge_method', 'code_verifier', 'nonce', 'skip_http_redirect',
])

export function callbackUrl(req: AuthRequest): string {
  return `${req.raw.project.baseUrl}/auth/v1/callback`
}

/** The project's Google client, or GoTrue's "provider is not enabled" when any of the three settings is missing. */
function googleClient(req: AuthRequest): GoogleClient {
  const google = req.settings.google
  if (googleMissing(google).length > 0) throw authErrors.providerDisabled()
  return { clientId: google.clientId!, clientSecret: google.clientSecret!, redirectUri: callbackUrl(req) }
}

function found(location: string, status = 302): ServiceResponse {
  return { status, headers: { location, 'content-type': 'text/plain' }, body: '' }
}

export async function authorize(req: AuthRequest): Promise<ServiceResponse> {
  return found(await googleAuthorizationUrl(req, null))
}

/**
 * Google's authorization URL for a new flow (its state, nonce and PKCE
 * challenge kept in auth.flow_state). `linkUserId`: the signed-in user a
 * linkIdentity() flow attaches the identity to (linked-identities.ts).
 */
export async function googleAuthorizationUrl(req: AuthRequest, linkUserId: string | null): Promise<string> {
  if (req.query.get('provider') !== PROVIDER) throw authErrors.providerDisabled()
  const client = googleClient(req)
  const referrer = redirectTo(req)
  const pkce = pkceOf({ code_challenge: req.query.get('code_challenge'), code_challenge_method: req.query.get('code_challenge_method') })
  const scopes = (req.query.get('scopes') ?? '').split(/[\s,]+/).filter((s) => s !== '')
  const extra: Record<string, string> = {}
  for (const [key, value] of req.query) if (!RESERVED.has(key)) extra[key] = value
  const secret = newStateSecret()
  const flow = await createFlowState(req.pool, { userId: linkUserId, pkce, providerType: PROVIDER, method: 'oauth', referrer, stateSecret: secretHash(secret) })
  const state = await signState(req.raw.project.jwtSecret, { flowStateId: flow.id, secret, provider: PROVIDER }, req.settings.siteUrl)
  return authorizationUrl(client, state, nonceOf(secret), scopes, extra)
}

const OAUTH_ERROR: Record<number, string> = { 400: 'invalid_request', 401: 'unauthorized_client', 403: 'access_denied', 500: 'server_error', 503: 'temporarily_unavailable' }
const ACCESS_DENIED = new Set(['signup_disabled', 'user_banned', 'provider_email_needs_verification'])

interface RedirectError {
  error: string
  error_code: string
  error_description: string
}

function redirectError(error: BaseplaneError): RedirectError {
  const oauth = ACCESS_DENIED.has(error.code) ? 'access_denied' : (OAUTH_ERROR[error.status] ?? 'server_error')
  return { error: oauth, error_code: error.code, error_description: error.message }
}

/**
 * A failed callback: back to `to` with the error in the query and again in
 * the fragment (GoTrue's redirectErrors). Counts as a failed sign-in attempt.
 */
function errorRedirect(to: string, values: RedirectError, status = 302): ServiceResponse {
  const url = new URL(to)
  for (const [key, value] of Object.entries(values)) url.searchParams.set(key, value)
  const fragment = new URLSearchParams({ ...values, sb: '' })
  url.hash = ''
  return { ...found(`${url.toString()}#${fragment.toString()}`, status), throttleFailure: true }
}

function sorted(values: Record<string, string>): string {
  const params = new URLSearchParams()
  for (const key of Object.keys(values).sort()) params.set(key, values[key]!)
  return params.toString()
}

const stateError = authErrors.badOAuthState
const callbackError = authErrors.badOAuthCallback

export async function callback(req: AuthRequest): Promise<ServiceResponse> {
  const query = req.query
  const siteUrl = req.settings.siteUrl
  // Until the state is checked there is no flow to return to: errors go to the site URL (GoTrue: 303).
  const rawState = query.get('state')
  if (!rawState) return errorRedirect(siteUrl, redirectError(callbackError('OAuth state parameter missing')), 303)
  const state = await verifyState(req.raw.project.jwtSecret, rawState)
  if (state === 'expired') return errorRedirect(siteUrl, redirectError(stateError('OAuth state has expired')), 303)
  if (state === 'invalid' || state.provider !== PROVIDER) return errorRedirect(siteUrl, redirectError(stateError('OAuth state parameter is invalid')), 303)
  const claim = await claimOAuthFlow(req.pool, state.flowStateId, secretHash(state.secret), PROVIDER, FLOW_STATE_EXPIRY_SECONDS)
  if (claim.flow === undefined) {
    const error = claim.used ? authErrors.flowStateAlreadyUsed() : stateError('OAuth state not found or expired')
    return errorRedirect(siteUrl, redirectError(error), 303)
  }
  const flow = claim.flow
  const referrer = flow.referrer || siteUrl
  try {
    if (flow.expired) throw stateError('OAuth state has expired')
    const providerError = query.get('error')
    if (providerError) {
      // Google's own refusal (the user cancelled, the client is misconfigured...): its words, our code.
      const description = query.get('error_description') || `Google sign-in failed: ${providerError}`
      await deleteFlowState(req.pool, flow.id)
      return errorRedirect(referrer, { error: providerError, error_code: 'bad_oauth_callback', error_description: description })
    }
    const code = query.get('code')
    if (!code) throw callbackError('OAuth callback with missing authorization code missing')
    const location = await signIn(req, flow, referrer, code, nonceOf(state.secret))
    return found(location)
  } catch (error) {
    if (!BaseplaneError.is(error)) throw error
    await deleteFlowState(req.pool, flow.id).catch(() => {})
    return errorRedirect(referrer, redirectError(error))
  }
}

/** A library error's reason without the token or claims it may quote (no personal data in logs). */
function reasonOf(error: unknown): string {
  return String((error as Error).message ?? error).replace(/:\s*(ey[\w-]+\.[\w-]+\.[\w-]*|\{.*\})\s*$/s, '').slice(0, 200)
}

function identityDataOf(claims: Record<string, unknown>, email: string): Record<string, unknown> {
  const data: Record<string, unknown> = {
    iss: claims.iss,
    sub: claims.sub,
    email,
    email_verified: claims.email_verified === true || claims.email_verified === 'true',
    phone_verified: false,
    provider_id: claims.sub,
  }
  if (typeof claims.name === 'string') data.name = data.full_name = claims.name
  if (typeof claims.picture === 'string') data.picture = data.avatar_url = claims.picture
  return data
}

export interface GoogleIdentity {
  email: string
  sub: string
  data: Record<string, unknown>
}

/** The identity of verified ID token claims; refused without an address Google has verified. */
export function googleIdentity(claims: Record<string, unknown>): GoogleIdentity {
  const email = typeof claims.email === 'string' ? claims.email.trim().toLowerCase() : ''
  if (email === '') throw authErrors.unexpected('Error getting user email from external provider')
  if (!(claims.email_verified === true || claims.email_verified === 'true')) {
    throw authErrors.providerEmailNeedsVerification()
  }
  return { email, sub: String(claims.sub), data: identityDataOf(claims, email) }
}

/**
 * The user of a Google identity, in the caller's transaction: the one it is
 * linked to, else the user with its address (linked now), else a new user
 * unless sign-ups are off. Banned users are refused.
 */
export async function googleUser(db: pg.ClientBase, req: AuthRequest, identity: GoogleIdentity): Promise<UserRow> {
  await lockIdentity(db, PROVIDER, identity.sub, identity.email)
  let userId = await signInIdentity(db, PROVIDER, identity.sub, identity.data)
  if (userId === undefined) {
    const existing = await userIdByEmail(db, identity.email)
    if (existing !== undefined) {
      await linkIdentity(db, existing.id, existing.confirmed, PROVIDER, identity.sub, identity.data)
      userId = existing.id
    } else {
      if (req.settings.disableSignup) throw authErrors.signupDisabled()
      userId = await createIdentityUser(db, identity.email, PROVIDER, identity.sub, identity.data)
    }
  }
  const user = (await userById(db, userId))!
  if (user.banned_until && user.banned_until > new Date()) throw authErrors.userBanned403()
  return user
}

/** Exchanges the code, checks the ID token, finds, links or creates the user; the Location of a successful sign-in. */
async function signIn(req: AuthRequest, flow: { id: string; pkce: boolean; link_user_id: string | null }, referrer: string, code: string, nonce: string): Promise<string> {
  const client = googleClient(req)
  let tokens
  try {
    tokens = await exchangeCode(client, code)
  } catch (error) {
    log.info('google code exchange failed', { ref: req.raw.project.ref, reason: reasonOf(error) })
    throw authErrors.unexpected(`Unable to exchange external code: ${code}`)
  }
  let claims: Record<string, unknown>
  try {
    claims = await verifyIdToken(client, tokens.idToken, nonce)
  } catch (error) {
    if (!(error instanceof IdTokenError)) throw error
    log.info('google ID token refused', { ref: req.raw.project.ref, reason: reasonOf(error) })
    throw authErrors.unexpected('Error getting user profile from external provider')
  }
  const identity = googleIdentity(claims)
  return transaction(req.pool, async (db) => {
    // A linkIdentity() flow attaches the identity to the user who started it, then signs that user in.
    const user = flow.link_user_id !== null ? await attachIdentity(db, req, flow.link_user_id, PROVIDER, identity) : await googleUser(db, req, identity)
    if (flow.pkce) {
      const authCode = await issueAuthCode(db, flow.id, user.id, { access: tokens.accessToken, refresh: tokens.refreshToken })
      if (authCode === undefined) throw stateError('OAuth state not found or expired')
      const url = new URL(referrer)
      url.searchParams.set('code', authCode)
      url.hash = ''
      return url.toString()
    }
    await deleteFlowState(db, flow.id)
    const session = await issueSession(db, req, user, { method: 'oauth' })
    const values = sessionFragmentValues(session)
    if (tokens.accessToken) values.provider_token = tokens.accessToken
    if (tokens.refreshToken) values.provider_refresh_token = tokens.refreshToken
    return `${referrer.split('#')[0]}#${sorted(values)}`
  })
}
