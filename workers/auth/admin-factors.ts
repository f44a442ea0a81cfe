// GET /admin/users/{id}/factors and DELETE /admin/users/{id}/factors/{factor_id}
// (service_role): support staff list a user's second factors and remove a
// lost one (supabase-js auth.admin.mfa.listFactors / deleteFactor; GoTrue's
// admin.go). Shapes and 404s as GoTrue's.
import type { ServiceResponse } from '../../lib/service.ts'
import { json } from '../../lib/service.ts'
import { deleteFactor as deleteFactorRows } from './db/factors.ts'
import { transaction, type Queryable } from './db/pool.ts'
import { userById, type UserRow } from './db/users.ts'
import { authErrors } from './errors.ts'
import { audit } from './links.ts'
import { requireAdmin, uuidParam, type AuthRequest } from './request.ts'
import { factorJson } from './serialize.ts'

/** GoTrue's loadUser for admin routes: the id must be a UUID, and a user's. */
async function adminTarget(db: Queryable, userId: string): Promise<UserRow> {
  const user = await userById(db, uuidParam(userId, 'user_id'))
  if (user === undefined) throw authErrors.userNotFound()
  return user
}

/** A bare JSON array of the user's factors, verified and unverified (never their secrets). */
export async function listUserFactors(req: AuthRequest, userId: string): Promise<ServiceResponse> {
  requireAdmin(req)
  const user = await adminTarget(req.pool, userId)
  return json(200, (user.factors ?? []).map(factorJson))
}

/**
 * Removes the factor and answers it as it was. The sessions it had raised
 * to aal2 drop back to aal1 (GoTrue since v2.193.0): their next refresh and
 * Auth's own checks see aal1; access tokens already issued keep their `aal`
 * claim until they expire, as every JWT does.
 */
export async function deleteUserFactor(req: AuthRequest, userId: string, factorParam: string): Promise<ServiceResponse> {
  requireAdmin(req)
  const deleted = await transaction(req.pool, async (client) => {
    const user = await adminTarget(client, userId)
    const factorId = uuidParam(factorParam, 'factor_id')
    const factor = (user.factors ?? []).find((f) => f.id === factorId)
    if (factor === undefined) throw authErrors.factorNotFound()
    await deleteFactorRows(client, factorId)
    await audit(client, req, user.id, 'factor_deleted', { factor_id: factorId, factor_status: factor.status, via: 'admin' })
    return factor
  })
  return json(200, factorJson(deleted))
}
