// The signed-in caller of a user endpoint, loaded with its session check
// (GoTrue's requireAuthentication + loadUser + session lookup), one statement.
import { userWithSession, type UserRow } from './db/users.ts'
import { authErrors } from './errors.ts'
import { requireUser, type AuthRequest, type Caller } from './request.ts'

export interface CurrentUser {
  caller: Caller
  user: UserRow
  /** The session's assurance level as stored (aal1 when the token has no session). */
  aal: string
}

export async function currentUser(req: AuthRequest): Promise<CurrentUser> {
  const caller = requireUser(req)
  const row = await userWithSession(req.pool, caller.userId, caller.sessionId)
  if (row === undefined) throw authErrors.userFromSubMissing()
  if (caller.sessionId !== null && !row.session_ok) throw authErrors.sessionNotFound()
  if (row.banned_until && row.banned_until > new Date()) throw authErrors.userBanned403()
  return { caller, user: row, aal: row.session_aal ?? (typeof caller.claims.aal === 'string' ? caller.claims.aal : 'aal1') }
}

export function hasVerifiedFactor(user: UserRow): boolean {
  return (user.factors ?? []).some((f) => f.status === 'verified')
}
