// What PostgREST tells SQL about the request (shared/reference/postgrest.md
// section 6): the transaction-local `search_path` (the request's schema first:
// profiles.ts), `request.method`, `request.path`, `request.headers` and
// `request.cookies` (and `response.headers` and `response.status` emptied),
// beside the caller's role and claims. All of them are select items of the
// identity statement (lib/db/request-transaction.ts), so they cost no round
// trip. The optional pre-request function (`db-pre-request`) is the
// project's setting (lib/pg-catalog/pre-request.ts), called after them.
import type { Bind } from '../../../lib/db/prepared-statements.ts'
import { searchPathSetting } from '../request/profiles.ts'

/** What the settings are made of: the request as the worker received it. */
export interface RequestFacts {
  method: string
  /** The path below `/rest/v1` ("" for the prefix itself). */
  path: string
  /** Lower-cased names. */
  headers: Record<string, string>
  /** The schema the request is for (profiles.ts): first on its search path. */
  schema: string
}

/**
 * Headers left out of `request.headers`. `cookie` as PostgREST (its pairs are
 * `request.cookies`); `apikey` and `authorization` because they are bearer
 * credentials (the service_role key among them) and the statement carrying
 * them is text PostgreSQL writes to its log beside any error it raises
 * (`log_min_error_statement`); what SQL may trust of them is in
 * `request.jwt.claims`, verified (workers/rest/README.md).
 */
const LEFT_OUT = new Set(['cookie', 'apikey', 'authorization'])

/** The Cookie header's pairs, the first of a name kept; values as sent. */
export function cookiesOf(header: string | undefined): Record<string, string> {
  const cookies: Record<string, string> = {}
  if (!header) return cookies
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq <= 0) continue
    const name = part.slice(0, eq).trim()
    if (name !== '' && !Object.hasOwn(cookies, name)) cookies[name] = part.slice(eq + 1).trim()
  }
  return cookies
}


/** The select items the REST setup adds to the identity statement (lib/db/request-transaction.ts's identityCall), their values through `bind`. */
export function requestSettings(facts: RequestFacts, bind: Bind): string[] {
  const headers: Record<string, string> = {}
  for (const name in facts.headers) if (!LEFT_OUT.has(name)) headers[name] = facts.headers[name]!
  const set = (name: string, value: string) => `set_config('${name}', ${bind(value)}, true)`
  return [
    searchPathSetting(facts.schema, bind),
    set('request.method', facts.method),
    // PostgREST's path is below its root; ours is below the prefix, "" being the root.
    set('request.path', facts.path === '' ? '/' : facts.path),
    set('request.headers', JSON.stringify(headers)),
    set('request.cookies', JSON.stringify(cookiesOf(facts.headers.cookie))),
    // Emptied for this transaction, so a value SQL once set for the session (`set_config(.., false)`) on this
    // pooled connection never reaches another request's reply (response-settings.ts).
    set('response.headers', ''),
    set('response.status', ''),
  ]
}
