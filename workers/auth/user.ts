// GET /user and PUT /user (password change, metadata, email change with a
// confirmation mailed to the new address).
import type { ServiceResponse } from '../../lib/service.ts'
import { json } from '../../lib/service.ts'
import { transaction } from './db/pool.ts'
import { emailTakenByOther, mergeMetadata, setEmailChange, setPassword, userById } from './db/users.ts'
import { currentUser, hasVerifiedFactor } from './current-user.ts'
import { normalizeEmail } from './email.ts'
import { authErrors } from './errors.ts'
import { audit, mailLink, pkceOf } from './links.ts'
import { checkNewPassword, hashPassword, passwordMatches } from './passwords.ts'
import { obj, redirectTo, str, type AuthRequest } from './request.ts'
import { userJson } from './serialize.ts'

export async function getUser(req: AuthRequest): Promise<ServiceResponse> {
  const { user } = await currentUser(req)
  return json(200, userJson(user))
}

export async function putUser(req: AuthRequest): Promise<ServiceResponse> {
  const { caller, user, aal } = await currentUser(req)
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
  let encrypted: string | undefined
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
  const updated = await transaction(req.pool, async (client) => {
    if (encrypted) {
      await setPassword(client, user.id, encrypted)
      await audit(client, req, user.id, 'user_updated_password')
    }
    if (data) await mergeMetadata(client, user.id, 'raw_user_meta_data', data)
    if (appMetadata) await mergeMetadata(client, user.id, 'raw_app_meta_data', appMetadata)
    if (email) {
      if (await emailTakenByOther(client, email, user.id)) throw authErrors.emailExists()
      await setEmailChange(client, user.id, email, false)
      await mailLink(client, req, { userId: user.id, email: user.email ?? '', newEmail: email, type: 'email_change', redirectTo: redirect, pkce })
      await audit(client, req, user.id, 'user_modified', { new_email: email })
    }
    return (await userById(client, caller.userId))!
  })
  return json(200, userJson(updated))
}
