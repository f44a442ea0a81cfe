// One project request as the data plane handles it, built once when the
// project is known and filled in by each step (the key's role, the caller's
// identity, the project's record read again), as fastify's request and reply
// carry a request's state rather than each step passing a growing list on.
import type { ProjectRecord } from '../lib/catalogue.ts'
import type { IncomingRequest } from '../lib/http.ts'
import type { RequestIdentity } from '../lib/roles.ts'
import type { KeyRole } from './gate.ts'

export interface ProjectCall<C> {
  readonly request: IncomingRequest
  /** The project's record: replaced when the catalogue is read again (keys rotated) or the project is woken. */
  project: ProjectRecord
  /** The path under the project (what follows the ref or the project's host). */
  readonly path: string
  /** The concern whose prefix the path starts with; undefined: none serves it. */
  readonly concern: C | undefined
  /** The path under the concern's prefix (the whole path when no concern serves it). */
  readonly subPath: string
  /** The apikey's role once it is checked; undefined with no key (an open route). */
  keyRole?: KeyRole
  /** The caller's identity once the key and token are verified; undefined with no key. */
  identity?: RequestIdentity
  /** Whether the project's record was already read again for this request (a refused key is then refused). */
  reloaded: boolean
  /** Realtime's WebSocket upgrade (DataPlane.admitSocket): checked as a request, then opened rather than dispatched. */
  readonly socket?: true
  /** Set when the upgrade passed every check: the socket may open. */
  admitted?: boolean
}

/** The record of a request for `project`, its sub-path cut from the concern's `prefix`. */
export function projectCall<C extends { manifest: { prefix: string } }>(request: IncomingRequest, project: ProjectRecord, path: string, concern: C | undefined): ProjectCall<C> {
  return { request, project, path, concern, subPath: concern ? path.slice(concern.manifest.prefix.length) : path, reloaded: false }
}
