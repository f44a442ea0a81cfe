// The admin API's project roles (`/platform/v1/projects/{ref}/roles`), the
// operations of project-roles.ts, as the CLI's `projects roles`.
import type { ControlPlane } from '../control-plane.ts'
import { addProjectRole, listProjectRoles, removeProjectRole } from '../project-roles.ts'
import { adminFields, REF_PARAM, type AdminRoute } from './route.ts'

export function projectRoleRoutes(controlPlane: ControlPlane): AdminRoute[] {
  const path = '/projects/:ref/roles'
  return [
    { method: 'GET', access: 'read', path, where: REF_PARAM, handler: async ({ params }) => [200, await listProjectRoles(controlPlane, params.ref!)] },
    {
      method: 'POST', access: 'write',
      path,
      where: REF_PARAM,
      handler: async ({ params, body }) => {
        const name = adminFields(await body()).string('name')
        const result = await addProjectRole(controlPlane, params.ref!, name)
        return [result.added ? 201 : 200, { ref: result.ref, roles: result.roles }]
      },
    },
    {
      method: 'DELETE', access: 'write',
      path: `${path}/:name`,
      where: REF_PARAM,
      handler: async ({ params }) => {
        const result = await removeProjectRole(controlPlane, params.ref!, params.name!)
        return [200, { ref: result.ref, roles: result.roles }]
      },
    },
  ]
}
