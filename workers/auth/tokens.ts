// The token service: access tokens with GoTrue's claims, sessions with
// rotating refresh tokens, and the session response (AccessTokenResponse).
import crypto from 'node:crypto'
import { onOneConnection, platformQueries, translating, type Queryable } from './db/pool.ts'
import { signAccessToken } from '../../lib/jwt.ts'
import { amrOf, insertSession, restoreRefreshToken, reuseRefreshToken, rotateRefreshToken, upgradeSession, type AmrEntry } from './db/sessions.ts'
import { log } from '../../lib/log.ts'
import { userById, type UserRow } from './db/users.ts'
import { AuthError, authErrors } from './errors.ts'
import { noteSession, sessionKind } from './usage-note.ts'
import { admitActiveUser } from './db/active-users.ts'
import { quotaRefusal } from '../../lib/plans.ts'
import type { AuthRequest } from './request.ts'
import { userJson } from './serialize.ts'
import { customAccessTokenClaims, inIssueTransaction } from './hooks/access-token.ts'

const TOKEN_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789'

/** Opaque refresh token: 24 characters of [a-z0-9] (GoTrue's legacy format, longer). */
export function newRefreshToken(): string {
  const bytes = crypto.randomBytes(24)
  let out = ''
  for (const b of bytes) out += TOKEN_ALPHABET[b % 36]
  return out
}

export interface Session {
  access_token: string
  token_type: 'bearer'
  expires_in: number
  expires_at: number
  refresh_token: string
  user: Record<string, unknown>
}

/** GoTrue's access token claims for `user` in session `sessionId`, issued at `iat` (seconds). */
export function accessTokenClaims(baseUrl: string, user: UserRow, sessionId: string, aal: string, amr: AmrEntry[], iat: number, expiresIn: number) {
  return {
    iss: `${baseUrl}/auth/v1`,
    sub: user.id,
    aud: user.aud || 'authenticated',
    exp: iat + expiresIn,
    iat,
    email: user.email ?? '',
    phone: user.phone ?? '',
    app_metadata: user.raw_app_meta_data ?? {},
    user_metadata: user.raw_user_meta_data ?? {},
    role: user.role || 'authenticated',
    aal,
    amr,
    session_id: sessionId,
    is_anonymous: user.is_anonymous,
  }
}

/**
 * A signed access token. With a custom access token hook, its claims are the
 * hook's (`method` is GoTrue's authentication_method), and `db` must be the
 * issue's transaction (inIssueTransaction), which a refusal rolls back, or
 * (a refresh) a connection whose failures are untranslated, the caller
 * undoing what it wrote.
 */
export async function accessToken(db: Queryable, req: AuthRequest, user: UserRow, sessionId: string, aal: string, amr: AmrEntry[], method: string): Promise<{ token: string; expiresAt: number; expiresIn: number }> {
  const now = Date.now()
  const iat = Math.floor(now / 1000)
  const expiresIn = req.settings.jwtExpirySeconds
  let claims: Record<string, unknown> = accessTokenClaims(req.raw.project.baseUrl, user, sessionId, aal, amr, iat, expiresIn)
  const hook = req.settings.hooks.customAccessToken
  if (hook !== undefined) claims = await customAccessTokenClaims(db, hook, { userId: user.id, claims, method, ip: req.ip })
  // The project's signing key in use (header kid), or its legacy secret while it has none.
  return { token: signAccessToken(req.raw.project, claims, now), expiresAt: iat + expiresIn, expiresIn }
}

async function sessionResponse(db: Queryable, req: AuthRequest, user: UserRow, sessionId: string, aal: string, amr: AmrEntry[], refreshToken: string, method: string): Promise<Session> {
  // A capped project refuses a sign-in that would add an active user past its figure; refreshes and
  // second factors never sign anyone out. The counters are the platform's: they are written on its
  // own login role, out of reach of the owner code Auth's transaction may run (a trigger on
  // auth.users, a hook), so a sign-in admitted here and then refused later still counts its user.
  const cap = req.raw.project.caps.monthly_active_users
  if (cap !== undefined && sessionKind(method) === 'sign_in' && !(await admitActiveUser(platformQueries(req.raw.project.platformDatabase ?? req.raw.project.database), user.id, cap))) {
    throw authErrors.overQuota(quotaRefusal('monthly_active_users', cap))
  }
  const access = await accessToken(db, req, user, sessionId, aal, amr, method)
  // Issued: the user is active this month, and a sign-in or refresh is counted (usage-note.ts).
  noteSession(req, user, method)
  return {
    access_token: access.token,
    token_type: 'bearer',
    expires_in: access.expiresIn,
    expires_at: access.expiresAt,
    refresh_token: refreshToken,
    user: userJson(user),
  }
}

export interface SignIn {
  method: string
  action?: string
  aal?: 'aal1' | 'aal2'
  factorId?: string | null
}

