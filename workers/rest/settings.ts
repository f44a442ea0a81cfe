// What PostgREST tells SQL about the request (shared/reference/postgrest.md
// section 6): the transaction-local `search_path` (the request's schema first:
// profiles.ts), `request.method`, `request.path`, `request.headers` and
// `request.cookies` (and `response.headers` and `response.status` emptied),
// beside the caller's role and claims, and the optional
// pre-request function (`db-pre-request`). All of them are select items of the
// identity statement (lib/db/request-transaction.ts), so they cost no round
// trip; the pre-request function's name is read there too.
import { escapeIdentifier } from 'pg'
import type { Bind } from '../../lib/db/prepared-statements.ts'
import { metaStillIs, type Meta } from '../../lib/pg-catalog/schema-version.ts'
import { searchPathSetting } from './profiles.ts'

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

/** The setup's one column: the pre-request function's name it read (null for none). */
export const PRE_REQUEST_COLUMN = 'pgrst_pre_request'

/** The setting PostgREST's in-database configuration would hold `db-pre-request` in. */
const PRE_REQUEST_SETTING = 'pgrst.db_pre_request'

/**
 * The pre-request function's name as the project configured it, most specific
 * first, as PostgreSQL applies role and database defaults: for the caller's
 * role in this database, for the role, for this database, then the session's
 * own value. Read from `pg_db_role_setting` rather than only
 * `current_setting()`, because `ALTER DATABASE ... SET` reaches a pooled
 * connection only when it reconnects and `ALTER ROLE ... SET` never reaches a
 * `SET ROLE`: read here, a change holds from the next request on.
 */
function preRequestRead(role: string, bind: Bind): string {
  return `${preRequestName(role, bind)} as ${PRE_REQUEST_COLUMN}`
}

/** The pre-request function's name as preRequestRead reads it (null for none), as an expression. */
function preRequestName(role: string, bind: Bind): string {
  const prefix = `${PRE_REQUEST_SETTING}=`
  return (
    `nullif(coalesce((select substr(c, ${prefix.length + 1}) from pg_catalog.pg_db_role_setting s, unnest(s.setconfig) c` +
    ` where s.setdatabase in (0, (select oid from pg_catalog.pg_database where datname = current_database()))` +
    ` and s.setrole in (0, (select oid from pg_catalog.pg_roles where rolname = ${bind(role)}))` +
    ` and c like 'pgrst.db\\_pre\\_request=%' order by s.setrole <> 0 desc, s.setdatabase <> 0 desc limit 1),` +
    ` current_setting('${PRE_REQUEST_SETTING}', true)), '')`
  )
}

/**
 * A select item of the setup (returned after its settings are made) that
 * fails (division by zero) unless the schema key and the pre-request
 * function's name are still those a message was planned against. A write
 * sent with no result to check before its commit runs in one implicit
 * transaction behind it: planned on a schema that moved, it writes nothing,
 * and the request goes the ordinary way. Part of the setup rather than a
 * statement of its own, it costs the write no statement and no second read
 * of the pre-request function's name (about a fifth of PostgreSQL's work for
 * a one-row insert).
 */
export function keyGuard(meta: Pick<Meta, 'role' | 'search_path' | 'version'>, served: readonly string[], preRequest: string | null, bind: Bind): string {
  const same = `${metaStillIs(meta, served, bind)} and coalesce(${PRE_REQUEST_COLUMN}, '') = ${bind(preRequest ?? '')}`
  return `1 / (coalesce(${same}, false))::int as ${GUARD_COLUMN}`
}

/** The failure keyGuard raises when the key moved (division_by_zero). */
export const GUARD_FAILURE = '22012'

const GUARD_COLUMN = 'pgrst_guard'

/** The select items the REST setup adds to the identity statement (lib/db/request-transaction.ts's identityCall), their values through `bind`. */
export function requestSettings(facts: RequestFacts, role: string, bind: Bind): string[] {
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
    preRequestRead(role, bind),
  ]
}

const IDENTIFIER = /^(?:("(?:[^"]|"")+"|[^."]+)\.)?("(?:[^"]|"")+"|[^."]+)$/

function identifier(part: string): string {
  return escapeIdentifier(part.startsWith('"') ? part.slice(1, -1).replaceAll('""', '"') : part)
}

/**
 * The call of the pre-request function named `name` (`schema.fn`, either part
 * quoted, or `fn` found on the search path), as PostgREST calls it: `select
 * "schema"."fn"()`, under the caller's role, after the settings and before the
 * request's statement. A name of another form is taken whole as the
 * function's, which then is not found (42883).
 */
export function preRequestCall(name: string): string {
  const match = IDENTIFIER.exec(name.trim())
  if (!match) return `select ${escapeIdentifier(name)}()`
  return `select ${match[1] ? `${identifier(match[1])}.` : ''}${identifier(match[2]!)}()`
}
