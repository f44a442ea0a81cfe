// The API roles every project database has (Supabase's anon, authenticated and
// service_role) and the identity a request runs as. Their one home, at the
// bottom of lib/: the JWT check names the role a token may claim, the plans
// give each role its limits, and request-transaction.ts sets the role.
export type ApiRole = 'anon' | 'authenticated' | 'service_role'

export const API_ROLES: readonly ApiRole[] = ['anon', 'authenticated', 'service_role']

export interface RequestIdentity {
  /**
   * The role the work runs as: one of the API roles (all the HTTP gate lets
   * through), or, for library callers, any role the login role may SET ROLE
   * to (a role the project made, as pg_graphql serves any role).
   */
  role: string
  /** The verified JWT claims of the caller (or of the apikey when no user token is sent). */
  claims: Record<string, unknown>
}

export function isApiRole(value: unknown): value is ApiRole {
  return typeof value === 'string' && (API_ROLES as readonly string[]).includes(value)
}
