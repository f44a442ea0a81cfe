// GET /admin/users/{id}/factors and DELETE /admin/users/{id}/factors/{factor_id}
// (service_role): support staff list a user's second factors and remove a
// lost one (supabase-js auth.admin.mfa.listFactors / deleteFactor; GoTrue's
// admin.go). Shapes and 404s as GoTrue's.
import type { ServiceResponse } from '../../lib/service.ts'
import { json } from '../../lib/service.ts'
import { requestScope } from './admin.ts'
import { requireAdmin, type AuthRequest } from './request.ts'
import { deleteFactor, listFactors } from './users-admin.ts'

/** A bare JSON array of the user's factors, verified and unverified (never their secrets). */
export async function listUserFactors(req: AuthRequest, userId: string): Promise<ServiceResponse> {
  requireAdmin(req)
  return json(200, await listFactors(requestScope(req), userId))
}

/** Removes the factor and answers it as it was (users-admin.ts deleteFactor: sessions it raised drop to aal1). */
export async function deleteUserFactor(req: AuthRequest, userId: string, factorParam: string): Promise<ServiceResponse> {
  requireAdmin(req)
  return json(200, await deleteFactor(requestScope(req), userId, factorParam))
}
