// POST /recover: mails a password-recovery link. Answers {} for unknown
// addresses too, so it reveals no accounts (GoTrue).
import type { ServiceResponse } from '../../lib/service.ts'
import { json } from '../../lib/service.ts'
import { transaction } from './db/pool.ts'
import { userByEmail } from './db/users.ts'
import { normalizeEmail } from './email.ts'
import { authErrors } from './errors.ts'
import { audit, mailLink, pkceOf } from './links.ts'
import { redirectTo, str, type AuthRequest } from './request.ts'

export async function recover(req: AuthRequest): Promise<ServiceResponse> {
  const raw = str(req.body, 'email')
  if (!raw) throw authErrors.validation('Password recovery requires an email')
  const email = normalizeEmail(raw)
  const pkce = pkceOf(req.body)
  const redirect = redirectTo(req)
  const user = await userByEmail(req.pool, email)
  if (user !== undefined) {
    await transaction(req.pool, async (client) => {
      await mailLink(client, req, { userId: user.id, email, type: 'recovery', redirectTo: redirect, pkce })
      await audit(client, req, user.id, 'user_recovery_requested')
    })
  }
  return json(200, {})
}
