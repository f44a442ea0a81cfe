// A project's pre-request function (PostgREST's `db-pre-request`): the
// function its data API calls as the caller before every request's
// statement, named by the operator on the project's row
// (sql/catalogue/0019_rest_pre_request.sql), as PostgREST names it in its
// configuration. In lib/ because the control plane checks a name before
// saving it and the REST worker calls what was saved, and both must read a
// name alike.
import { escapeIdentifier } from 'pg'
import { platformErrors } from '../errors.ts'

/**
 * What PostgreSQL takes unquoted (a letter or `_`, then letters, digits, `_`
 * or `$`), ASCII only, at most 63 bytes: as exposed schemas' names, kept
 * exactly as written and always quoted where used, so `Check` is not `check`.
 */
const PART = '[A-Za-z_][A-Za-z0-9_$]{0,62}'
const NAME = new RegExp(`^(?:(${PART})\\.)?(${PART})$`)

export interface PreRequestName {
  /** Absent: found on the request's search path (its schema, then `public`). */
  schema?: string
  name: string
}

/** `schema.fn` or `fn` as its parts; undefined when it is neither. */
export function parsePreRequest(text: string): PreRequestName | undefined {
  const match = NAME.exec(text)
  if (!match) return undefined
  return match[1] === undefined ? { name: match[2]! } : { schema: match[1], name: match[2]! }
}

/**
 * A name as given (a JSON value): `schema.fn` or `fn`, or null for none.
 * Every refusal is the platform's invalid_argument concerning `field`, its
 * message starting with `label` (the API field, a CLI flag, a form's label).
 */
export function readPreRequest(value: unknown, field = 'pre_request', label = field, none = 'be null for none'): string | null {
  if (value === null) return null
  if (typeof value !== 'string' || parsePreRequest(value) === undefined) {
    const shown = JSON.stringify(value)?.slice(0, 80) ?? String(value)
    throw platformErrors.invalidArgument(
      `${label} must name a function as schema.function or function (letters, digits, _ and $, each starting with a letter or _, at most 63), or ${none}, got ${shown}`,
      field,
    )
  }
  return value
}

/** A name as typed on a command line or in a form: the name, or `none` (or nothing, in a form) for none. */
export function preRequestFromText(text: string, field = 'pre_request', label = field): string | null {
  const typed = text.trim()
  if (typed === '' || typed.toLowerCase() === 'none') return null
  return readPreRequest(typed, field, label, 'be none for none')
}

/** The statement that calls the function named `text` (as readPreRequest admits it), as PostgREST calls it: `select "schema"."fn"()`. */
export function preRequestCall(text: string): string {
  const parsed = parsePreRequest(text)
  // Saved names were checked (here and by the catalogue's constraint); another is quoted whole, and then not found (42883).
  if (parsed === undefined) return `select ${escapeIdentifier(text)}()`
  return `select ${parsed.schema === undefined ? '' : `${escapeIdentifier(parsed.schema)}.`}${escapeIdentifier(parsed.name)}()`
}
