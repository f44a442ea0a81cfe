// The platform admin HTTP API (`/platform/v1/...`), guarded by the platform
// admin token. It offers the same operations as the CLI, through the same
// ControlPlane methods and views.
import crypto from 'node:crypto'
import type { IncomingRequest, OutgoingResponse, PlatformRoutes } from '../lib/http.ts'
import { incidents, unavailableAs } from '../lib/db/database-errors.ts'
import { BaseplaneError, platformErrors } from '../lib/errors.ts'
import type { ControlPlane } from './control-plane.ts'
import { dbUrlView, keysView, projectView, serverStateView, serverView, type Addressing } from './views.ts'
import { REF_SOURCE } from '../lib/refs.ts'
import { UNACKNOWLEDGED_HEADER, withUnacknowledged } from './unacknowledged.ts'
import { fieldsOf, readJsonObject, type JsonObject } from '../lib/http/body.ts'
import { platformErrorResponse } from '../lib/http/errors.ts'
import { Router, type RouteSpec } from '../lib/http/router.ts'

export const ADMIN_PREFIX = '/platform/v1'

/** The source of the admin API's database incidents (one log line when they begin, one when they end). */
const DATABASE = "the admin API's database"

export interface AdminRoute extends RouteSpec {
  handler: (context: { params: Record<string, string>; body: () => Promise<JsonObject>; query: URLSearchParams }) => Promise<[number, unknown]>
}

/** A project ref in a route's path (`/projects/:ref`). */
/** A server id in a path: its own pattern, so a mistyped path is a 404, not a refusal of the id. */
const SERVER_PARAM = { id: '[a-z0-9_-]{1,40}' }

export const REF_PARAM = { ref: REF_SOURCE } as const

function respond(status: number, body: unknown): OutgoingResponse {
  return { status, headers: { 'content-type': 'application/json' }, body: status === 204 ? '' : JSON.stringify(body) }
}

/** The body as a JSON object; a blank body is {}. */
export async function adminBody(request: IncomingRequest): Promise<JsonObject> {
  return readJsonObject(await request.body(), { invalid: () => platformErrors.invalidJson() })
}

/** Field readers whose refusals are the admin API's 400 invalid_argument. */
export function adminFields(body: JsonObject) {
  return fieldsOf(body, platformErrors.invalidArgument)
}

/** Whether an Authorization header carries the admin token (compared in constant time); `/metrics` is guarded by it too. */
export function adminTokenMatches(sent: string | undefined, expected: string): boolean {
  const match = sent ? /^bearer\s+(\S+)$/i.exec(sent) : null
  if (!match) return false
  const a = crypto.createHash('sha256').update(match[1]!).digest()
  const b = crypto.createHash('sha256').update(expected).digest()
  return crypto.timingSafeEqual(a, b)
}

/**
 * `extraRoutes` lets other parts of the control plane (auth settings, push
 * credentials) add their operations under the same guard.
 */
