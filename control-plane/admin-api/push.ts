// The admin API's Push of a project (`/platform/v1/projects/{ref}/push/...`):
// the operations of push-admin.ts, as the CLI's `push ...` and the dashboard's
// Push tab use them.
import type { ControlPlane } from '../control-plane.ts'
import {
  listPushDevices,
  pushDeliveryLog,
  removePushCredentials,
  sendTestNotification,
  setPushCredentials,
  showPushCredentials,
  type PushAdminOptions,
} from '../push-admin.ts'
import { adminFields, queryBoolean, queryNumber, REF_PARAM, type AdminRoute } from './route.ts'

export function pushAdminRoutes(controlPlane: ControlPlane, options: PushAdminOptions = {}): AdminRoute[] {
  const keyed = { ...REF_PARAM, provider: 'apns|fcm' }
  return [
    { method: 'GET', access: 'read', path: '/projects/:ref/push/credentials', where: REF_PARAM, handler: async ({ params }) => [200, await showPushCredentials(controlPlane, params.ref!)] },
    {
      method: 'PUT', access: 'write',
      path: '/projects/:ref/push/credentials/:provider',
      where: keyed,
      handler: async ({ params, body }) => [200, await setPushCredentials(controlPlane, params.ref!, params.provider!, await body(), options)],
    },
    {
      method: 'DELETE', access: 'write',
      path: '/projects/:ref/push/credentials/:provider',
      where: keyed,
      handler: async ({ params }) => {
        await removePushCredentials(controlPlane, params.ref!, params.provider!)
        return [204, null]
      },
    },
    {
      method: 'GET', access: 'read',
      path: '/projects/:ref/push/devices',
      where: REF_PARAM,
      handler: async ({ params, query }) =>
        [
          200,
          await listPushDevices(controlPlane, params.ref!, {
            platform: query.get('platform') ?? undefined,
            user: query.get('user') ?? undefined,
            active: queryBoolean(query, 'active'),
            limit: queryNumber(query, 'limit'),
            offset: queryNumber(query, 'offset'),
          }),
        ],
    },
    {
      method: 'GET', access: 'read',
      path: '/projects/:ref/push/log',
      where: REF_PARAM,
      handler: async ({ params, query }) =>
        [
          200,
          await pushDeliveryLog(controlPlane, params.ref!, {
            status: query.get('status') ?? undefined,
            provider: query.get('provider') ?? undefined,
            user: query.get('user') ?? undefined,
            message: query.get('message') ?? undefined,
            limit: queryNumber(query, 'limit'),
            before: queryNumber(query, 'before'),
          }),
        ],
    },
    {
      method: 'POST', access: 'write',
      path: '/projects/:ref/push/devices/:device/test',
      where: { ...REF_PARAM, device: '[0-9a-fA-F-]{36}' },
      handler: async ({ params, body }) => {
        const fields = adminFields(await body())
        return [201, await sendTestNotification(controlPlane, params.ref!, params.device!, { title: fields.optionalString('title'), body: fields.optionalString('body') })]
      },
    },
  ]
}
