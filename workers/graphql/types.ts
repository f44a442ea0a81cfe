// How PostgreSQL types become GraphQL types (pg_graphql v1.6's mapping, by
// type OID) and how their values cross in both directions.
import type { CatalogType } from './catalog.ts'

export type ScalarName =
  | 'ID' | 'Int' | 'Float' | 'String' | 'Boolean' | 'BigInt' | 'BigFloat' | 'Date' | 'Time' | 'Datetime' | 'UUID' | 'JSON' | 'Cursor' | 'Opaque'

export interface EnumValueModel {
  /** Label in the database. */
  db: string
  /** Value name in GraphQL (the label, or its `mappings` entry). */
  name: string
}

export interface EnumModel {
  oid: number
  schema: string
  sqlName: string
  name: string
  description: string | undefined
  values: EnumValueModel[]
  /** Whether any label is renamed: output then maps labels in SQL. */
  mapped: boolean
}

/** The GraphQL side of a column, argument or function result. */
export interface ValueType {
  scalar: ScalarName | undefined
  enum: EnumModel | undefined
  list: boolean
  /** `format_type` of the PostgreSQL type, typmod included: the cast of every value bound to it. */
  sqlType: string
  oid: number
  maxChars: number | null
}

const BY_OID: Record<number, ScalarName> = {
  16: 'Boolean',
  20: 'BigInt',
  21: 'Int',
  23: 'Int',
  700: 'Float',
  701: 'Float',
  1700: 'BigFloat',
  25: 'String',
  1042: 'String',
  1043: 'String',
  18: 'String',
  1082: 'Date',
  1083: 'Time',
  1114: 'Datetime',
  1184: 'Datetime',
  2950: 'UUID',
  114: 'JSON',
  3802: 'JSON',
}

function scalarOf(oid: number, typtype: string, typeName: string): ScalarName | undefined | null {
  const known = BY_OID[oid]
  if (known) return known
  if (typeName === 'citext' || typeName.endsWith('.citext')) return 'String'
  if (typtype === 'c' || typtype === 'p') return null
  return 'Opaque'
}

/**
 * The GraphQL type of a PostgreSQL type; undefined when it has none
 * (composites, pseudo types, arrays of those): such columns are left out.
 */
export function valueTypeOf(
  t: CatalogType,
  sqlType: string,
  maxChars: number | null,
  enums: Map<number, EnumModel>,
): ValueType | undefined {
  const list = t.category === 'A' && t.elem !== 0
  const oid = list ? t.elem : t.oid
  const typtype = list ? (t.elemTyptype ?? 'b') : t.typtype
  const enumModel = enums.get(oid)
  if (enumModel) return { scalar: undefined, enum: enumModel, list, sqlType, oid, maxChars }
  const scalar = scalarOf(oid, typtype, list ? sqlType.replace(/\[\]$/, '') : sqlType)
  if (!scalar) return undefined
  return { scalar, enum: undefined, list, sqlType, oid, maxChars }
}

export function typeNameOf(type: ValueType): string {
  return type.enum ? type.enum.name : type.scalar!
}

export function isOrderable(type: ValueType): boolean {
  return !type.list && type.scalar !== 'JSON'
}

const NUMERIC: ReadonlySet<ScalarName> = new Set(['Int', 'Float', 'BigInt', 'BigFloat'])
// Boolean has no min()/max() in PostgreSQL.
const COMPARABLE: ReadonlySet<ScalarName> = new Set(['Int', 'Float', 'BigInt', 'BigFloat', 'String', 'Date', 'Time', 'Datetime'])

export function isNumeric(type: ValueType): boolean {
  return !type.list && type.scalar !== undefined && NUMERIC.has(type.scalar)
}

export function isComparable(type: ValueType): boolean {
  return !type.list && type.scalar !== undefined && COMPARABLE.has(type.scalar)
}
