// What every handler gets: the request, the project's effective settings,
// its pool, the parsed query and body, and the caller checks GoTrue's
// middlewares make (requireAuthentication, requireAdmin).
import type { AuthDb } from './db/pool.ts'
import type { ServiceRequest } from '../../lib/service.ts'
import { authPool } from './db/pool.ts'
import { authErrors } from './errors.ts'
import { resolveRedirect } from './redirects.ts'
import { resolveSettings, type AuthSettings } from './settings.ts'

export interface AuthRequest {
  raw: ServiceRequest
  settings: AuthSettings
  pool: AuthDb
  query: URLSearchParams
  ip: string
  userAgent: string | undefined
  /** The JSON body (an object); {} when empty. Unknown keys and nulls are accepted (GoTrue's json.Unmarshal). */
  body: Record<string, unknown>
}

export function authRequest(raw: ServiceRequest): AuthRequest {
  const project = raw.project
  let body: Record<string, unknown> = {}
  if (raw.method !== 'GET' && raw.body.trim() !== '') {
    let parsed: unknown
    try {
      parsed = JSON.parse(raw.body)
    } catch (error) {
      throw authErrors.badJson((error as Error).message)
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw authErrors.badJson('the body must be a JSON object')
    body = parsed as Record<string, unknown>
  }
  return {
    raw,
    settings: resolveSettings(project.ref, project.version, project.authSettings),
    pool: authPool(project.database),
    query: new URLSearchParams(raw.query),
    ip: raw.clientAddress,
    userAgent: raw.headers['user-agent'],
    body,
  }
}

/** A string field of the body: undefined when absent or null; a wrong type is a validation error. */
export function str(body: Record<string, unknown>, name: string): string | undefined {
  const value = body[name]
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'string') throw authErrors.validation(`${name} must be a string`)
  return value
}

export function obj(body: Record<string, unknown>, name: string): Record<string, unknown> | undefined {
  const value = body[name]
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'object' || Array.isArray(value)) throw authErrors.validation(`${name} must be a JSON object`)
  return value as Record<string, unknown>
}

/** redirect_to comes from the query (auth-js appends it) or a `redirect_to` header, never the body. */
export function redirectTo(req: AuthRequest): string {
  return resolveRedirect(req.settings, req.query.get('redirect_to') ?? req.raw.headers['redirect_to'])
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value)
}

export interface Caller {
  userId: string
  sessionId: string | null
  claims: Record<string, unknown>
}

/** GoTrue's requireAuthentication: a Bearer user token whose sub is a UUID. */
export function requireUser(req: AuthRequest): Caller {
  const authorization = req.raw.headers.authorization
  if (!authorization || !/^bearer\s+\S+/i.test(authorization) || req.raw.identity === undefined) throw authErrors.noAuthorization()
  const claims = req.raw.identity.claims
  const sub = claims.sub
  if (typeof sub !== 'string' || sub === '') throw authErrors.missingSub()
  if (!isUuid(sub)) throw authErrors.badSub()
  const sessionId = typeof claims.session_id === 'string' && isUuid(claims.session_id) ? claims.session_id : null
  return { userId: sub, sessionId, claims }
}

/** GoTrue's requireAdmin: the caller's role is service_role (the service_role key, or a token with that role). */
export function requireAdmin(req: AuthRequest): void {
  if (req.raw.identity?.role !== 'service_role') throw authErrors.notAdmin()
}
