// How PostgreSQL types become GraphQL types (pg_graphql v1.6's mapping, by
// type OID) and how their values cross in both directions.
import type { Catalog, CatalogDomain, CatalogType } from '../../lib/pg-catalog/catalog.ts'
import { descriptionOf, optionalString, parseDirective } from './directives.ts'
import { baseTypeName, columnFieldName, isValidName } from '../../lib/pg-catalog/names.ts'

export type ScalarName =
  | 'ID' | 'Int' | 'Float' | 'String' | 'Boolean' | 'BigInt' | 'BigFloat' | 'Date' | 'Time' | 'Datetime' | 'UUID' | 'JSON' | 'Cursor' | 'Opaque' | 'GeoJSON'

export interface EnumValueModel {
  /** Label in the database. */
  db: string
  /** Value name in GraphQL (the label, or its `mappings` entry). */
  name: string
  /**
   * Set on an unmapped label spelt like a name a mapping gives another label:
   * it is written as itself, but the name means the mapped label (enumsOf).
   */
  shadowed?: true
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

export interface CompositeAttributeModel {
  name: string
  field: string
  type: ValueType
  description: string | undefined
  /** Its place among all the type's attributes (the record's text form lists every one). */
  position: number
}

/** A stand-alone composite type (`create type ... as (...)`), served with `composites`. */
export interface CompositeModel {
  oid: number
  schema: string
  sqlName: string
  /** Object type name, inflected as a table's; `<name>Input` and `<name>Filter` are its input types. */
  name: string
  description: string | undefined
  /** The attributes that are fields, in order. */
  attributes: CompositeAttributeModel[]
  attributeByField: Map<string, CompositeAttributeModel>
  /** How many attributes the type has, fields or not. */
  arity: number
}

/**
 * What a schema's optional additions (SPEC 2.4) let a type resolve to:
 * domains to their base type (`domains`), composite types to objects
 * (`composites`). Empty when neither is on: every type then maps as before.
 */
export interface TypeScope {
  domains?: ReadonlyMap<number, CatalogDomain>
  composites?: ReadonlyMap<number, CompositeModel>
  /** PostGIS's geometry and geography by OID (`postgis`): scalar `GeoJSON`. */
  geo?: ReadonlyMap<number, GeoType>
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
  /** A composite type's value (`composites`): an object of its attributes. */
  composite?: CompositeModel
  /**
   * The value's own type is a domain over `sqlType` (`domains`). A filter
   * compares it cast to `sqlType`: PostgreSQL finds no operator for a domain
   * over an enum, nor for an array of a domain against the base's array.
   */
  domain?: true
  /** A PostGIS geometry or geography (scalar `GeoJSON`, schema `postgis` on). */
  geo?: GeoType
}

export interface GeoType {
  kind: 'geometry' | 'geography'
  /** The extension's schema, where its functions and the bare type are. */
  schema: string
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
  scope: TypeScope = {},
): ValueType | undefined {
  if (scope.domains) {
    const base = domainBaseOf(t, scope.domains)
    if (base) {
      const type = valueTypeOf(base.type, base.sqlType, base.maxChars, enums, { ...scope, domains: undefined })
      return type && { ...type, domain: true }
    }
  }
  const list = t.category === 'A' && t.elem !== 0
  // Arrays of shapes stay Opaque lists, as without `postgis`.
  const geo = list ? undefined : scope.geo?.get(t.oid)
  if (geo) return { scalar: 'GeoJSON', enum: undefined, list, sqlType, oid: t.oid, maxChars: null, geo }
  const composite = list ? undefined : scope.composites?.get(t.oid)
  if (composite) return { scalar: undefined, enum: undefined, list, sqlType, oid: t.oid, maxChars: null, composite }
  const oid = list ? t.elem : t.oid
  const typtype = list ? (t.elemTyptype ?? 'b') : t.typtype
  const enumModel = enums.get(oid)
  if (enumModel) return { scalar: undefined, enum: enumModel, list, sqlType, oid, maxChars }
  const scalar = scalarOf(oid, typtype, list ? sqlType.replace(/\[\]$/, '') : sqlType)
  if (!scalar) return undefined
  return { scalar, enum: undefined, list, sqlType, oid, maxChars }
}

export function typeNameOf(type: ValueType): string {
  return type.enum ? type.enum.name : type.composite ? type.composite.name : type.scalar!
}

export function isOrderable(type: ValueType): boolean {
  // A shape has no order worth sorting by (PostGIS's btree order compares bounding boxes).
  return !type.list && type.scalar !== 'JSON' && type.scalar !== 'GeoJSON' && !type.composite
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

/** A domain's chain followed to its first type that is no domain. */
function domainChainBase(oid: number, domains: ReadonlyMap<number, CatalogDomain>): CatalogDomain['base'] | undefined {
  // A domain cannot be over itself; the bound only guards against a catalogue read mid-change.
  for (let d = domains.get(oid), hops = 0; d && hops < 100; d = domains.get(d.base.oid), hops++) {
    if (d.base.typtype !== 'd') return d.base
  }
  return undefined
}

/**
 * The type a domain stands for (`domains`): its base type, through domains
 * over domains, with the base's typmod (a domain over varchar(5) keeps its 5);
 * an array of a domain is an array of the domain's base. Undefined when `t`
 * involves no domain, or when the base gives no GraphQL type of its own (an
 * array of a domain over an array).
 */
function domainBaseOf(
  t: CatalogType,
  domains: ReadonlyMap<number, CatalogDomain>,
): { type: CatalogType; sqlType: string; maxChars: number | null } | undefined {
  if (t.typtype === 'd') {
    const base = domainChainBase(t.oid, domains)
    return base && { type: base, sqlType: base.typeName, maxChars: base.maxChars }
  }
  if (t.category === 'A' && t.elem !== 0 && t.elemTyptype === 'd') {
    const base = domainChainBase(t.elem, domains)
    if (!base || (base.category === 'A' && base.elem !== 0)) return undefined
    return {
      type: { oid: t.oid, typtype: t.typtype, category: 'A', elem: base.oid, elemTyptype: base.typtype },
      sqlType: `${base.typeName}[]`,
      maxChars: base.maxChars,
    }
  }
  return undefined
}

/** The settings of a served schema that decide how types resolve in it. */
export interface SchemaTypeSettings {
  inflect: boolean
  features: ReadonlySet<string>
}

/**
 * The type scope of each served schema (by OID), and with it the composite
 * types of the served schemas. A composite type's attributes resolve in its
 * own schema's scope; a type whose name (or `<name>Input`, `<name>Filter`) is
 * another type's, or that would have no field, is left out (its columns
 * then stay out, as without `composites`).
 */
export function typeScopesOf(
  catalog: Catalog,
  settingsBySchema: ReadonlyMap<number, SchemaTypeSettings>,
  enums: Map<number, EnumModel>,
): Map<number, TypeScope> {
  const scopes = new Map<number, TypeScope>()
  const anyOn = (feature: string) => [...settingsBySchema.values()].some((s) => s.features.has(feature))
  if (!anyOn('domains') && !anyOn('composites')) return scopes
  const domains = new Map(catalog.domains.map((d) => [d.oid, d]))
  const composites = new Map<number, CompositeModel>()
  for (const [oid, settings] of settingsBySchema) {
    scopes.set(oid, {
      ...(settings.features.has('domains') ? { domains } : {}),
      ...(settings.features.has('composites') ? { composites } : {}),
    })
  }
  if (!anyOn('composites')) return scopes

  const taken = takenTypeNames(catalog, settingsBySchema, enums)
  const pending: [CompositeModel, Catalog['composites'][number]][] = []
  for (const c of catalog.composites) {
    const settings = settingsBySchema.get(c.schemaOid)!
    const d = parseDirective(c.comment)
    const name = baseTypeName(c.name, optionalString(d, 'name'), settings.inflect)
    const names = [name, `${name}Input`, `${name}Filter`]
    if (!isValidName(name) || names.some((n) => taken.has(n))) continue
    for (const n of names) taken.add(n)
    const model: CompositeModel = {
      oid: c.oid, schema: c.schema, sqlName: c.name, name, description: descriptionOf(c.comment, d),
      attributes: [], attributeByField: new Map(), arity: c.attributes.length,
    }
    composites.set(c.oid, model)
    pending.push([model, c])
  }
  // Attributes only once every composite is known: one may hold another.
  for (const [model, c] of pending) {
    const settings = settingsBySchema.get(c.schemaOid)!
    const scope = scopes.get(c.schemaOid)!
    c.attributes.forEach((a, position) => {
      const type = valueTypeOf(a, a.typeName, a.maxChars, enums, scope)
      const ad = parseDirective(a.comment)
      const field = columnFieldName(a.name, optionalString(ad, 'name'), settings.inflect)
      if (!type || !isValidName(field) || model.attributeByField.has(field)) return
      const attribute = { name: a.name, field, type, description: descriptionOf(a.comment, ad), position }
      model.attributes.push(attribute)
      model.attributeByField.set(field, attribute)
    })
  }
  // A type without fields is no GraphQL type: leave it out, and the attributes of others holding it.
  for (let changed = true; changed;) {
    changed = false
    for (const model of composites.values()) {
      const kept = model.attributes.filter((a) => !a.type.composite || composites.has(a.type.composite.oid))
      if (kept.length !== model.attributes.length) {
        model.attributes = kept
        model.attributeByField = new Map(kept.map((a) => [a.field, a]))
      }
      if (kept.length === 0) {
        composites.delete(model.oid)
        changed = true
      }
    }
  }
  return scopes
}

/** Suffixes of the types the schema makes for a table (the last three only with `upsert`). */
export const TABLE_TYPE_SUFFIXES = [
  '', 'Connection', 'Edge', 'Filter', 'OrderBy', 'InsertInput', 'UpdateInput', 'InsertResponse', 'UpdateResponse', 'DeleteResponse',
  'Aggregate', 'SumAggregateResult', 'AvgAggregateResult', 'MinAggregateResult', 'MaxAggregateResult',
  'Constraint', 'UpdateField', 'OnConflict', 'ListRelationFilter',
]

const BUILT_IN_TYPE_NAMES = [
  'ID', 'Int', 'Float', 'String', 'Boolean', 'BigInt', 'BigFloat', 'Date', 'Time', 'Datetime', 'UUID', 'JSON', 'Cursor', 'Opaque', 'GeoJSON',
  'FilterIs', 'OrderByDirection', 'PageInfo', 'Node', 'Query', 'Mutation',
]

export const UPSERT_TYPE_SUFFIXES = ['Constraint', 'UpdateField', 'OnConflict']

/** The names of built-in types and enums, with their filters'. */
export function builtInAndEnumTypeNames(enums: Iterable<EnumModel>): Set<string> {
  const taken = new Set<string>()
  for (const n of BUILT_IN_TYPE_NAMES) taken.add(n).add(`${n}Filter`).add(`${n}ListFilter`)
  for (const e of enums) taken.add(e.name).add(`${e.name}Filter`).add(`${e.name}ListFilter`)
  return taken
}

/** Type names a composite type must not take: built-in ones, tables' (any relation, keyed or not) and enums'. */
function takenTypeNames(catalog: Catalog, settingsBySchema: ReadonlyMap<number, SchemaTypeSettings>, enums: Map<number, EnumModel>): Set<string> {
  const taken = builtInAndEnumTypeNames(enums.values())
  for (const t of catalog.tables) {
    const settings = settingsBySchema.get(t.schemaOid)
    if (!settings) continue
    const name = baseTypeName(t.name, optionalString(parseDirective(t.comment), 'name'), settings.inflect)
    for (const suffix of TABLE_TYPE_SUFFIXES) taken.add(`${name}${suffix}`)
  }
  return taken
}
