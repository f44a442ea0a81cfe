// Which schemas a project's data API exposes (PostgREST's `db-schemas`,
// Supabase's "Exposed schemas"): the operator's list on the project's row
// (sql/catalogue/0017_rest_schemas.sql), its default and its rules. In lib/
// because the control plane checks a list before saving it and the REST
// worker serves what was saved, and both must agree on what a list may hold.
import { platformErrors } from '../errors.ts'
import { HIDDEN_SCHEMAS } from './catalog.ts'

/** A new project's list, and what PostgREST's default `db-schemas` is. */
export const DEFAULT_EXPOSED_SCHEMAS: readonly string[] = ['public']

/** At most this many: each is one more schema in the catalogue query and in the model of every role. */
export const MAX_EXPOSED_SCHEMAS = 20

/**
 * What PostgreSQL takes unquoted (a letter or `_`, then letters, digits, `_`
 * or `$`), ASCII only, at most 63 bytes (NAMEDATALEN - 1). Names are kept
 * exactly as written and always quoted where used, so `Api` is not `api`.
 */
const NAME = /^[A-Za-z_][A-Za-z0-9_$]{0,62}$/

/**
 * The platform's and PostgreSQL's own schemas: never exposed. `pg_` names are
 * PostgreSQL's (pg_catalog, pg_toast, pg_temp_N...); compared without case, so
 * `Auth` is refused as `auth` is rather than served as a different schema a
 * reader would take for the platform's.
 */
export function isNeverExposed(name: string): boolean {
  const lower = name.toLowerCase()
  return lower.startsWith('pg_') || HIDDEN_SCHEMAS.includes(lower)
}

/**
 * A list as given (a JSON array of names), checked whole: a non-empty list of
 * at most MAX_EXPOSED_SCHEMAS distinct names, none of them the platform's.
 * Every refusal is the platform's invalid_argument concerning `field`, its
 * message starting with `label` (the API field, a CLI flag, a form's label).
 */
export function readExposedSchemas(value: unknown, field = 'schemas', label = field): string[] {
  const refuse = (message: string) => platformErrors.invalidArgument(`${label} ${message}`, field)
  if (!Array.isArray(value)) throw refuse('must be a list of schema names, such as ["public", "api"]')
  if (value.length === 0) throw refuse('must name at least one schema (the first is the default)')
  if (value.length > MAX_EXPOSED_SCHEMAS) throw refuse(`may name at most ${MAX_EXPOSED_SCHEMAS} schemas, got ${value.length}`)
  const seen = new Set<string>()
  for (const name of value) {
    const shown = JSON.stringify(name)?.slice(0, 80) ?? String(name)
    if (typeof name !== 'string' || !NAME.test(name)) {
      throw refuse(`must hold schema names of letters, digits, _ and $ (starting with a letter or _, at most 63), got ${shown}`)
    }
    if (isNeverExposed(name)) throw refuse(`may not name ${shown}: it is the platform's or PostgreSQL's own schema`)
    if (seen.has(name)) throw refuse(`names ${shown} twice`)
    seen.add(name)
  }
  return [...seen]
}

/** A list as typed on a command line or in a form: names separated by commas (spaces around them ignored). */
export function exposedSchemasFromText(text: string, field = 'schemas', label = field): string[] {
  const names = text.split(',').map((name) => name.trim())
  return readExposedSchemas(names.length === 1 && names[0] === '' ? [] : names, field, label)
}
