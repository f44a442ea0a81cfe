// SQL text helpers for the planner. Every value a client sends goes through
// `SqlValues`: in a query it becomes a `$n` parameter with an explicit cast,
// so a query's text depends only on the document's shape and PostgreSQL can
// keep one prepared plan per shape (statements.ts); in a mutation it is a
// quoted literal with the same cast (pg's escapeLiteral, which doubles quotes
// and switches to E'' strings for backslashes), since a large insert can
// carry more values than a statement's parameter limit. Identifiers always go
// through escapeIdentifier (lib/pg-catalog/quote.ts, shared with other concerns).
import { escapeLiteral } from 'pg'
import { arrayText, qualified, quoteText, scalarText } from '../../lib/pg-catalog/quote.ts'
import { graphqlErrors } from './errors.ts'
import { geoJsonText } from './scalars.ts'
import type { CompositeModel, GeoType, ValueType } from './types.ts'

export { arrayText, ident, qualified, wholeRow } from '../../lib/pg-catalog/quote.ts'

/** A text literal. */
export const text = quoteText

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
  if (type.geo) return geoLiteral(values, value, type.geo, type.sqlType)
  if (value === null || value === undefined) return values.add(null, type.sqlType)
  return values.add(valueText(value, type), type.sqlType)
}

/** The text form PostgreSQL reads a non-null value of `type` from. */
function valueText(value: unknown, type: ValueType): string {
  if (type.composite) return recordText(value, type.composite)
  if (Array.isArray(value)) {
    for (const v of value) checkLength(v, type)
    return arrayText(value)
  }
  checkLength(value, type)
  return scalarText(value)
}

/**
 * A `<Composite>Input` value as the record's text form: every attribute in
 * the type's order, one not given (or not a field) empty, which is null; a
 * given one quoted, so an empty string stays a string.
 */
function recordText(value: unknown, composite: CompositeModel): string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw graphqlErrors.invalidInput(`${composite.name}Input`)
  const items: string[] = new Array<string>(composite.arity).fill('')
  for (const [key, v] of Object.entries(value)) {
    const attribute = composite.attributeByField.get(key)
    if (!attribute) throw graphqlErrors.invalidInput(`${composite.name}Input`)
    if (v !== null && v !== undefined) items[attribute.position] = `"${valueText(v, attribute.type).replace(/[\\"]/g, (ch) => `\\${ch}`)}"`
  }
  return `(${items.join(',')})`
}

/**
 * A GeoJSON value as a PostGIS value of `castTo` (the column's type, typmod
 * and all, or the bare geometry/geography type of a filter's operand). The
 * GeoJSON text is the parameter; the SQL around it depends on the type only.
 */
export function geoLiteral(values: SqlValues, value: unknown, geo: GeoType, castTo: string): string {
  if (value === null || value === undefined) return values.add(null, castTo)
  return `${qualified(geo.schema, 'st_geomfromgeojson')}(${values.add(geoJsonText(value), 'text')})::${castTo}`
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
  // GeoJSON is written as an object, not as the text ST_AsGeoJSON returns.
  if (type.geo) return `${qualified(type.geo.schema, 'st_asgeojson')}(${expr})::json`
  const scalar = type.scalar
  if (type.enum?.mapped) {
    const cases = type.enum.values.filter((v) => v.db !== v.name).map((v) => `when ${escapeLiteral(v.db)} then ${escapeLiteral(v.name)}`)
    // An empty array stays empty (array_agg of no rows is null), in its order.
    if (type.list) {
      const mapped = `(select coalesce(array_agg(case x::text ${cases.join(' ')} else x::text end order by i), '{}') from unnest(${expr}) with ordinality u(x, i))`
      return `(case when (${expr}) is null then null else ${mapped} end)`
    }
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
