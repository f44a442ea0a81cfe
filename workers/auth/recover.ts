// POST /recover: mails a password-recovery link. Answers {} for unknown
// addresses too, so it reveals no accounts (GoTrue). The operation is
// users-admin.ts sendRecovery, which the control plane calls too.
import type { ServiceResponse } from '../../lib/service.ts'
import { json } from '../../lib/service.ts'
import { requestScope } from './admin.ts'
import { normalizeEmail } from './email.ts'
import { authErrors } from './errors.ts'
import { pkceOf } from './links.ts'
import { str, type AuthRequest } from './request.ts'
import { sendRecovery } from './users-admin.ts'

export async function recover(req: AuthRequest): Promise<ServiceResponse> {
  const raw = str(req.body, 'email')
  // GoTrue's order of refusals: the address (missing, then malformed) before the PKCE parameters.
  if (!raw) throw authErrors.validation('Password recovery requires an email')
  const email = normalizeEmail(raw)
  await sendRecovery(requestScope(req), { email, pkce: pkceOf(req.body), redirectTo: req.query.get('redirect_to') ?? req.raw.headers['redirect_to'] })
  return json(200, {})
}
