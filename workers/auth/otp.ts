// POST /otp (email) and POST /magiclink: a sign-in link and six-digit code by
// mail. A new or unconfirmed address gets the confirmation mail, which signs
// in as well (GoTrue); create_user false refuses unknown addresses.
import type { ServiceResponse } from '../../lib/service.ts'
import { json } from '../../lib/service.ts'
import { transaction } from './db/pool.ts'
import { insertUser, userByEmail } from './db/users.ts'
import { normalizeEmail } from './email.ts'
import { authErrors } from './errors.ts'
import { audit, mailLink, pkceOf } from './links.ts'
import { obj, redirectTo, str, type AuthRequest } from './request.ts'

export async function otp(req: AuthRequest): Promise<ServiceResponse> {
  const body = req.body
  const raw = str(body, 'email')
  const phone = str(body, 'phone')
  if (raw && phone) throw authErrors.validation('Only an email address or phone number should be provided')
  if (phone) throw authErrors.phoneDisabled()
  if (str(body, 'channel')) throw authErrors.validation('Channel should only be specified with Phone OTP')
  if (!raw) throw authErrors.validation('One of email or phone must be set')
  const email = normalizeEmail(raw)
  const createUser = body.create_user === undefined || body.create_user === null ? true : body.create_user === true
  const data = obj(body, 'data') ?? {}
  const pkce = pkceOf(body)
  const redirect = redirectTo(req)
  const user = await userByEmail(req.pool, email)
  if (user === undefined && !createUser) throw authErrors.otpDisabled()
  if (user === undefined && req.settings.disableSignup) throw authErrors.signupDisabled()
  await transaction(req.pool, async (client) => {
    if (user === undefined) {
      const id = await insertUser(client, { email, encryptedPassword: null, confirmed: false, userMetadata: data })
      await audit(client, req, id, 'user_signedup', { provider: 'email' })
      await mailLink(client, req, { userId: id, email, type: 'signup', redirectTo: redirect, pkce })
    } else if (!user.email_confirmed_at) {
      await mailLink(client, req, { userId: user.id, email, type: 'signup', redirectTo: redirect, pkce })
    } else {
      await mailLink(client, req, { userId: user.id, email, type: 'magiclink', redirectTo: redirect, pkce })
      await audit(client, req, user.id, 'user_recovery_requested', { magiclink: true })
    }
  })
  return json(200, {})
}
