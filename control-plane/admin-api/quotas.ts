// The admin API's quotas of a project (`/platform/v1/projects/{ref}/quotas`):
// GET its quotas and this month's use, PATCH the operator's overrides
// (`{policy, monthly_active_users, push_deliveries, mail_sent,
// database_size_bytes}`, each null for the plan's); the operations of
// quotas.ts, as the CLI's `quotas`.
import type { ControlPlane } from '../control-plane.ts'
import { projectQuotas, quotaChangeFromBody, setQuotaOverrides } from '../quotas.ts'
import { REF_PARAM, type AdminRoute } from './route.ts'

export function quotaRoutes(controlPlane: ControlPlane): AdminRoute[] {
  const path = '/projects/:ref/quotas'
  return [
    { method: 'GET', access: 'read', path, where: REF_PARAM, handler: async ({ params }) => [200, await projectQuotas(controlPlane, params.ref!)] },
    {
      method: 'PATCH',
      path,
      where: REF_PARAM,
      handler: async ({ params, body }) => [200, await setQuotaOverrides(controlPlane, params.ref!, quotaChangeFromBody(await body()))],
    },
  ]
}
