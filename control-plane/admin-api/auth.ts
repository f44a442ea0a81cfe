// The admin API's Auth settings of a project (`/platform/v1/projects/{ref}/auth...`):
// the settings, redirect addresses, mail templates, Google sign-in, and the
// mail record (`/projects/{ref}/mail`); the operations of auth-settings.ts, as
// the CLI's `auth ...` and `mail list`.
import { baseUrlOf } from '../../lib/catalogue.ts'
import { platformErrors } from '../../lib/errors.ts'
import {
  getAuthSettings,
  getGoogle,
  listMail,
  listTemplates,
  resetTemplate,
  setAuthOptions,
  setGoogle,
  setRedirects,
  setTemplate,
} from '../auth-settings.ts'
import type { ControlPlane } from '../control-plane.ts'
import type { Addressing } from '../views.ts'
import { adminFields, REF_PARAM, type AdminRoute } from './route.ts'

export function authAdminRoutes(controlPlane: ControlPlane, addressing: Addressing): AdminRoute[] {
  const callbackUrl = async (r: string) => `${baseUrlOf(r, addressing.publicUrl, addressing.baseDomain)}/auth/v1/callback`
  return [
    { method: 'GET', access: 'read', path: '/projects/:ref/auth', where: REF_PARAM, handler: async ({ params }) => [200, await getAuthSettings(controlPlane, params.ref!)] },
    {
      method: 'PATCH', access: 'write',
      path: '/projects/:ref/auth',
      where: REF_PARAM,
      handler: async ({ params, body }) => [200, await setAuthOptions(controlPlane, params.ref!, await body())],
    },
    {
      method: 'PUT', access: 'write',
      path: '/projects/:ref/auth/redirects',
      where: REF_PARAM,
      handler: async ({ params, body }) => {
        const input = await body()
        const urls = (name: string, value: unknown): string[] | undefined => {
          if (value !== undefined && (!Array.isArray(value) || value.some((u) => typeof u !== 'string'))) {
            throw platformErrors.invalidArgument(`"${name}" must be a list of URLs`, name)
          }
          return value as string[] | undefined
        }
        return [
          200,
          await setRedirects(controlPlane, params.ref!, {
            siteUrl: adminFields(input).optionalString('site_url'),
            allow: urls('additional_redirect_urls', input.additional_redirect_urls ?? input.allow),
            add: urls('add_redirect_urls', input.add_redirect_urls),
            remove: urls('remove_redirect_urls', input.remove_redirect_urls),
          }),
        ]
      },
    },
    { method: 'GET', access: 'read', path: '/projects/:ref/auth/templates', where: REF_PARAM, handler: async ({ params }) => [200, await listTemplates(controlPlane, params.ref!)] },
    {
      method: 'PUT', access: 'write',
      path: '/projects/:ref/auth/templates/:kind',
      where: { ...REF_PARAM, kind: '[a-z_]+' },
      handler: async ({ params, body }) => {
        const fields = adminFields(await body())
        return [200, await setTemplate(controlPlane, params.ref!, params.kind!, { subject: fields.optionalString('subject') ?? '', body: fields.optionalString('body') ?? '' })]
      },
    },
    {
      method: 'DELETE', access: 'write',
      path: '/projects/:ref/auth/templates/:kind',
      where: { ...REF_PARAM, kind: '[a-z_]+' },
      handler: async ({ params }) => [200, await resetTemplate(controlPlane, params.ref!, params.kind!)],
    },
    {
      method: 'GET', access: 'read',
      path: '/projects/:ref/auth/google',
      where: REF_PARAM,
      handler: async ({ params }) => [200, { ...(await getGoogle(controlPlane, params.ref!)), callback_url: await callbackUrl(params.ref!) }],
    },
    {
      method: 'PUT', access: 'write',
      path: '/projects/:ref/auth/google',
      where: REF_PARAM,
      handler: async ({ params, body }) => {
        const input = await body()
        const fields = adminFields(input)
        const enabled = input.enabled
        if (enabled !== undefined && typeof enabled !== 'boolean') throw platformErrors.invalidArgument('"enabled" must be true or false')
        const extra = input.additional_client_ids
        if (extra !== undefined && (!Array.isArray(extra) || extra.some((id) => typeof id !== 'string'))) {
          throw platformErrors.invalidArgument('"additional_client_ids" must be a list of client IDs')
        }
        const result = await setGoogle(controlPlane, params.ref!, {
          clientId: fields.optionalString('client_id'),
          clientSecret: fields.optionalString('client_secret'),
          enabled,
          additionalClientIds: extra as string[] | undefined,
        })
        return [200, { ...result, callback_url: await callbackUrl(params.ref!) }]
      },
    },
    { method: 'GET', access: 'write', path: '/projects/:ref/mail', where: REF_PARAM, handler: async ({ params }) => [200, await listMail(controlPlane, params.ref!)] },
  ]
}