export function adminApi(controlPlane: ControlPlane, addressing: Addressing, adminToken: string, extraRoutes: AdminRoute[] = []): PlatformRoutes {
  const routes: AdminRoute[] = [
    {
      method: 'GET',
      path: '/projects',
      handler: async () => [200, (await controlPlane.list()).map((p) => projectView(p, addressing))],
    },
    {
      method: 'POST',
      path: '/projects',
      handler: async ({ body }) => {
        const input = await body()
        const fields = adminFields(input)
        const project = await controlPlane.create({ name: fields.string('name'), plan: fields.optionalString('plan'), signingAlg: fields.optionalString('signing_alg') })
        return [201, { ...projectView(project, addressing), ...keysView(project, addressing) }]
      },
    },
    {
      method: 'GET',
      path: '/projects/:ref', where: REF_PARAM,
      handler: async ({ params }) => [200, projectView(await controlPlane.get(params.ref!), addressing)],
    },
    {
      method: 'PATCH',
      path: '/projects/:ref', where: REF_PARAM,
      handler: async ({ params, body }) => {
        const input = await body()
        const plan = adminFields(input).string('plan')
        return [200, projectView(await controlPlane.setPlan(params.ref!, plan), addressing)]
      },
    },
    {
      method: 'DELETE',
      path: '/projects/:ref', where: REF_PARAM,
      handler: async ({ params }) => {
        await controlPlane.delete(params.ref!)
        return [204, null]
      },
    },
    {
      method: 'GET',
      path: '/projects/:ref/keys', where: REF_PARAM,
      handler: async ({ params }) => [200, keysView(await controlPlane.get(params.ref!), addressing)],
    },
    {
      method: 'POST',
      path: '/projects/:ref/keys/rotate', where: REF_PARAM,
      handler: async ({ params }) => [200, keysView(await controlPlane.rotateKeys(params.ref!), addressing)],
    },
    {
      method: 'GET',
      path: '/projects/:ref/db-url', where: REF_PARAM,
      handler: async ({ params }) => [200, dbUrlView(await controlPlane.get(params.ref!))],
    },
    {
      method: 'PUT',
      path: '/projects/:ref/products/:product', where: { ...REF_PARAM, product: '[a-z]+' },
      handler: async ({ params }) => [200, projectView(await controlPlane.setProduct(params.ref!, params.product!, true), addressing)],
    },
    {
      method: 'DELETE',
      path: '/projects/:ref/products/:product', where: { ...REF_PARAM, product: '[a-z]+' },
      handler: async ({ params }) => [200, projectView(await controlPlane.setProduct(params.ref!, params.product!, false), addressing)],
    },
    {
      method: 'GET',
      path: '/servers',
      handler: async () => [200, (await controlPlane.serverStates()).map(serverStateView)],
    },
    {
      method: 'PATCH',
      path: '/servers/:id', where: SERVER_PARAM,
      handler: async ({ params, body }) => {
        const input = await body()
        const fields = adminFields(input)
        const draining = fields.optionalBoolean('draining')
        if (input.connections === undefined && draining === undefined) throw platformErrors.invalidArgument('Give connections, draining or both')
        let server = input.connections === undefined ? undefined : await controlPlane.setServerBudget(params.id!, input.connections)
        if (draining !== undefined) server = await controlPlane.setServerDraining(params.id!, draining)
        return [200, serverView(server!)]
      },
    },
    {
      method: 'DELETE',
      path: '/servers/:id', where: SERVER_PARAM,
      handler: async ({ params }) => {
        await controlPlane.removeServer(params.id!)
        return [200, { id: params.id, removed: true }]
      },
    },
    {
      method: 'POST',
      path: '/servers',
      handler: async ({ body }) => {
        const input = await body()
        const fields = adminFields(input)
        const server = await controlPlane.addServer({ url: fields.string('url'), id: fields.optionalString('id'), connections: input.connections })
        return [201, serverView(server)]
      },
    },
    ...extraRoutes,
  ]

  const router = new Router(routes)
  return async (request) => {
    if (!request.path.startsWith(`${ADMIN_PREFIX}/`)) return undefined
    try {
      if (!adminTokenMatches(request.headers.authorization, adminToken)) throw platformErrors.unauthorizedAdmin()
      const match = router.match(request.method, request.path.slice(ADMIN_PREFIX.length))
      if (match.kind === 'not_found') throw platformErrors.notFound(request.path)
      if (match.kind === 'method_not_allowed') throw new BaseplaneError('method_not_allowed', `${request.method} is not allowed on ${request.path}`, 405)
      const { result, unacknowledged } = await withUnacknowledged(() =>
        match.route.handler({ params: match.params, body: () => adminBody(request), query: new URLSearchParams(request.query) }),
      )
      incidents.recovered(DATABASE)
      const response = respond(result[0], result[1])
      // Done, but those nodes may serve the old state until they hear from the catalogue again or are taken out (issue 24 item 3).
      if (unacknowledged.length > 0) response.headers[UNACKNOWLEDGED_HEADER] = unacknowledged.join(', ')
      return response
    } catch (error) {
      if (BaseplaneError.is(error)) return platformErrorResponse(error)
      // The catalogue or a project's database did not answer (the error does not say which): 503, logged once per incident.
      const unavailable = unavailableAs(error, platformErrors.someDatabaseUnavailable)
      if (unavailable === undefined) throw error
      incidents.failed(DATABASE, error, { path: request.path })
      return platformErrorResponse(unavailable)
    }
  }
}
