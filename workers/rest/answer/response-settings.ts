// The answer's status and headers as SQL sets them (PostgREST's
// `response.status` and `response.headers`, shared/reference/postgrest.md
// section 6): a function, the pre-request function or a trigger runs
// `set_config('response.headers', '[{"Cache-Control": "public"}]', true)` or
// `set_config('response.status', '418', true)`, and the reply carries them.
//
// Read in the request's own message, so they cost no round trip (answer.ts):
// - a read's or a function's statement ends with RESPONSE_COLUMNS, last in
//   its select list, so PostgreSQL computes them after everything else of the
//   row: after the aggregate has read every row (reads, sets, void), or after
//   the body in the same projection (a scalar function: a projection's items
//   are evaluated in order; a volatile call sits in a subquery PostgreSQL
//   evaluates first). Costs nothing measurable.
// - a write's statement is followed in its message by READ_SQL, a prepared
//   statement of its own (responseSettingsCall): AFTER triggers fire once the
//   statement's result is already computed, so a column of it would miss what
//   they set. Same transaction, so a transaction-local setting is still there.
import type pg from 'pg'
import { preparedCall, type PreparedCall } from '../../../lib/db/prepared-statements.ts'
import type { ServiceResponse } from '../../../lib/service.ts'
import { restErrors } from '../errors.ts'

/** What the read answers: each setting's text, null when unset or empty. */
export interface ResponseSettings {
  response_headers?: string | null
  response_status?: string | null
}

/** The settings as select items of a statement; last in its list (see above). */
export const RESPONSE_COLUMNS =
  "nullif(pg_catalog.current_setting('response.headers', true), '') as response_headers, " +
  "nullif(pg_catalog.current_setting('response.status', true), '') as response_status"

const READ_SQL = `select ${RESPONSE_COLUMNS}`

/** The read as a prepared statement of `client` (its PREPARE when new, then its EXECUTE): it reads no table, so one serves every role. */
export function responseSettingsCall(client: pg.ClientBase): PreparedCall {
  return preparedCall(client, '', READ_SQL, [])
}

/** An HTTP token (RFC 9110): what a header's name may hold. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
/** A header's value: no line breaks or other control characters (they would split the reply), nothing past Latin-1. */
const VALUE = /^[\t\x20-\x7e\x80-\xff]*$/
/** How the reply is framed is the HTTP server's to say: SQL setting these would corrupt the connection. */
const FRAMING = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade'])

/** `response.headers`: a JSON array of objects with one key and a string value each (PGRST111 otherwise). */
function headersOf(text: string | null): Array<[string, string]> {
  if (text === null) return []
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw restErrors.responseHeaders()
  }
  if (!Array.isArray(value)) throw restErrors.responseHeaders()
  return value.map((item: unknown) => {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) throw restErrors.responseHeaders()
    const entries = Object.entries(item)
    if (entries.length !== 1) throw restErrors.responseHeaders()
    const [name, header] = entries[0]!
    if (typeof header !== 'string' || !TOKEN.test(name) || !VALUE.test(header)) throw restErrors.responseHeaders()
    return [name.toLowerCase(), header]
  })
}

/**
 * `response.status`: its leading digits, as PostgREST reads them (`'418'`,
 * `'418 teapot'`), a final status the server can send (200 to 599); PGRST112
 * otherwise.
 */
function statusOf(text: string | null): number | undefined {
  if (text === null) return undefined
  const digits = /^\d+/.exec(text)
  const status = digits ? Number(digits[0]) : NaN
  if (!(status >= 200 && status <= 599)) throw restErrors.responseStatus()
  return status
}

/**
 * The answer with SQL's status and headers: a header SQL names replaces the
 * answer's own of that name (PostgREST lets SQL override Content-Type,
 * Location ...); several of one name are joined into one comma-separated
 * line, but for Set-Cookie, each sent as a line of its own (a cookie's
 * Expires holds a comma). Throws PGRST111 / PGRST112 when a setting is
 * malformed.
 */
export function withResponseSettings(response: ServiceResponse, settings: ResponseSettings | undefined): ServiceResponse {
  if (settings === undefined) return response
  const status = statusOf(settings.response_status ?? null)
  const headers = headersOf(settings.response_headers ?? null)
  if (status === undefined && headers.length === 0) return response
  const fromSql: Record<string, string> = {}
  const cookies: string[] = []
  for (const [name, value] of headers) {
    if (FRAMING.has(name)) continue
    if (name === 'set-cookie') cookies.push(value)
    else fromSql[name] = Object.hasOwn(fromSql, name) ? `${fromSql[name]}, ${value}` : value
  }
  const answer: ServiceResponse = { ...response, status: status ?? response.status, headers: { ...response.headers, ...fromSql } }
  if (cookies.length > 0) answer.setCookies = [...(response.setCookies ?? []), ...cookies]
  return answer
}
