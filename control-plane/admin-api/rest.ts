// The admin API's data API settings of a project
// (`/platform/v1/projects/{ref}/rest`): GET them, PATCH any of `{schemas:
// [...], max_rows: n | null, pre_request: "schema.fn" | null, tx_end:
// "commit" | "commit-allow-override" | "rollback" | "rollback-allow-override",
// plans: boolean}` (the exposed schemas, the default first; the most rows a
// response carries; the function called before every request; how
// transactions end; whether plans are answered), the others kept; the operations of
// rest-settings.ts, as the CLI's `projects rest`.
import type { ControlPlane } from '../control-plane.ts'
import { getRestSettings, restSettingsChangeFromBody, setRestSettings } from '../rest-settings.ts'
import { REF_PARAM, type AdminRoute } from './route.ts'

export function restSettingsRoutes(controlPlane: ControlPlane): AdminRoute[] {
  const path = '/projects/:ref/rest'
  return [
    { method: 'GET', access: 'read', path, where: REF_PARAM, handler: async ({ params }) => [200, await getRestSettings(controlPlane, params.ref!)] },
    {
      method: 'PATCH', access: 'write',
      path,
      where: REF_PARAM,
      handler: async ({ params, body }) => [200, await setRestSettings(controlPlane, params.ref!, restSettingsChangeFromBody(await body()))],
    },
  ]
}
