// What the data plane does with a request, independent of the HTTP server
// carrying it (uWebSockets.js in production; node:http in the benchmark peer):
// resolve the project, refuse throttled addresses, check the key and token,
// and hand the request to its concern's worker pool.
import { apiDatabaseOf, baseUrlOf, type ProjectRecord } from '../lib/catalogue.ts'
import type { PlatformConfig } from '../lib/config.ts'
import { BaseplaneError, platformErrors } from '../lib/errors.ts'
import { log } from '../lib/log.ts'
import type { Concern, ProjectContext, ServiceRequest } from '../lib/service.ts'
import type { Dispatcher } from './dispatcher.ts'
import { errorResponse, type OutgoingResponse } from './responses.ts'
import type { Gate } from './gate.ts'
import type { ProjectDirectory } from './project-directory.ts'
import type { Throttle } from './throttle.ts'

export interface IncomingRequest {
  /** Upper-case method. */
  method: string
  path: string
  query: string
  /** Lower-case names. */
  headers: Record<string, string>
  /** Address of the TCP peer. */
  peerAddress: string
  body(): Promise<string>
}

export type { OutgoingResponse }

/** Routes of the platform itself (admin API, dashboard), tried when no project is named. */
export type PlatformRoutes = (request: IncomingRequest) => Promise<OutgoingResponse | undefined>

export interface DataPlaneDeps {
  config: Pick<PlatformConfig, 'publicUrl' | 'baseDomain' | 'trustedProxyHeader'>
  directory: ProjectDirectory
  gate: Gate
  throttle: Throttle
  dispatcher: Dispatcher
  platformRoutes?: PlatformRoutes
  version: string
}

const CORS_HEADERS: Record<string, string> = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, POST, PUT, PATCH, DELETE, OPTIONS',
  'access-control-allow-headers':
    'authorization, apikey, content-type, x-client-info, x-supabase-api-version, accept-profile, content-profile, prefer, x-upsert',
  'access-control-expose-headers': 'x-sb-error-code, x-supabase-api-version, retry-after',
  'access-control-max-age': '86400',
}

const SERVICE_PREFIXES: Array<[string, Concern]> = [
  ['/auth/v1', 'auth'],
  ['/graphql/v1', 'graphql'],
  ['/push/v1', 'push'],
]

/** Paths a browser opens from an email or a provider redirect: no apikey is sent with them. */
function isOpenRoute(concern: Concern, method: string, path: string): boolean {
  return concern === 'auth' && method === 'GET' && (path === '/verify' || path === '/authorize' || path === '/callback')
}

export class DataPlane {
  readonly #deps: DataPlaneDeps
  readonly #domains: string[]
  readonly #contexts = new WeakMap<ProjectRecord, ProjectContext>()

  constructor(deps: DataPlaneDeps) {
    this.#deps = deps
    this.#domains = [deps.config.baseDomain, 'localhost'].filter((d): d is string => Boolean(d)).map((d) => `.${d.toLowerCase()}`)
  }

  /** The project ref and the path below it, from a /project/<ref>/ prefix or the Host's first label. */
  resolve(request: IncomingRequest): { ref: string; path: string } | undefined {
    if (request.path.startsWith('/project/')) {
      const end = request.path.indexOf('/', 9)
      const ref = end === -1 ? request.path.slice(9) : request.path.slice(9, end)
      return { ref, path: end === -1 ? '/' : request.path.slice(end) }
    }
    const host = (request.headers.host ?? '').toLowerCase().replace(/:\d+$/, '')
    for (const domain of this.#domains) {
      if (host.endsWith(domain)) {
        const label = host.slice(0, -domain.length)
        if (label.length > 0 && !label.includes('.')) return { ref: label, path: request.path }
      }
    }
    return undefined
  }

  clientAddress(request: IncomingRequest): string {
    const header = this.#deps.config.trustedProxyHeader
    if (header) {
      // The trusted proxy appends the address it saw; earlier entries came from the client.
      const value = request.headers[header]
      const last = value?.split(',').pop()?.trim()
      if (last) return last
    }
    return request.peerAddress
  }

