// Whether a project's pre-request function (PostgREST's `db-pre-request`,
// lib/pg-catalog/pre-request.ts) can be called before its requests: it is
// called as `select schema.fn()` (or `select fn()`, found on the request's
// search path: pg_catalog, the request's schema, then public) as each API
// role, so it must exist, take no arguments, be a function that is not a
// trigger's, and each API role needs USAGE on its schema and EXECUTE on it.
// A function that cannot be called fails every request of the project, so
// the control plane refuses to name one (rest-settings.ts) and says so of one
// dropped or revoked later (`projects rest`, the admin API, the dashboard).
// Read from the catalogue of the project's database (db/pre-request.ts), so
// no owner code runs.
import { escapeIdentifier } from 'pg'
import { parsePreRequest } from '../lib/pg-catalog/pre-request.ts'
import { preRequestCandidates, schemaExists, type PreRequestCandidate } from './db/pre-request.ts'
import type { Queryable } from './db/queryable.ts'

/** `a`, `a and b`, `a, b and c`. */
function listed(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`
}

/** A schema's name as a grant statement needs it written. */
function schemaInSql(name: string): string {
  return /^[a-z_][a-z0-9_$]*$/.test(name) ? name : escapeIdentifier(name)
}

/** What `select fn()` can call: a function (not a procedure or an aggregate) needing no argument. */
const callable = (candidate: PreRequestCandidate): boolean => candidate.kind === 'f' && candidate.required === 0

/** Why `found`, the function a call resolves to, cannot be called by the roles; undefined when it can. */
function refusalOf(found: PreRequestCandidate): string | undefined {
  if (found.trigger) return `${found.signature} returns trigger: only a trigger can call it`
  if (found.noUsage.length > 0) {
    return `${listed(found.noUsage)} ${found.noUsage.length === 1 ? 'has' : 'have'} no usage on schema ${found.schema}: grant usage on schema ${schemaInSql(found.schema)} to ${found.noUsage.join(', ')}`
  }
  if (found.noExecute.length > 0) return `${listed(found.noExecute)} may not execute ${found.signature}: grant execute on function ${found.signature} to ${found.noExecute.join(', ')}`
  return undefined
}

/** The other functions of the name, which a call with no arguments cannot reach, as a parenthesis; '' when none. */
function othersOf(candidates: readonly PreRequestCandidate[]): string {
  const others = candidates.filter((candidate) => !callable(candidate)).map((candidate) => candidate.signature)
  return others.length === 0 ? '' : ` (${listed(others)} ${others.length === 1 ? 'needs' : 'need'} arguments or ${others.length === 1 ? 'is' : 'are'} not a function)`
}

/** What a call resolves to among `candidates` of one schema: the one function, or why none. */
function resolvedIn(candidates: readonly PreRequestCandidate[], shown: string): PreRequestCandidate | string | undefined {
  const found = candidates.filter(callable)
  if (found.length > 1) return `${shown}() is ambiguous: ${listed(found.map((candidate) => candidate.signature))} all take no arguments`
  return found[0]
}

/**
 * Why the function `text` names (as readPreRequest admits it) cannot be
 * called before a request of a project exposing `schemas`, by each of
 * `roles`; undefined when it can.
 */
export async function preRequestProblem(db: Queryable, text: string, schemas: readonly string[], roles: readonly string[]): Promise<string | undefined> {
  const parsed = parsePreRequest(text)
  if (parsed === undefined) return `"${text}" does not name a function`
  if (parsed.schema !== undefined) {
    const { schema, name } = parsed
    if (!(await schemaExists(db, schema))) return `schema "${schema}" does not exist in the project's database`
    const candidates = await preRequestCandidates(db, name, [schema], roles)
    const found = resolvedIn(candidates, `${schema}.${name}`)
    if (found === undefined) return `the project's database has no function ${schema}.${name}() taking no arguments${othersOf(candidates)}`
    return typeof found === 'string' ? found : refusalOf(found)
  }
  // A name alone is found on each request's search path: pg_catalog first (implicitly, as PostgreSQL does), its schema, then public.
  const paths = schemas.map((schema) => ({ schema, path: schema === 'public' ? ['pg_catalog', 'public'] : ['pg_catalog', schema, 'public'] }))
  const candidates = await preRequestCandidates(db, parsed.name, [...new Set(paths.flatMap(({ path }) => path))], roles)
  for (const { schema, path } of paths) {
    let found: PreRequestCandidate | string | undefined
    for (const at of path) {
      found = resolvedIn(
        candidates.filter((candidate) => candidate.schema === at),
        `${at}.${parsed.name}`,
      )
      if (found !== undefined) break
    }
    const shownPath = path.slice(1).join(', then ')
    if (found === undefined) return `no function ${parsed.name}() taking no arguments is on the search path of schema ${schema} (${shownPath})${othersOf(candidates)}`
    const problem = typeof found === 'string' ? found : refusalOf(found)
    if (problem !== undefined) return problem
  }
  return undefined
}
