// pg_graphql's (v1.6) filter operators, one entry each: which filter input
// types carry it, the GraphQL type of its operand and its SQL. schema/filters.ts
// builds every `<Type>Filter` input type from this table and plan/filter.ts
// every condition, so adding an operator is one entry here.
import { graphqlErrors } from './errors.ts'
import { arrayLiteral, geoLiteral, literal, qualified, type SqlValues } from './sql.ts'
import type { ScalarName, ValueType } from './types.ts'

/**
 * A family of filter input types: `<Scalar>Filter` of one scalar, every
 * enum's `<Enum>Filter`, or every `<Scalar>ListFilter` (LIST_FILTER_SCALARS).
 */
export type FilterFamily = ScalarName | 'Enum' | 'List'

/**
 * The operand's GraphQL type: `value` is the filtered type itself (`T`, or
 * `[T!]` in a list filter), `values` is `[T!]`, `is` is the FilterIs enum.
 */
export type OperandShape = 'value' | 'values' | 'is' | 'dWithin'

export interface FilterOperator {
  name: string
  description: string
  families: ReadonlySet<FilterFamily>
  operand: OperandShape
  /** The condition on `expr`, a column of `type`, for a non-null operand. */
  sql(values: SqlValues, expr: string, type: ValueType, operand: unknown): string
}

/** Element types whose arrays get a `<Scalar>ListFilter`, in the order their types are declared. */
export const LIST_FILTER_SCALARS: readonly ScalarName[] = [
  'Int', 'Float', 'String', 'Boolean', 'UUID', 'BigInt', 'BigFloat', 'Time', 'Date', 'Datetime',
]

const asList = (operand: unknown): unknown[] => (Array.isArray(operand) ? operand : [operand])

/** `expr op value`, the value cast to the column's type (an array for list columns). */
const compare = (op: string) => (values: SqlValues, expr: string, type: ValueType, operand: unknown) =>
  `${expr} ${op} ${literal(values, type.list ? asList(operand) : operand, type)}`

// Text operators apply to the text of the value, as in pg_graphql.
const textCompare = (op: string) => (values: SqlValues, expr: string, type: ValueType, operand: unknown) =>
  `${expr} ${op} ${literal(values, operand, type)}::text`

const IS_SQL = new Map([['NULL', 'is null'], ['NOT_NULL', 'is not null']])

// Only FilterIs's two values; anything else reaches here only past validation
// (a variable of another type with validation off) and is refused as pg_graphql does.
const isTest = (_values: SqlValues, expr: string, _type: ValueType, operand: unknown) => {
  const test = typeof operand === 'string' ? IS_SQL.get(operand) : undefined
  if (test === undefined) throw graphqlErrors.invalidInput('FilterIs')
  return `${expr} ${test}`
}

/**
 * PostGIS's predicates on a geometry or geography column, the operand a
 * GeoJSON geometry cast to the column's bare type (not its typmod: a Point
 * column may be tested against a Polygon). geography has no ST_Contains or
 * ST_Within: ST_Covers and ST_CoveredBy are its equivalents.
 */
const spatial = (geometryFn: string, geographyFn: string) => (values: SqlValues, expr: string, type: ValueType, operand: unknown) => {
  const geo = geoOf(type)
  const fn = geo.kind === 'geometry' ? geometryFn : geographyFn
  return `${qualified(geo.schema, fn)}(${expr}, ${geoLiteral(values, operand, geo, qualified(geo.schema, geo.kind))})`
}

// Only a GeoJSON column reaches a spatial operator past validation; any other
// (validation off) is refused as before these operators existed.
function geoOf(type: ValueType) {
  if (!type.geo) throw graphqlErrors.invalidInput(`${type.enum?.name ?? type.scalar}Filter`)
  return type.geo
}

/** `dWithin: {geometry, distance}`: within `distance` (units of the SRID for geometry, metres for geography). */
const dWithin = (values: SqlValues, expr: string, type: ValueType, operand: unknown) => {
  const geo = geoOf(type)
  const o = operand as Record<string, unknown>
  if (typeof o !== 'object' || o === null || typeof o.distance !== 'number' || !Number.isFinite(o.distance) || o.geometry == null) {
    throw graphqlErrors.invalidInput('GeoJSONDWithinInput')
  }
  if (o.distance < 0) throw graphqlErrors.negativeDistance()
  const target = geoLiteral(values, o.geometry, geo, qualified(geo.schema, geo.kind))
  return `${qualified(geo.schema, 'st_dwithin')}(${expr}, ${target}, ${values.add(String(o.distance), 'float8')})`
}

const ORDERED: FilterFamily[] = ['BigFloat', 'BigInt', 'Date', 'Datetime', 'Float', 'Int', 'String', 'Time']
const EQUATABLE: FilterFamily[] = [...ORDERED, 'UUID', 'Enum']

