// The admin API's suspension of a project (`POST /platform/v1/projects/{ref}/suspend`
// `{reason}`, `POST .../resume`): the operations of suspension.ts, as the CLI's
// `projects suspend|resume` and the dashboard's Settings tab use them. Both
// answer the project's view, its state and the reason with it.
import type { ControlPlane } from '../control-plane.ts'
import { resumeProject, suspendProject } from '../suspension.ts'
import { projectView, type Addressing } from '../views.ts'
import { adminFields, REF_PARAM, type AdminRoute } from './route.ts'

export function suspensionRoutes(controlPlane: ControlPlane, addressing: Addressing): AdminRoute[] {
  return [
    {
      method: 'POST',
      path: '/projects/:ref/suspend',
      where: REF_PARAM,
      handler: async ({ params, body }) => {
        const reason = adminFields(await body()).optionalString('reason')
        return [200, projectView(await suspendProject(controlPlane, params.ref!, reason), addressing)]
      },
    },
    {
      method: 'POST',
      path: '/projects/:ref/resume',
      where: REF_PARAM,
      handler: async ({ params }) => [200, projectView(await resumeProject(controlPlane, params.ref!), addressing)],
    },
  ]
}
