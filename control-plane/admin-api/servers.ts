// The admin API's database servers (`/platform/v1/servers...`): list with
// their state now, add, change budget or draining, remove.
import { platformErrors } from '../../lib/errors.ts'
import type { ControlPlane } from '../control-plane.ts'
import { addDatabaseServer, databaseServerStates, removeDatabaseServer, setDatabaseServerBudget, setDatabaseServerDraining } from '../server-admin.ts'
import { serverStateView, serverView } from '../views.ts'
import { adminFields, SERVER_PARAM, type AdminRoute } from './route.ts'

export function serverRoutes(controlPlane: ControlPlane): AdminRoute[] {
  return [
    {
      method: 'GET',
      path: '/servers',
      handler: async () => [200, (await databaseServerStates(controlPlane)).map(serverStateView)],
    },
    {
      method: 'PATCH',
      path: '/servers/:id', where: SERVER_PARAM,
      handler: async ({ params, body }) => {
        const input = await body()
        const fields = adminFields(input)
        const draining = fields.optionalBoolean('draining')
        if (input.connections === undefined && draining === undefined) throw platformErrors.invalidArgument('Give connections, draining or both')
        let server = input.connections === undefined ? undefined : await setDatabaseServerBudget(controlPlane, params.id!, input.connections)
        if (draining !== undefined) server = await setDatabaseServerDraining(controlPlane, params.id!, draining)
        return [200, serverView(server!)]
      },
    },
    {
      method: 'DELETE',
      path: '/servers/:id', where: SERVER_PARAM,
      handler: async ({ params }) => {
        await removeDatabaseServer(controlPlane, params.id!)
        return [200, { id: params.id, removed: true }]
      },
    },
    {
      method: 'POST',
      path: '/servers',
      handler: async ({ body }) => {
        const input = await body()
        const fields = adminFields(input)
        const server = await addDatabaseServer(controlPlane, { url: fields.string('url'), id: fields.optionalString('id'), connections: input.connections })
        return [201, serverView(server)]
      },
    },
  ]
}
