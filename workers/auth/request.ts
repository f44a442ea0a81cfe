// What every handler gets: the request, the project's effective settings,
// its pool, the parsed query and body, and the caller checks GoTrue's
// middlewares make (requireAuthentication, requireAdmin).
import type { QuotaCaps } from '../../lib/plans.ts'
import type { AuthDb } from './db/pool.ts'
import type { AuthProjectContext, ServiceRequest, ServiceUsage, WorkerOptions } from '../../lib/service.ts'
import { workerOptions, workerSection } from '../../lib/worker-context.ts'
import { readJsonObject } from '../../lib/http/body.ts'
import { authPool } from './db/pool.ts'
import { authErrors } from './errors.ts'
import { resolveRedirect } from './redirects.ts'
import { resolveSettings, type AuthSettings } from './settings.ts'
import { isUuid } from '../../lib/uuid.ts'

export interface AuthRequest {
  raw: ServiceRequest<AuthProjectContext>
  settings: AuthSettings
  pool: AuthDb
  query: URLSearchParams
  ip: string
  userAgent: string | undefined
  /** The project's base URL (links point at {baseUrl}/auth/v1/verify). */
  baseUrl: string
  /** The platform's mail configuration (this worker's options). */
  mail: WorkerOptions['mail']
  /** The JSON body (an object); {} when empty. Unknown keys and nulls are accepted (GoTrue's json.Unmarshal). */
  body: Record<string, unknown>
  /** What the request counts for in its project's usage (usage-note.ts), sent with the answer; absent when usage is not counted. */
  usage?: ServiceUsage
  /** The project's caps (lib/plans.ts): mail past the mail cap is refused. */
  caps: QuotaCaps
}

export function authRequest(raw: ServiceRequest<AuthProjectContext>): AuthRequest {
  const project = raw.project
  // GoTrue ignores a GET's body; a blank body is {}.
  const body = raw.method === 'GET' ? {} : readJsonObject(raw.body, { invalid: (detail) => authErrors.badJson(detail) })
  const query = new URLSearchParams(raw.query)
  if (raw.path !== '/verify') {
    const field = nulField(body) ?? nulField(queryFields(query))
    if (field !== undefined) throw authErrors.validation(`${field} must not contain a NUL character (\\u0000)`)
  }
  return {
    raw,
    settings: resolveSettings(project.ref, project.version, project.authSettings),
    pool: authPool(project.database),
    query,
    ip: raw.clientAddress,
    userAgent: raw.headers['user-agent'],
    baseUrl: project.baseUrl,
    mail: workerSection('mail'),
    body,
    caps: project.caps,
    // A note of its own per request, filled where sessions are issued and mail is sent.
    ...(workerOptions().countUsage === false ? {} : { usage: {} }),
  }
}

/**
 * The first field (body or query, keys and values at any depth) carrying a
 * NUL. PostgreSQL text and jsonb cannot hold one, so such a value matches
 * nothing stored and fails in SQL as a 500; it is refused before any handler
 * runs. /verify answers it itself, as GoTrue answers any token that matches
 * nothing (403 otp_expired, or the emailed link's error redirect).
 */
function nulField(root: unknown): string | undefined {
  // Iterative: a 1 MB body may nest deeper than the call stack goes.
  const pending: Array<[unknown, string]> = [[root, '']]
  while (pending.length > 0) {
    const [value, path] = pending.pop()!
    if (typeof value === 'string') {
      if (value.includes('\0')) return path || 'the request'
      continue
    }
    if (value === null || typeof value !== 'object') continue
    for (const [key, inner] of Object.entries(value)) {
      if (key.includes('\0')) return path || 'the request'
      pending.push([inner, Array.isArray(value) ? path : path === '' ? key : `${path}.${key}`])
    }
  }
  return undefined
}

/** The query as an object for nulField; a repeated name keeps every value. */
function queryFields(query: URLSearchParams): Record<string, string[]> {
  const fields: Record<string, string[]> = {}
  for (const [key, value] of query) (fields[key] ??= []).push(value)
  return fields
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

export { isUuid }

/**
 * A UUID path parameter as GoTrue reads one (uuid.FromString): any case
 * (auth-js 2.119 lets ids in any case through), then the canonical lower case,
 * so what is recorded (the audit log's actor_id) is the id as stored.
 */
export function uuidParam(value: string, name: 'user_id' | 'factor_id'): string {
  if (!isUuid(value)) throw authErrors.validation404(`${name} must be an UUID`)
  return value.toLowerCase()
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
