// The admin API's API-role timeouts (`/platform/v1/projects/{ref}/timeouts`),
// the operations of role-timeouts.ts, as the CLI's `timeouts`.
import { platformErrors } from '../../lib/errors.ts'
import type { ControlPlane } from '../control-plane.ts'
import { getRoleTimeouts, readTimeout, setRoleTimeouts, TIMEOUT_FIELDS, type RoleTimeoutsChange } from '../role-timeouts.ts'
import { REF_PARAM, type AdminRoute } from './route.ts'

/**
 * The body: `{anon, authenticated, service_role, idle_in_transaction}`, each
 * milliseconds or a duration string, or null for the default. Every problem
 * is found before anything is saved.
 */
export function changeFromBody(body: Record<string, unknown>): RoleTimeoutsChange {
  const unknown = Object.keys(body).filter((key) => !(TIMEOUT_FIELDS as readonly string[]).includes(key))
  if (unknown.length > 0) throw platformErrors.invalidArgument(`Unknown timeout "${unknown[0]}": use ${TIMEOUT_FIELDS.join(', ')}`)
  const set: RoleTimeoutsChange['set'] = {}
  for (const field of TIMEOUT_FIELDS) {
    if (!(field in body)) continue
    const value = body[field]
    if (value === null) {
      set[field] = null
      continue
    }
    const read = readTimeout(value, `"${field}"`)
    if ('problem' in read) throw platformErrors.invalidArgument(read.problem)
    set[field] = read.ms
  }
  if (Object.keys(set).length === 0) throw platformErrors.invalidArgument(`Give at least one of ${TIMEOUT_FIELDS.join(', ')} (null puts one back to its default)`)
  return { set }
}

export function roleTimeoutRoutes(controlPlane: ControlPlane): AdminRoute[] {
  const path = '/projects/:ref/timeouts'
  return [
    { method: 'GET', access: 'read', path, where: REF_PARAM, handler: async ({ params }) => [200, await getRoleTimeouts(controlPlane, params.ref!)] },
    {
      method: 'PATCH', access: 'write',
      path,
      where: REF_PARAM,
      handler: async ({ params, body }) => {
        const change = changeFromBody(await body())
        return [200, await setRoleTimeouts(controlPlane, params.ref!, change)]
      },
    },
  ]
}