/** A new session for `user` (first factor `method`). */
export async function issueSession(db: Queryable, req: AuthRequest, user: UserRow, signIn: SignIn): Promise<Session> {
  return inIssueTransaction(db, req, (db) => newSession(db, req, user, signIn))
}

async function newSession(db: Queryable, req: AuthRequest, user: UserRow, signIn: SignIn): Promise<Session> {
  const refreshToken = newRefreshToken()
  const { sessionId, signedInAt } = await insertSession(db, {
    userId: user.id,
    method: signIn.method,
    refreshToken,
    aal: signIn.aal,
    factorId: signIn.factorId,
    ip: req.ip,
    userAgent: req.userAgent,
    action: signIn.action ?? 'login',
  })
  const signedIn = { ...user, last_sign_in_at: signedInAt }
  const amr = [{ method: signIn.method, timestamp: Math.floor(signedInAt.getTime() / 1000) }]
  return sessionResponse(db, req, signedIn, sessionId, signIn.aal ?? 'aal1', amr, refreshToken, signIn.method)
}

/** A session response for an existing session (after MFA verification: new refresh token issued by the caller). */
export async function resumeSession(db: Queryable, req: AuthRequest, user: UserRow, sessionId: string, aal: string, refreshToken: string, method: string): Promise<Session> {
  return sessionResponse(db, req, user, sessionId, aal, await amrOf(db, sessionId), refreshToken, method)
}

/**
 * The caller's session after a verified second factor: aal2, `method` added
 * to amr, a new refresh token (POST /factors/{id}/verify). Undefined when the
 * session is gone.
 */
export async function upgradeToAal2(db: Queryable, req: AuthRequest, userId: string, sessionId: string, factorId: string, method: string): Promise<Session | undefined> {
  const refreshToken = newRefreshToken()
  if (!(await upgradeSession(db, sessionId, factorId, method, refreshToken, req.ip))) return undefined
  const user = await userById(db, userId)
  if (user === undefined) return undefined
  return resumeSession(db, req, user, sessionId, 'aal2', refreshToken, method)
}

/**
 * POST /token?grant_type=refresh_token: rotate; a token already rotated gets
 * the session's current token when GoTrue's reuse rules allow it, otherwise
 * exactly why not.
 *
 * With a custom access token hook, the rotation commits on its own and the
 * hook runs after it, on the same connection, in one message of its own (an
 * implicit transaction); a refused or failed hook puts the rotation back. Two
 * round trips, where a transaction around both would take four (BEGIN,
 * rotate, hook, COMMIT). A rotation whose undo is lost (the connection dropped
 * in between) costs the client nothing: the parent of a session's current
 * token always gets the current one (reuseRefreshToken).
 */
export async function refreshSession(req: AuthRequest, token: string): Promise<Session> {
  if (token.length < 12 || !/^[a-zA-Z0-9_-]+$/.test(token)) throw authErrors.refreshTokenInvalid()
  // A refusal is thrown only after its statement: what it wrote (a reused token ends its session) stays.
  const answer = await translating(req.pool, () => onOneConnection(req.pool, (db) => refreshWith(db, req, token)))
  if (answer instanceof AuthError) throw answer
  return answer
}

async function refreshWith(db: Queryable, req: AuthRequest, token: string): Promise<Session | AuthError> {
  const next = newRefreshToken()
  const row = await rotateRefreshToken(db, token, next, req.ip)
  if (row !== undefined) {
    try {
      return await sessionResponse(db, req, row, row.session_id, row.aal, row.amr ?? [], next, 'token_refresh')
    } catch (error) {
      await restoreRefreshToken(db, token, next).catch((undo: unknown) => log.error('could not restore a refresh token after a refused issue', undo, { ref: req.pool.ref }))
      throw error
    }
  }
  const reuse = await reuseRefreshToken(db, token, req.settings.refreshTokenReuseIntervalSeconds, req.ip)
  switch (reuse.why) {
    case 'current':
      return sessionResponse(db, req, reuse.row, reuse.row.session_id, reuse.row.aal, reuse.row.amr ?? [], reuse.refreshToken, 'token_refresh')
    case 'not_found':
      return authErrors.refreshTokenNotFound()
    case 'session_not_found':
      return authErrors.refreshSessionNotFound()
    case 'session_expired':
      return authErrors.refreshSessionExpired()
    case 'user_banned':
      return authErrors.userBanned()
    case 'reused_recently':
    case 'reused':
      return authErrors.refreshTokenAlreadyUsed()
  }
}

/** A session as the fields of a redirect's fragment, as GoTrue writes them (email links, OAuth callbacks). */
export function sessionFragmentValues(session: Session, extra: Record<string, string> = {}): Record<string, string> {
  return {
    access_token: session.access_token,
    expires_at: String(session.expires_at),
    expires_in: String(session.expires_in),
    refresh_token: session.refresh_token,
    sb: '',
    token_type: 'bearer',
    ...extra,
  }
}
