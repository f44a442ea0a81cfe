// GET /reauthenticate (supabase-js auth.reauthenticate()): mails the
// signed-in user a code, which PUT /user takes as `nonce` to change the
// password when the project requires it (GoTrue's reauthenticate.go and
// SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION).
import type pg from 'pg'
import type { ServiceResponse } from '../../lib/service.ts'
import { json } from '../../lib/service.ts'
import { tokenHash } from './codes.ts'
import { codesOfUser, countWrongGuess, deleteCode } from './db/one-time-tokens.ts'
import { transaction } from './db/pool.ts'
import { sessionIsRecent, type UserRow } from './db/users.ts'
import { currentUser, type CurrentUser } from './current-user.ts'
import { AuthError, authErrors } from './errors.ts'
import { audit, mailCode } from './links.ts'
import type { AuthRequest } from './request.ts'

/** GoTrue asks no nonce of a session begun within the last 24 hours (internal/api/user.go). */
const RECENT_SESSION_SECONDS = 24 * 3600

export async function reauthenticate(req: AuthRequest): Promise<ServiceResponse> {
  const { user } = await currentUser(req)
  if (!user.email) throw authErrors.validation('Reauthentication requires the user to have an email or a phone number')
  if (!user.email_confirmed_at) throw authErrors.verifyEmailFirst()
  await transaction(req.pool, async (client) => {
    await mailCode(client, req, user.id, user.email!)
    await audit(client, req, user.id, 'user_reauthenticate_requested')
  })
  return json(200, {})
}

/**
 * Whether this password change must carry a nonce: the project asks for
 * reauthentication and the caller's session is not a fresh one (or the
 * token has no session at all).
 */
export async function nonceRequired(req: AuthRequest, current: CurrentUser): Promise<boolean> {
  if (!req.settings.passwordChangeRequiresReauthentication) return false
  const sessionId = current.caller.sessionId
  return sessionId === null || !(await sessionIsRecent(req.pool, current.user.id, sessionId, RECENT_SESSION_SECONDS))
}

/**
 * Checks the nonce against the user's reauthentication code inside the
 * caller's transaction and spends it when it matches. A wrong nonce counts
 * as a wrong guess (five spend the code, as for every emailed code); the
 * error is returned rather than thrown so that the count is kept.
 */
export async function spendNonce(client: pg.ClientBase, req: AuthRequest, user: UserRow, nonce: string): Promise<AuthError | undefined> {
  const [code] = await codesOfUser(client, user.id, ['reauthentication_token'], req.settings.otpExpirySeconds, req.settings.otpMaxAttempts)
  if (code === undefined || code.expired || code.spent) return authErrors.reauthenticationNotValid()
  if (code.relates_to !== user.email || code.token_hash !== tokenHash(code.relates_to, nonce)) {
    await countWrongGuess(client, [code.id])
    return authErrors.reauthenticationNotValid()
  }
  await deleteCode(client, code.id)
  return undefined
}
