// GET /user and PUT /user (password change, with the reauthentication nonce
// when the project asks for it; metadata; email change, confirmed by the new
// address and, with secure email change, by the current one too). An
// anonymous user becomes permanent by an email change: at once under
// autoconfirm, otherwise once the new address confirms (GoTrue's user.go).
import type { ServiceResponse } from '../../lib/service.ts'
import { json } from '../../lib/service.ts'
import { transaction } from './db/pool.ts'
import { emailTakenByOther, mergeMetadata, setEmail, setPassword, userById, type UserRow } from './db/users.ts'
import { currentUser, hasVerifiedFactor } from './current-user.ts'
import { normalizeEmail } from './email.ts'
import { authErrors, type AuthError } from './errors.ts'
import { audit, mailEmailChange, pkceOf } from './links.ts'
import { nonceRequired, spendNonce } from './reauthenticate.ts'
import { checkNewPassword, hashPassword, passwordMatches } from './passwords.ts'
import { obj, redirectTo, str, type AuthRequest } from './request.ts'
import { userJson } from './serialize.ts'

export async function getUser(req: AuthRequest): Promise<ServiceResponse> {
  const { user } = await currentUser(req)
  return json(200, userJson(user))
}

export async function putUser(req: AuthRequest): Promise<ServiceResponse> {
  const current = await currentUser(req)
  const { caller, user, aal } = current
  const body = req.body
  const password = str(body, 'password')
  const rawEmail = str(body, 'email')
  const data = obj(body, 'data')
  const appMetadata = obj(body, 'app_metadata')
  if (appMetadata && req.raw.identity?.role !== 'service_role') throw authErrors.notAdmin()
  if (str(body, 'phone')) throw authErrors.phoneDisabled()
  if ((password !== undefined || rawEmail !== undefined) && hasVerifiedFactor(user) && aal !== 'aal2') {
    throw authErrors.insufficientAal('AAL2 session is required to update email or password when MFA is enabled.', 401)
  }
  // GoTrue: an anonymous user sets a password only together with the address that converts it.
  if (user.is_anonymous && password !== undefined && !rawEmail) throw authErrors.anonymousPasswordWithoutEmail()
  let encrypted: string | undefined
  let nonce: string | undefined
  if (password !== undefined && (await nonceRequired(req, current))) {
    nonce = str(body, 'nonce')
    if (!nonce) throw authErrors.reauthenticationNeeded()
  }
  if (password !== undefined) {
    checkNewPassword(password, req.settings, 'Password update requires a valid password')
    if (user.encrypted_password && passwordMatches(password, user.encrypted_password)) throw authErrors.samePassword()
    encrypted = hashPassword(password)
  }
  let email: string | undefined
  if (rawEmail !== undefined) {
    email = normalizeEmail(rawEmail)
    if (email === user.email) email = undefined
  }
  const pkce = email ? pkceOf(body) : undefined
  const redirect = email ? redirectTo(req) : ''
  const outcome = await transaction(req.pool, async (client): Promise<{ error: AuthError } | { updated: UserRow }> => {
    if (nonce !== undefined) {
      const refused = await spendNonce(client, req, user, nonce)
      if (refused) return { error: refused }
    }
    if (encrypted) {
      await setPassword(client, user.id, encrypted)
      await audit(client, req, user.id, 'user_updated_password')
    }
    if (data) await mergeMetadata(client, user.id, 'raw_user_meta_data', data)
    if (appMetadata) await mergeMetadata(client, user.id, 'raw_app_meta_data', appMetadata)
    if (email) {
      if (await emailTakenByOther(client, email, user.id)) throw authErrors.emailExists()
      if (user.is_anonymous && req.settings.mailerAutoconfirm) {
        // GoTrue: an anonymous user adding an address under autoconfirm is like a sign-up; no mail.
        await setEmail(client, user.id, email)
        await audit(client, req, user.id, 'user_modified', { email_change: true })
      } else {
        await mailEmailChange(client, req, { userId: user.id, email: user.email ?? '', newEmail: email, redirectTo: redirect, pkce })
        await audit(client, req, user.id, 'user_modified', { new_email: email })
      }
    }
    return { updated: (await userById(client, caller.userId))! }
  })
  if ('error' in outcome) throw outcome.error
  return json(200, userJson(outcome.updated))
}
