// POST /resend {type: signup|email_change, email}: mails the pending link
// again. Unknown users and nothing pending answer {} as well (GoTrue). Phone
// types are refused as GoTrue refuses them with its phone provider off.
import type { ServiceResponse } from '../../lib/service.ts'
import { json } from '../../lib/service.ts'
import { transaction } from './db/pool.ts'
import { normalizeEmail } from './email.ts'
import { authErrors } from './errors.ts'
import { mailEmailChange, mailLink, pkceOf } from './links.ts'
import { redirectTo, str, type AuthRequest } from './request.ts'

export async function resend(req: AuthRequest): Promise<ServiceResponse> {
  const type = str(req.body, 'type')
  const raw = str(req.body, 'email')
  const phone = str(req.body, 'phone')
  // GoTrue's ResendConfirmationParams.Validate, check by check in its order, with the phone provider off.
  if (type !== 'signup' && type !== 'email_change' && type !== 'sms' && type !== 'phone_change') {
    throw authErrors.validation('Missing one of these types: signup, email_change, sms, phone_change')
  }
  if (!raw && type === 'signup') throw authErrors.validation('Type provided requires an email address')
  if (!phone && type === 'sms') throw authErrors.validation('Type provided requires a phone number')
  if (raw && phone) throw authErrors.validation('Only an email address or phone number should be provided.')
  if (!raw) throw phone ? authErrors.phoneDisabled('Phone logins are disabled') : authErrors.validation('Missing email address or phone number')
  const email = normalizeEmail(raw)
  // A phone change found by email: no user has a phone, so none has one pending, and GoTrue answers {} as for an unknown user.
  if (type === 'phone_change') return json(200, {})
  const pkce = pkceOf(req.body)
  const redirect = redirectTo(req)
  const { rows } = await req.pool.query<{ id: string; email: string; email_change: string | null; email_confirmed_at: Date | null }>(
    type === 'signup'
      ? 'select id, email, email_change, email_confirmed_at from auth.users where email = $1'
      : 'select id, email, email_change, email_confirmed_at from auth.users where email_change = $1 or (email = $1 and email_change is not null)',
    [email],
  )
  const user = rows[0]
  if (user === undefined) return json(200, {})
  if (type === 'signup' && user.email_confirmed_at) return json(200, {})
  await transaction(req.pool, async (client) => {
    if (type === 'signup') await mailLink(client, req, { userId: user.id, email: user.email, type: 'signup', redirectTo: redirect, pkce })
    else await mailEmailChange(client, req, { userId: user.id, email: user.email, newEmail: user.email_change!, redirectTo: redirect, pkce })
  })
  return json(200, {})
}
