// Which schema a request is for, as PostgREST 13 decides it
// (shared/reference/postgrest.md, "Bodies and profiles"): the Accept-Profile
// header's (GET, HEAD) or Content-Profile's (the other methods, RPC POST),
// else the first of the project's exposed schemas (`db-schemas`); a schema not
// exposed is 406 PGRST106. Decided before a connection is taken. The request
// then runs with that schema first on its search path, and the reply names it
// when the caller chose it or could have.
import type { Bind } from '../../../lib/db/prepared-statements.ts'
import { ident } from '../../../lib/pg-catalog/quote.ts'
import { restErrors } from '../errors.ts'

export interface Profile {
  /** The schema the request is for. */
  schema: string
  /** The project's exposed schemas, the default first. */
  exposed: readonly string[]
  /** Whether the reply carries `Content-Profile`: a profile header was sent, or several schemas are exposed (PostgREST's "negotiated by profile"). */
  named: boolean
}

/** The profile of a request that sent `header` (undefined or empty: none) to a project exposing `exposed`. */
export function profileOf(header: string | undefined, exposed: readonly string[]): Profile {
  const sent = header === undefined || header === '' ? undefined : header
  const schema = sent ?? exposed[0]!
  if (!exposed.includes(schema)) throw restErrors.schema(schema, exposed)
  return { schema, exposed, named: sent !== undefined || exposed.length > 1 }
}

/**
 * The request's search path as PostgREST sets it, transaction-local: the
 * schema, then `public` and `extensions` (the `db-extra-search-path` Supabase
 * configures, so pgcrypto's and uuid-ossp's functions resolve unqualified, as
 * sql/project/0060 has them everywhere else), so the schema's own functions,
 * types and operators win over public's in casts, filters and the
 * pre-request function's name. A select item of the identity statement
 * (settings.ts), so it costs no round trip.
 */
export function searchPathSetting(schema: string, bind: Bind): string {
  // Quoted, as PostgREST writes it (current_setting('search_path') reads `"api", "public", "extensions"` there too).
  const path = [...new Set([schema, 'public', 'extensions'])].map(ident).join(', ')
  return `set_config('search_path', ${bind(path)}, true)`
}

/** The reply's `Content-Profile`, when it carries one. */
export function profileHeaders(profile: Pick<Profile, 'schema' | 'named'>): Record<string, string> {
  return profile.named ? { 'content-profile': profile.schema } : {}
}
