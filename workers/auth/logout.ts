// POST /logout?scope=global|local|others (GoTrue: 204, default global).
import type { ServiceResponse } from '../../lib/service.ts'
import { deleteSessions } from './db/sessions.ts'
import { currentUser } from './current-user.ts'
import { authErrors } from './errors.ts'
import type { AuthRequest } from './request.ts'

const SCOPES = ['global', 'local', 'others'] as const

export async function logout(req: AuthRequest): Promise<ServiceResponse> {
  const { caller } = await currentUser(req)
  const scope = req.query.get('scope') ?? 'global'
  if (!(SCOPES as readonly string[]).includes(scope)) throw authErrors.validation(`Unsupported logout scope "${scope}"`)
  await deleteSessions(req.pool, caller.userId, caller.sessionId, scope as (typeof SCOPES)[number], req.ip)
  return { status: 204, headers: {}, body: '' }
}
