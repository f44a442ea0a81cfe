// The admin API's fleet-wide recent usage of a project, for charts
// (`GET /projects/{ref}/usage/recent?hours=N`): per hour across every node, the
// current hour's minutes not yet rolled up included (control-plane/usage-charts.ts).
// `/projects/{ref}/metrics/recent` stays what it was: this process's last hour.
import type { ControlPlane } from '../control-plane.ts'
import { recentUsage } from '../usage-charts.ts'
import { REF_PARAM, type AdminRoute } from './route.ts'

export function usageChartRoutes(controlPlane: ControlPlane): AdminRoute[] {
  return [
    {
      method: 'GET', access: 'read',
      path: '/projects/:ref/usage/recent',
      where: REF_PARAM,
      // An empty `hours=` is refused, not taken as the default.
      handler: async ({ params, query }) => [200, await recentUsage(controlPlane, params.ref!, query.has('hours') ? query.get('hours')! : undefined)],
    },
  ]
}
