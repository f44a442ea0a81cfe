// SQL text helpers for the planner. Every value a client sends goes through
// `SqlValues`: in a query it becomes a `$n` parameter with an explicit cast,
// so a query's text depends only on the document's shape and PostgreSQL can
// keep one prepared plan per shape (statements.ts); in a mutation it is a
// quoted literal with the same cast (pg's escapeLiteral, which doubles quotes
// and switches to E'' strings for backslashes), since a large insert can
// carry more values than a statement's parameter limit. Identifiers always go
// through escapeIdentifier.
import { escapeIdentifier, escapeLiteral } from 'pg'
import { graphqlErrors } from './errors.ts'
import type { ValueType } from './types.ts'

export const ident = escapeIdentifier

export function qualified(schema: string, name: string): string {
  return `${escapeIdentifier(schema)}.${escapeIdentifier(name)}`
}

export function text(value: string): string {
  return escapeLiteral(value)
}

function scalarText(value: unknown): string {
  if (typeof value === 'string') return value
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value)
  return JSON.stringify(value)
}

function arrayElement(value: unknown): string {
  if (value === null || value === undefined) return 'NULL'
  return `"${scalarText(value).replace(/[\\"]/g, (ch) => `\\${ch}`)}"`
}

/** A PostgreSQL array literal (text form) of JS values. */
export function arrayText(values: readonly unknown[]): string {
  return `{${values.map(arrayElement).join(',')}}`
}

function checkLength(value: unknown, type: ValueType): void {
  if (type.maxChars !== null && typeof value === 'string' && [...value].length > type.maxChars) {
    throw graphqlErrors.tooLong(type.maxChars)
  }
}

/**
 * The client's values of one statement, each written as an expression of an
 * explicit type: `$n::type` when `parameters` (the texts are bound in order,
 * equal values share one parameter), otherwise `'literal'::type`.
 */
export class SqlValues {
  /** Text forms of the parameters, `$1` first; null is SQL NULL. */
  readonly texts: (string | null)[] = []
  readonly parameters: boolean
  readonly #refs = new Map<string, string>()

  constructor(parameters: boolean) {
    this.parameters = parameters
  }

  /** `text` (a value's text form, or null) as an expression of `sqlType`. */
  add(text: string | null, sqlType: string): string {
    if (!this.parameters) return text === null ? `null::${sqlType}` : `${escapeLiteral(text)}::${sqlType}`
    const key = text === null ? `n${sqlType}` : `v${sqlType}\0${text}`
    let ref = this.#refs.get(key)
    if (ref === undefined) {
      this.texts.push(text)
      ref = `$${this.texts.length}::${sqlType}`
      this.#refs.set(key, ref)
    }
    return ref
  }
}

/** A value of a column's own type (`type.sqlType`). */
export function literal(values: SqlValues, value: unknown, type: ValueType): string {
  if (value === null || value === undefined) return values.add(null, type.sqlType)
  if (Array.isArray(value)) {
    for (const v of value) checkLength(v, type)
    return values.add(arrayText(value), type.sqlType)
  }
  checkLength(value, type)
  return values.add(scalarText(value), type.sqlType)
}

/** An array whose elements have the (scalar) column's type: for `in`. */
export function arrayLiteral(values: SqlValues, items: readonly unknown[], type: ValueType): string {
  for (const v of items) checkLength(v, type)
  return values.add(arrayText(items), `${type.sqlType}[]`)
}

/** json_build_object takes at most 100 arguments: 50 pairs. */
const PAIRS_PER_CALL = 50

function buildObject(pairs: ReadonlyArray<readonly [string, string]>): string {
  return `json_build_object(${pairs.map(([k, v]) => `${escapeLiteral(k)}, ${v}`).join(', ')})`
}

/**
 * A JSON object of (key, SQL expression) pairs, keys kept in order. A wider
 * object is built 50 pairs at a time and the texts spliced without their
 * braces: every value still goes through json_build_object, which types a
 * bare literal (`'Query'`) where to_json could not.
 */
export function jsonObject(pairs: ReadonlyArray<readonly [string, string]>): string {
  if (pairs.length <= PAIRS_PER_CALL) return buildObject(pairs)
  const inner: string[] = []
  for (let i = 0; i < pairs.length; i += PAIRS_PER_CALL) {
    inner.push(`left(substr(${buildObject(pairs.slice(i, i + PAIRS_PER_CALL))}::text, 2), -1)`)
  }
  return `('{' || ${inner.join(` || ',' || `)} || '}')::json`
}

/** How a value of `type` is written into the response (pg_graphql's encodings). */
export function output(type: ValueType, expr: string): string {
  const scalar = type.scalar
  if (type.enum?.mapped) {
    const cases = type.enum.values.filter((v) => v.db !== v.name).map((v) => `when ${escapeLiteral(v.db)} then ${escapeLiteral(v.name)}`)
    if (type.list) return `(select array_agg(case x::text ${cases.join(' ')} else x::text end) from unnest(${expr}) x)`
    return `(case (${expr})::text ${cases.join(' ')} else (${expr})::text end)`
  }
  if (scalar === 'BigInt' || scalar === 'BigFloat') return type.list ? `(${expr})::text[]` : `(${expr})::text`
  // A json value keeps its own text (spacing, key order); jsonb is written as jsonb prints.
  if (scalar === 'JSON') return type.list ? `(${expr})::text[]` : `((${expr}) #>> '{}')`
  return expr
}

/** base64 of the jsonb text of an array: pg_graphql's cursor and nodeId encoding. */
export function base64JsonArray(items: string[]): string {
  return `translate(encode(convert_to(jsonb_build_array(${items.join(', ')})::text, 'utf-8'), 'base64'), E'\\n', '')`
}
