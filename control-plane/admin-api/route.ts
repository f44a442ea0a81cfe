// What every family of the admin API shares: the shape of a route, the path
// patterns, and the body's readers (their refusals the platform's 400
// invalid_argument). The families (one file each) import this; index.ts
// assembles them behind the admin token.
import crypto from 'node:crypto'
import type { IncomingRequest } from '../../lib/http.ts'
import { fieldsOf, readJsonObject, type JsonObject } from '../../lib/http/body.ts'
import type { RouteSpec } from '../../lib/http/router.ts'
import { platformErrors } from '../../lib/errors.ts'
import type { Caller, ProjectAccess } from '../access.ts'
export { REF_PARAM } from '../../lib/refs.ts'

export const ADMIN_PREFIX = '/platform/v1'

export interface AdminRoute extends RouteSpec {
  /**
   * What a member needs on the path's project to call it (control-plane/access.ts); absent: the operator's alone.
   * On a route with no project in its path (the projects list, the member's own account), any member may call
   * it and the handler answers for the caller alone.
   */
  access?: ProjectAccess
  /**
   * The handler appends its own events (with the actor); otherwise a member's successful change of a project
   * (any method but GET) is recorded as one `project.changed` event naming the method and path.
   */
  ownEvents?: true
  handler: (context: {
    /** Who calls: the operator (the admin token) or a member. */
    caller: Caller
    params: Record<string, string>
    body: () => Promise<JsonObject>
    query: URLSearchParams
    /** The request's headers, lower-case names (content negotiation: the usage export's Accept). */
    headers: Record<string, string>
  }) => Promise<[number, unknown] | StreamedAnswer>
}

/**
 * A 200 written as it is made (lib/http.ts StreamedBody), for answers too
 * long to hold: the usage export. Errors found before it is returned answer
 * in the admin API's shape; once it streams, a failure closes the connection.
 */
export class StreamedAnswer {
  readonly contentType: string
  readonly chunks: AsyncIterable<string>

  constructor(contentType: string, chunks: AsyncIterable<string>) {
    this.contentType = contentType
    this.chunks = chunks
  }
}

/** A server id in a path: its own pattern, so a mistyped path is a 404, not a refusal of the id. */
export const SERVER_PARAM = { id: '[a-z0-9_-]{1,40}' }

/** The body as a JSON object; a blank body is {}. */
export async function adminBody(request: IncomingRequest): Promise<JsonObject> {
  return readJsonObject(await request.body(), { invalid: () => platformErrors.invalidJson() })
}

/** Field readers whose refusals are the admin API's 400 invalid_argument. */
export function adminFields(body: JsonObject) {
  return fieldsOf(body, platformErrors.invalidArgument)
}

/** A query parameter as a whole number, refused as the admin API's invalid_argument otherwise. */
export function queryNumber(query: URLSearchParams, name: string): number | undefined {
  const raw = query.get(name)
  if (raw === null || raw === '') return undefined
  if (!/^\d+$/.test(raw)) throw platformErrors.invalidArgument(`${name} must be a whole number, got "${raw.slice(0, 40)}"`)
  return Number(raw)
}

/** A query parameter as true or false. */
export function queryBoolean(query: URLSearchParams, name: string): boolean | undefined {
  const raw = query.get(name)
  if (raw === null || raw === '') return undefined
  if (raw !== 'true' && raw !== 'false') throw platformErrors.invalidArgument(`${name} must be true or false`)
  return raw === 'true'
}

/** Whether an Authorization header carries the admin token (compared in constant time); `/metrics` is guarded by it too. */
export function adminTokenMatches(sent: string | undefined, expected: string): boolean {
  const match = sent ? /^bearer\s+(\S+)$/i.exec(sent) : null
  if (!match) return false
  const a = crypto.createHash('sha256').update(match[1]!).digest()
  const b = crypto.createHash('sha256').update(expected).digest()
  return crypto.timingSafeEqual(a, b)
}
