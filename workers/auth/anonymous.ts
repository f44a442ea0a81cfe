// POST /signup with neither email nor phone: an anonymous sign-in (GoTrue's
// anonymous.go, a per-project switch, off by default). Checks in GoTrue's
// order: the switch (422 anonymous_provider_disabled), the per-address rate
// limit (429 over_request_rate_limit), sign-ups disabled (422
// signup_disabled). The user has no email, phone, password or identity;
// `data` becomes its user_metadata; its session's amr is `anonymous` and its
// tokens carry `is_anonymous: true` until an address change makes it
// permanent (user.ts, verify.ts).
import type { ServiceResponse } from '../../lib/service.ts'
import { json } from '../../lib/service.ts'
import { anonymousSignupsInLastHour } from './db/audit.ts'
import { transaction } from './db/pool.ts'
import { safeInet } from './db/sessions.ts'
import { insertAnonymousUser, userById } from './db/users.ts'
import { authErrors } from './errors.ts'
import { obj, type AuthRequest } from './request.ts'
import { issueSession } from './tokens.ts'

export async function signupAnonymously(req: AuthRequest): Promise<ServiceResponse> {
  if (!req.settings.anonymousUsersEnabled) throw authErrors.anonymousDisabled()
  const data = obj(req.body, 'data') ?? {}
  const session = await transaction(req.pool, async (client) => {
    // GoTrue's limiter keeps its count in memory per node; here it is the
    // project's audit log, so the limit holds across nodes. The sign-in
    // below writes the entry that counts.
    if ((await anonymousSignupsInLastHour(client, safeInet(req.ip))) >= req.settings.anonymousUsersPerHour) throw authErrors.overRequestRateLimit()
    if (req.settings.disableSignup) throw authErrors.signupDisabled()
    const userId = await insertAnonymousUser(client, data)
    const user = (await userById(client, userId))!
    return issueSession(client, req, user, { method: 'anonymous', action: 'user_signedup' })
  })
  return json(200, session)
}