  contextOf(project: ProjectRecord): ProjectContext {
    let context = this.#contexts.get(project)
    if (context === undefined) {
      context = {
        ref: project.ref,
        name: project.name,
        plan: project.plan,
        version: project.version,
        baseUrl: baseUrlOf(project.ref, this.#deps.config.publicUrl, this.#deps.config.baseDomain),
        jwtSecret: project.jwtSecret,
        database: apiDatabaseOf(project),
        authEnabled: project.authEnabled,
        pushEnabled: project.pushEnabled,
        authSettings: project.authSettings,
      }
      this.#contexts.set(project, context)
    }
    return context
  }

  async handle(request: IncomingRequest): Promise<OutgoingResponse> {
    if (request.method === 'OPTIONS') return { status: 204, headers: { ...CORS_HEADERS }, body: '' }
    const target = this.resolve(request)
    let concern: Concern | undefined
    try {
      if (target === undefined) return await this.#platform(request)
      const prefix = SERVICE_PREFIXES.find(([p]) => target.path === p || target.path.startsWith(`${p}/`))
      concern = prefix?.[1]
      const response = await this.#project(request, target.ref, target.path, prefix)
      Object.assign(response.headers, CORS_HEADERS)
      return response
    } catch (error) {
      if (!BaseplaneError.is(error)) log.error('request failed', error, { path: request.path })
      const known = BaseplaneError.is(error) ? error : platformErrors.internal()
      const response = errorResponse(known, concern, request.headers)
      Object.assign(response.headers, CORS_HEADERS)
      return response
    }
  }

  async #platform(request: IncomingRequest): Promise<OutgoingResponse> {
    if (request.path === '/health' && request.method === 'GET') {
      return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ status: 'ok', version: this.#deps.version }) }
    }
    const answer = await this.#deps.platformRoutes?.(request)
    if (answer) return answer
    throw platformErrors.noProject()
  }

  async #project(request: IncomingRequest, ref: string, path: string, prefix: [string, Concern] | undefined): Promise<OutgoingResponse> {
    let project = await this.#deps.directory.get(ref)
    if (project === undefined) throw platformErrors.unknownProject(ref)
    const address = this.clientAddress(request)
    const wait = this.#deps.throttle.retryAfter(ref, address)
    if (wait > 0) {
      const refused = errorResponse(platformErrors.throttled(), prefix?.[1], request.headers)
      refused.headers['retry-after'] = String(wait)
      return refused
    }
    const concern = prefix?.[1]
    const subPath = prefix ? path.slice(prefix[0].length) : path
    const open = concern !== undefined && isOpenRoute(concern, request.method, subPath)
    const apikey = request.headers.apikey || new URLSearchParams(request.query).get('apikey') || undefined
    let keyRole: 'anon' | 'service_role' | undefined
    if (!open || apikey) {
      try {
        keyRole = this.#deps.gate.apikeyRole(project, apikey)
      } catch (error) {
        // Keys may have been rotated a moment ago: read the catalogue once before refusing.
        const fresh = apikey ? await this.#deps.directory.reload(ref) : undefined
        if (fresh === undefined || fresh.version === project.version) throw error
        project = fresh
        keyRole = this.#deps.gate.apikeyRole(project, apikey)
      }
    }
    if (path === '/health' && request.method === 'GET') return this.#projectHealth(project)
    if (concern === undefined) throw platformErrors.notFound(path)
    if (concern === 'auth' && !project.authEnabled) throw platformErrors.productDisabled('auth', ref)
    if (concern === 'push' && !project.pushEnabled) throw platformErrors.productDisabled('push', ref)
    const identity = keyRole ? await this.#deps.gate.identify(project, apikey!, request.headers.authorization) : undefined
    const serviceRequest: ServiceRequest = {
      concern,
      method: request.method,
      path: subPath,
      query: request.query,
      headers: request.headers,
      body: await request.body(),
      clientAddress: address,
      project: this.contextOf(project),
      identity,
      apikeyRole: keyRole,
    }
    const response = await this.#deps.dispatcher.run(serviceRequest)
    if (response.throttleFailure) this.#deps.throttle.recordFailure(ref, address)
    return { status: response.status, headers: response.headers, body: response.body }
  }

  #projectHealth(project: ProjectRecord): OutgoingResponse {
    return {
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        status: 'ok',
        ref: project.ref,
        plan: project.plan,
        services: { auth: project.authEnabled, graphql: true, push: project.pushEnabled },
      }),
    }
  }
}
