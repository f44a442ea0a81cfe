// The admin API's Auth users of a project: removing old anonymous users
// (`DELETE /platform/v1/projects/{ref}/auth/anonymous-users?older_than_days=N`),
// the operation of anonymous-users.ts, as the CLI's `auth users purge-anonymous`.
import { DEFAULT_ANONYMOUS_AGE_DAYS, purgeAnonymousUsers, validAgeDays } from '../anonymous-users.ts'
import type { ControlPlane } from '../control-plane.ts'
import { REF_PARAM, type AdminRoute } from './route.ts'

export function anonymousUserRoutes(controlPlane: ControlPlane): AdminRoute[] {
  return [
    {
      method: 'DELETE', access: 'write',
      path: '/projects/:ref/auth/anonymous-users',
      where: REF_PARAM,
      handler: async ({ params, query }) => {
        const days = validAgeDays(query.get('older_than_days') ?? DEFAULT_ANONYMOUS_AGE_DAYS)
        return [200, { deleted: await purgeAnonymousUsers(controlPlane, params.ref!, days), older_than_days: days }]
      },
    },
  ]
}