const operator = (
  name: string, description: string, families: FilterFamily[], operand: OperandShape, sql: FilterOperator['sql'],
): FilterOperator => ({ name, description, families: new Set(families), operand, sql })

export const FILTER_OPERATORS: readonly FilterOperator[] = [
  operator('eq', 'Equal to', [...EQUATABLE, 'Boolean', 'ID', 'Opaque', 'List'], 'value', compare('=')),
  operator('neq', 'Not equal to', EQUATABLE, 'value', compare('<>')),
  operator('gt', 'Greater than', ORDERED, 'value', compare('>')),
  operator('gte', 'Greater than or equal to', ORDERED, 'value', compare('>=')),
  operator('lt', 'Less than', ORDERED, 'value', compare('<')),
  operator('lte', 'Less than or equal to', ORDERED, 'value', compare('<=')),
  operator('in', 'Contained in list', EQUATABLE, 'values',
    (values, expr, type, operand) => `${expr} = any(${arrayLiteral(values, asList(operand), type)})`),
  operator('is', 'Is null or not null', [...EQUATABLE, 'Boolean', 'Opaque', 'List', 'GeoJSON'], 'is', isTest),
  operator('like', 'Matches a pattern (case sensitive)', ['String'], 'value', textCompare('like')),
  operator('ilike', 'Matches a pattern (case insensitive)', ['String'], 'value', textCompare('ilike')),
  operator('regex', 'Matches a POSIX regular expression (case sensitive)', ['String'], 'value', textCompare('~')),
  operator('iregex', 'Matches a POSIX regular expression (case insensitive)', ['String'], 'value', textCompare('~*')),
  operator('startsWith', 'Starts with the given string', ['String'], 'value',
    (values, expr, type, operand) => `${expr}::text ^@ ${literal(values, operand, type)}::text`),
  operator('contains', 'Contains every element of the list', ['List'], 'value', compare('@>')),
  operator('containedBy', 'Every element is in the list', ['List'], 'value', compare('<@')),
  operator('overlaps', 'Shares an element with the list', ['List'], 'value', compare('&&')),
  operator('intersects', 'Shares any point with the geometry', ['GeoJSON'], 'value', spatial('st_intersects', 'st_intersects')),
  operator('contains', 'Contains the geometry (no point of it outside)', ['GeoJSON'], 'value', spatial('st_contains', 'st_covers')),
  operator('within', 'Lies within the geometry (no point outside it)', ['GeoJSON'], 'value', spatial('st_within', 'st_coveredby')),
  operator('dWithin', 'Within a distance of the geometry (units of its SRID for geometry, metres for geography)', ['GeoJSON'], 'dWithin', dWithin),
]

const byName = (a: FilterOperator, b: FilterOperator) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)

/** The operators of one family, in pg_graphql's (alphabetical) field order. */
export function operatorsOf(family: FilterFamily): FilterOperator[] {
  return FILTER_OPERATORS.filter((o) => o.families.has(family)).sort(byName)
}

/**
 * Scalars only a schema's optional addition brings (`postgis`): their filter
 * type is listed only where a field uses it, so a schema without them is unchanged.
 */
export const OPTIONAL_SCALARS: ReadonlySet<ScalarName> = new Set(['GeoJSON'])

/** Scalars with a `<Scalar>Filter`, alphabetical. */
export const FILTERED_SCALARS: readonly ScalarName[] = [
  ...new Set(FILTER_OPERATORS.flatMap((o) => [...o.families])),
].filter((f): f is ScalarName => f !== 'Enum' && f !== 'List').sort()

/**
 * The operator `name` on a list or an element column. The planner looks up by
 * list-ness alone, not by the column's scalar: a document that skipped
 * validation (`validation` disabled) is planned as before this table existed.
 */
export function operatorFor(name: string, list: boolean): FilterOperator | undefined {
  return FILTER_OPERATORS.find((o) => o.name === name && (list ? o.families.has('List') : [...o.families].some((f) => f !== 'List')))
}

/** Filter input type of a column type; undefined when the column is not filterable. */
export function filterTypeOf(type: ValueType, enumArrays = false): string | undefined {
  // Enum arrays only with `enumArrays`: pg_graphql has no filter for them.
  if (type.list && type.enum) return enumArrays ? `${type.enum.name}ListFilter` : undefined
  if (type.list) return type.scalar && LIST_FILTER_SCALARS.includes(type.scalar) ? `${type.scalar}ListFilter` : undefined
  if (type.enum) return `${type.enum.name}Filter`
  // `composites`: a filter per attribute (schema/filters.ts leaves it out when no attribute has one).
  if (type.composite) return `${type.composite.name}Filter`
  return type.scalar && FILTERED_SCALARS.includes(type.scalar) ? `${type.scalar}Filter` : undefined
}
