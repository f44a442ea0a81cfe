// The platform admin HTTP API (`/platform/v1/...`), guarded by the platform
// admin token. It offers the same operations as the CLI, through the same
// ControlPlane methods and views.
import crypto from 'node:crypto'
import type { IncomingRequest, OutgoingResponse, PlatformRoutes } from '../data-plane/data-plane.ts'
import { BaseplaneError, platformErrors } from '../lib/errors.ts'
import type { ControlPlane } from './control-plane.ts'
import { dbUrlView, keysView, projectView, type Addressing } from './views.ts'

export const ADMIN_PREFIX = '/platform/v1'

type Handler = (context: { params: string[]; body: () => Promise<Record<string, unknown>> }) => Promise<[number, unknown]>

interface Route {
  method: string
  pattern: RegExp
  handler: Handler
}

function respond(status: number, body: unknown): OutgoingResponse {
  return { status, headers: { 'content-type': 'application/json' }, body: status === 204 ? '' : JSON.stringify(body) }
}

function failure(error: BaseplaneError): OutgoingResponse {
  return { ...respond(error.status, { code: error.code, message: error.message, ...(error.hint ? { hint: error.hint } : {}) }), headers: { 'content-type': 'application/json', 'x-sb-error-code': error.code } }
}

async function parseBody(request: IncomingRequest): Promise<Record<string, unknown>> {
  const text = await request.body()
  if (text.trim() === '') return {}
  try {
    const value: unknown = JSON.parse(text)
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error('not an object')
    return value as Record<string, unknown>
  } catch {
    throw platformErrors.invalidJson()
  }
}

function stringField(body: Record<string, unknown>, name: string, required: boolean): string | undefined {
  const value = body[name]
  if (value === undefined || value === null) {
    if (required) throw platformErrors.invalidArgument(`"${name}" is required`)
    return undefined
  }
  if (typeof value !== 'string') throw platformErrors.invalidArgument(`"${name}" must be a string`)
  return value
}

function tokenMatches(sent: string | undefined, expected: string): boolean {
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
export function adminApi(controlPlane: ControlPlane, addressing: Addressing, adminToken: string, extraRoutes: Route[] = []): PlatformRoutes {
  const ref = '([a-z][a-z0-9]{2,39})'
  const routes: Route[] = [
    {
      method: 'GET',
      pattern: /^\/projects$/,
      handler: async () => [200, (await controlPlane.list()).map((p) => projectView(p, addressing))],
    },
    {
      method: 'POST',
      pattern: /^\/projects$/,
      handler: async ({ body }) => {
        const input = await body()
        const project = await controlPlane.create({ name: stringField(input, 'name', true)!, plan: stringField(input, 'plan', false) })
        return [201, { ...projectView(project, addressing), ...keysView(project, addressing) }]
      },
    },
    {
      method: 'GET',
      pattern: new RegExp(`^/projects/${ref}$`),
      handler: async ({ params }) => [200, projectView(await controlPlane.get(params[0]!), addressing)],
    },
    {
      method: 'PATCH',
      pattern: new RegExp(`^/projects/${ref}$`),
      handler: async ({ params, body }) => {
        const input = await body()
        const plan = stringField(input, 'plan', true)!
        return [200, projectView(await controlPlane.setPlan(params[0]!, plan), addressing)]
      },
    },
    {
      method: 'DELETE',
      pattern: new RegExp(`^/projects/${ref}$`),
      handler: async ({ params }) => {
        await controlPlane.delete(params[0]!)
        return [204, null]
      },
    },
    {
      method: 'GET',
      pattern: new RegExp(`^/projects/${ref}/keys$`),
      handler: async ({ params }) => [200, keysView(await controlPlane.get(params[0]!), addressing)],
    },
    {
      method: 'POST',
      pattern: new RegExp(`^/projects/${ref}/keys/rotate$`),
      handler: async ({ params }) => [200, keysView(await controlPlane.rotateKeys(params[0]!), addressing)],
    },
    {
      method: 'GET',
      pattern: new RegExp(`^/projects/${ref}/db-url$`),
      handler: async ({ params }) => [200, dbUrlView(await controlPlane.get(params[0]!))],
    },
    {
      method: 'PUT',
      pattern: new RegExp(`^/projects/${ref}/products/([a-z]+)$`),
      handler: async ({ params }) => [200, projectView(await controlPlane.setProduct(params[0]!, params[1]!, true), addressing)],
    },
    {
      method: 'DELETE',
      pattern: new RegExp(`^/projects/${ref}/products/([a-z]+)$`),
      handler: async ({ params }) => [200, projectView(await controlPlane.setProduct(params[0]!, params[1]!, false), addressing)],
    },
    ...extraRoutes,
  ]

  return async (request) => {
    if (!request.path.startsWith(`${ADMIN_PREFIX}/`)) return undefined
    try {
      if (!tokenMatches(request.headers.authorization, adminToken)) throw platformErrors.unauthorizedAdmin()
      const path = request.path.slice(ADMIN_PREFIX.length)
      const candidates = routes.filter((route) => route.pattern.test(path))
      if (candidates.length === 0) throw platformErrors.notFound(request.path)
      const route = candidates.find((candidate) => candidate.method === request.method)
      if (!route) throw new BaseplaneError('method_not_allowed', `${request.method} is not allowed on ${request.path}`, 405)
      const params = route.pattern.exec(path)!.slice(1)
      const [status, body] = await route.handler({ params, body: () => parseBody(request) })
      return respond(status, body)
    } catch (error) {
      if (BaseplaneError.is(error)) return failure(error)
      throw error
    }
  }
}

export type { Route as AdminRoute }
