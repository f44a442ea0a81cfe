// The reflected model: which tables, columns, relations, enums and functions
// of the catalogue the caller's role gets in its GraphQL schema, under which
// names (pg_graphql v1.6's rules, SPEC 2.3 and 2.4). Both the graphql-js
// schema (validation, introspection) and the SQL planner read this model.
import type { Catalog, CatalogFunction, CatalogFunctionArg, CatalogTable, CatalogType } from './catalog.ts'
import {
  allowlistOf, descriptionOf, enabled, foreignKeysOf, isTrue, limitsOf, mappingsOf, optionalString, optionalStringList, optionalU64,
  parseDirective, type Allowlist, type Directive, type DocumentLimits,
} from './directives.ts'
import { baseTypeName, columnFieldName, functionFieldName, isValidName, lowerFirst, relationFieldName } from './names.ts'
import { builtInAndEnumTypeNames, TABLE_TYPE_SUFFIXES, typeScopesOf, UPSERT_TYPE_SUFFIXES, valueTypeOf, type EnumModel, type EnumValueModel, type GeoType, type TypeScope, type ValueType } from './types.ts'

export const DEFAULT_MAX_ROWS = 30

/**
 * SPEC 2.4's optional additions that a table turns on or off for itself with
 * `{"<name>": {"enabled": true|false}}`, else inherits from its schema's comment.
 */
export const TABLE_FEATURES = ['relationFilters', 'orderByRelated', 'upsert', 'distinctOn', 'enumArrays'] as const
export type TableFeature = (typeof TABLE_FEATURES)[number]

/** The optional additions only a schema's comment turns on: they apply to everything served from it. */
export const SCHEMA_FEATURES = ['domains', 'composites', 'functionShapes', 'postgis', 'explain', 'schemaReport'] as const
export type SchemaFeature = (typeof SCHEMA_FEATURES)[number]

export interface ColumnModel {
  name: string
  field: string
  type: ValueType
  notNull: boolean
  insertable: boolean
  updatable: boolean
  description: string | undefined
}

export interface RelationModel {
  field: string
  /** 'one': a single row of `target`; 'many': a collection of `target`. */
  kind: 'one' | 'many'
  target: TableModel
  /** Columns of the table holding the field, matched pairwise with `targetColumns`. */
  columns: string[]
  targetColumns: string[]
  nonNull: boolean
  /** A constraint guarantees at most one target row per parent row (a real foreign key between tables). */
  unique: boolean
}

export interface FunctionArgModel {
  name: string
  field: string
  type: ValueType
  required: boolean
  defaultValue: string | undefined
  /** An unnamed argument (`functionShapes`): passed by position, as only its position names it. */
  positional?: boolean
}

export type FunctionReturn =
  | { kind: 'scalar'; type: ValueType }
  | { kind: 'row'; table: TableModel }
  | { kind: 'connection'; table: TableModel }

export interface FunctionModel {
  oid: number
  schema: string
  name: string
  field: string
  description: string | undefined
  volatile: boolean
  args: FunctionArgModel[]
  returns: FunctionReturn
  /** A computed field in its table's `<Type>Filter` (`functionShapes`: a scalar result, every argument optional). */
  filterable?: boolean
}

export interface TableModel {
  oid: number
  schema: string
  name: string
  /** Base type name (`Blog`, or the `name` directive). */
  typeName: string
  description: string | undefined
  /** `<typeName>` lower-first: prefix of its root fields. */
  fieldBase: string
  /** The columns that are fields (valid GraphQL names), in table order. */
  columns: ColumnModel[]
  /** The columns a row read selects: the fields' and any primary key column that is not a field. */
  readColumns: ColumnModel[]
  columnByField: Map<string, ColumnModel>
  primaryKey: ColumnModel[]
  relations: RelationModel[]
  computed: FunctionModel[]
  maxRows: number
  totalCount: boolean
  aggregate: boolean
  /** The optional additions on for this table (its comment, else its schema's). */
  features: ReadonlySet<TableFeature>
  /** False when the table's comment says `{"root": {"enabled": false}}`: no Query fields of its own. */
  root: boolean
  /**
   * The primary key and unique constraints an upsert may name (`<Type>Constraint`
   * values): those whose name is a GraphQL enum value, in name order.
   */
  conflictConstraints: string[]
  /** Set when `upsert` is on but left out: one of its type names is another type's (withoutClashingUpserts). */
  upsertClash?: true
  canInsert: boolean
  canUpdate: boolean
  canDelete: boolean
  rls: boolean
  isTable: boolean
}

export interface Model {
  tables: TableModel[]
  tableByTypeName: Map<string, TableModel>
  /** By `schema\0table`, for nodeId lookups. */
  tableBySqlName: Map<string, TableModel>
  enums: EnumModel[]
  queryFunctions: FunctionModel[]
  mutationFunctions: FunctionModel[]
  /** Whether any served schema switches introspection on. */
  introspection: boolean
  /** The served schemas (by name) whose comment switches introspection on: only their part is introspected. */
  introspectedSchemas: ReadonlySet<string>
  validation: boolean
  /** The schema-only additions on, per served schema (by name). */
  schemaFeatures: ReadonlyMap<string, ReadonlySet<SchemaFeature>>
  /** The document limits: the smallest each served schema sets. */
  limits: DocumentLimits | undefined
  /** The first served schema's allowlist (in search path order). */
  allowlist: Allowlist | undefined
}

interface SchemaSettings {
  inflect: boolean
  maxRows: number
  introspection: boolean
  validation: boolean
  tableFeatures: ReadonlySet<TableFeature>
  features: ReadonlySet<SchemaFeature>
  limits: DocumentLimits | undefined
  allowlist: Allowlist | undefined
  /** How types resolve under `domains` and `composites` (types.ts); set once the enums are known. */
  types?: TypeScope
}

interface PendingTable {
  catalog: CatalogTable
  directive: Directive
  settings: SchemaSettings
  model: TableModel
}

export function buildModel(catalog: Catalog): Model {
  const settingsBySchema = schemaSettingsOf(catalog)
  const enumByOid = enumsOf(catalog, settingsBySchema)
  for (const [oid, types] of typeScopesOf(catalog, settingsBySchema, enumByOid)) settingsBySchema.get(oid)!.types = types
  const geo = geoTypesOf(catalog)
  for (const s of settingsBySchema.values()) if (s.features.has('postgis')) s.types = { ...s.types, geo }
  const pending: PendingTable[] = []
  for (const t of catalog.tables) {
    const table = tableOf(t, settingsBySchema.get(t.schemaOid)!, enumByOid)
    if (table) pending.push(table)
  }
  const fields = new FieldNames()
  const links = linksOf(pending)
  // pg_graphql lists a type's fields over its own keys before those over keys that reference it.
  for (const link of links) relateReferenced(link, fields)
  for (const link of links) relateReferencing(link, fields)
  const { queryFunctions, mutationFunctions } = functionsOf(catalog, settingsBySchema, pending, enumByOid, fields)

  const tables = pending.map((p) => p.model)
  withoutClashingUpserts(tables, enumByOid.values())
  const schemaSettings = [...settingsBySchema.values()]
  return {
    tables,
    tableByTypeName: new Map(tables.map((t) => [t.typeName, t])),
    tableBySqlName: new Map(tables.map((t) => [`${t.schema}\0${t.name}`, t])),
    enums: [...enumByOid.values()],
    queryFunctions,
    mutationFunctions,
    introspection: schemaSettings.some((s) => s.introspection),
    introspectedSchemas: new Set(catalog.schemas.filter((s) => settingsBySchema.get(s.oid)!.introspection).map((s) => s.name)),
    validation: schemaSettings.length === 0 || schemaSettings.every((s) => s.validation),
    schemaFeatures: new Map(catalog.schemas.map((s) => [s.name, settingsBySchema.get(s.oid)!.features])),
    limits: smallestLimits(schemaSettings),
    allowlist: schemaSettings.find((s) => s.allowlist !== undefined)?.allowlist,
  }
}

function smallestLimits(settings: SchemaSettings[]): DocumentLimits | undefined {
  const set = settings.map((s) => s.limits).filter((l): l is DocumentLimits => l !== undefined)
  if (set.length === 0) return undefined
  const least = (key: keyof DocumentLimits) => {
    const values = set.map((l) => l[key]).filter((v): v is number => v !== undefined)
    return values.length === 0 ? undefined : Math.min(...values)
  }
  return { fields: least('fields'), rows: least('rows') }
}

/** The additions `directive` turns on, starting from `inherited`: each key it names decides for itself. */
function featuresOf<F extends string>(directive: Directive, names: readonly F[], inherited: ReadonlySet<F>): Set<F> {
  const on = new Set(inherited)
  for (const name of names) {
    const flag = enabled(directive, name)
    if (flag === true) on.add(name)
    else if (flag === false) on.delete(name)
  }
  return on
}

/** PostGIS's geometry and geography by OID, where the extension is installed. */
function geoTypesOf(catalog: Catalog): Map<number, GeoType> {
  return new Map((catalog.postgis ?? []).map((t) => [t.oid, { kind: t.name, schema: t.schema }]))
}

/** Each schema's settings, from its comment directive. */
function schemaSettingsOf(catalog: Catalog): Map<number, SchemaSettings> {
  const settingsBySchema = new Map<number, SchemaSettings>()
  for (const schema of catalog.schemas) {
    const d = parseDirective(schema.comment)
    const validation = d.validation
    settingsBySchema.set(schema.oid, {
      inflect: isTrue(d, 'inflect_names'),
      maxRows: optionalU64(d, 'max_rows') ?? DEFAULT_MAX_ROWS,
      introspection: isTrue(d, 'introspection'),
      validation: !(typeof validation === 'object' && validation !== null && !Array.isArray(validation) && validation.enabled === false),
      tableFeatures: featuresOf(d, TABLE_FEATURES, new Set()),
      features: featuresOf(d, SCHEMA_FEATURES, new Set()),
      limits: limitsOf(d),
      allowlist: allowlistOf(d, schema.name),
    })
  }
  return settingsBySchema
}

/** The enums with valid GraphQL names, by type OID, in catalogue order. */
function enumsOf(catalog: Catalog, settingsBySchema: Map<number, SchemaSettings>): Map<number, EnumModel> {
  const enumByOid = new Map<number, EnumModel>()
  for (const e of catalog.enums) {
    const d = parseDirective(e.comment)
    const settings = settingsBySchema.get(e.schemaOid)!
    const mappings = mappingsOf(d)
    // pg_graphql reads a name back through the mappings first
    // (BiBTreeMap::get_by_right), so a name a mapping gives one label means
    // that label, even where another, unmapped label is spelt the same.
    const mappedNames = new Set(e.labels.flatMap((label) => mappings.get(label) ?? []))
    const values: EnumValueModel[] = e.labels.map((label) => {
      const name = mappings.get(label)
      if (name !== undefined) return { db: label, name }
      return mappedNames.has(label) ? { db: label, name: label, shadowed: true } : { db: label, name: label }
    })
    const model: EnumModel = {
      oid: e.oid,
      schema: e.schema,
      sqlName: e.name,
      name: baseTypeName(e.name, optionalString(d, 'name'), settings.inflect),
      description: descriptionOf(e.comment, d),
      values,
      mapped: mappings.size > 0,
    }
    if (!isValidName(model.name) || values.some((v) => !isValidName(v.name) || ['true', 'false', 'null'].includes(v.name))) continue
    enumByOid.set(e.oid, model)
  }
  return enumByOid
}

/**
 * The selectable columns of a table that have a GraphQL type, whether or not
 * their field name is a valid GraphQL name (only those that are become fields).
 */
function selectableColumnsOf(t: CatalogTable, settings: SchemaSettings, enumByOid: Map<number, EnumModel>): ColumnModel[] {
  const columns: ColumnModel[] = []
  for (const c of t.columns) {
    if (!c.canSelect) continue
    const type = valueTypeOf(c, c.typeName, c.maxChars, enumByOid, settings.types)
    if (!type) continue
    const cd = parseDirective(c.comment)
    const field = columnFieldName(c.name, optionalString(cd, 'name'), settings.inflect)
    columns.push({
      name: c.name,
      field,
      type,
      notNull: c.notNull,
      insertable: c.canInsert && !c.generated && !c.serial,
      updatable: c.canUpdate && !c.generated && !c.serial,
      description: descriptionOf(c.comment, cd),
    })
  }
  return columns
}

/** A table or view with a key (its own, or a `primary_key_columns` directive); undefined when it is left out. */
function tableOf(t: CatalogTable, settings: SchemaSettings, enumByOid: Map<number, EnumModel>): PendingTable | undefined {
  const directive = parseDirective(t.comment)
  const typeName = baseTypeName(t.name, optionalString(directive, 'name'), settings.inflect)
  const selectable = selectableColumnsOf(t, settings, enumByOid)
  const columns = selectable.filter((c) => isValidName(c.field))
  const isTable = t.kind === 'r' || t.kind === 'p'
  const directiveKey = optionalStringList(directive, 'primary_key_columns')
  const keyNames = (isTable ? t.primaryKey : null) ?? directiveKey ?? null
  const maxRows = optionalU64(directive, 'max_rows') ?? settings.maxRows
  // Validated even when the table ends up hidden: a bad directive fails every request.
  foreignKeysOf(directive)
  // As in pg_graphql, a key column whose name is no GraphQL name keeps the table: it is then only behind `nodeId`.
  if (!keyNames || !isValidName(typeName) || selectable.length === 0) return undefined
  const byName = new Map(selectable.map((c) => [c.name, c]))
  const primaryKey = keyNames.map((n) => byName.get(n))
  if (primaryKey.some((c) => c === undefined)) return undefined
  const unnamedKey = primaryKey.filter((c) => !isValidName(c!.field)) as ColumnModel[]
  return {
    catalog: t,
    directive,
    settings,
    model: {
      oid: t.oid,
      schema: t.schema,
      name: t.name,
      typeName,
      description: descriptionOf(t.comment, directive),
      fieldBase: lowerFirst(typeName),
      columns,
      readColumns: unnamedKey.length > 0 ? [...columns, ...unnamedKey] : columns,
      columnByField: new Map(columns.map((c) => [c.field, c])),
      primaryKey: primaryKey as ColumnModel[],
      relations: [],
      computed: [],
      maxRows,
      totalCount: enabled(directive, 'totalCount') === true,
      aggregate: enabled(directive, 'aggregate') === true,
      features: featuresOf(directive, TABLE_FEATURES, settings.tableFeatures),
      root: enabled(directive, 'root') !== false,
      conflictConstraints: t.uniqueConstraints.map((u) => u.name).filter((n) => isValidName(n) && !['true', 'false', 'null'].includes(n)),
      canInsert: t.canInsert,
      canUpdate: t.canUpdate,
      canDelete: t.canDelete,
      rls: t.rls,
      isTable,
    },
  }
}

/** A relation between two tables: a foreign key, or a view's `foreign_keys` directive. */
interface Link {
  /** A foreign key constraint (not a view's `foreign_keys` directive). */
  real: boolean
  local: PendingTable
  columns: string[]
  foreign: PendingTable
  foreignColumns: string[]
  localName: string | undefined
  foreignName: string | undefined
}

/** Real foreign keys, then the `foreign_keys` directives of views, between tables in the model. */
function linksOf(pending: PendingTable[]): Link[] {
  const byOid = new Map(pending.map((p) => [p.catalog.oid, p]))
  const bySqlName = new Map(pending.map((p) => [`${p.catalog.schema}\0${p.catalog.name}`, p]))
  const links: Link[] = []
  for (const p of pending) {
    for (const fk of p.catalog.foreignKeys) {
      const foreign = byOid.get(fk.refTable)
      if (!foreign) continue
      const d = parseDirective(fk.comment)
      links.push({
        real: true, local: p, columns: fk.columns, foreign, foreignColumns: fk.refColumns,
        localName: optionalString(d, 'local_name'), foreignName: optionalString(d, 'foreign_name'),
      })
    }
    for (const fk of foreignKeysOf(p.directive)) {
      const foreign = bySqlName.get(`${fk.foreignSchema}\0${fk.foreignTable}`)
      if (!foreign) continue
      links.push({
        real: false, local: p, columns: fk.localColumns, foreign, foreignColumns: fk.foreignColumns,
        localName: fk.localName, foreignName: fk.foreignName,
      })
    }
  }
  return links
}

/** The field names each table's type already has: relations and computed fields take the first free one. */
class FieldNames {
  readonly #taken = new Map<TableModel, Set<string>>()

  of(t: TableModel): Set<string> {
    let set = this.#taken.get(t)
    if (!set) {
      set = new Set(['nodeId', '__typename', ...t.columns.map((c) => c.field)])
      this.#taken.set(t, set)
    }
    return set
  }

  /** Claims `name` on `t`; false when it is invalid or taken. */
  claim(t: TableModel, name: string): boolean {
    const set = this.of(t)
    if (!isValidName(name) || set.has(name)) return false
    set.add(name)
    return true
  }
}

/** Whether a link's columns are columns (fields) of its two tables, pairwise. */
function linkIsUsable(link: Link): boolean {
  const local = link.local.model
  const foreign = link.foreign.model
  return link.columns.length === link.foreignColumns.length &&
    link.columns.every((n) => local.columns.some((c) => c.name === n)) &&
    link.foreignColumns.every((n) => foreign.columns.some((c) => c.name === n))
}

/** The local side's field: the referenced row. */
function relateReferenced(link: Link, fields: FieldNames): void {
  if (!linkIsUsable(link)) return
  const local = link.local.model
  const foreign = link.foreign.model
  const toOne = relationFieldName(foreign.typeName, link.columns, true, link.foreign.settings.inflect, link.foreignName)
  if (!fields.claim(local, toOne)) return
  const localCols = link.columns.map((n) => local.columns.find((c) => c.name === n)!)
  local.relations.push({
    field: toOne, kind: 'one', target: foreign, columns: link.columns, targetColumns: link.foreignColumns,
    nonNull: localCols.every((c) => c.notNull) && !link.foreign.catalog.rls && foreign.isTable && local.isTable,
    // A foreign key references a primary key or unique constraint.
    unique: link.real && foreign.isTable && local.isTable,
  })
}

/** The referenced side's field: the referencing rows, one row when the key is unique on the local side. */
function relateReferencing(link: Link, fields: FieldNames): void {
  if (!linkIsUsable(link)) return
  const local = link.local.model
  const foreign = link.foreign.model
  const sorted = [...link.columns].sort().join('\0')
  const unique =
    link.local.catalog.uniques.some((u) => [...u].sort().join('\0') === sorted) ||
    [...local.primaryKey.map((c) => c.name)].sort().join('\0') === sorted
  const back = relationFieldName(local.typeName, link.foreignColumns, unique, link.local.settings.inflect, link.localName)
  if (!fields.claim(foreign, back)) return
  foreign.relations.push({
    field: back, kind: unique ? 'one' : 'many', target: local, columns: link.foreignColumns, targetColumns: link.columns, nonNull: false,
    unique: unique && link.real && local.isTable,
  })
}

/**
 * The root fields of functions (query for stable ones, mutation for volatile
 * ones); a function of one table row becomes a computed field of that table.
 */
function functionsOf(
  catalog: Catalog,
  settingsBySchema: Map<number, SchemaSettings>,
  pending: PendingTable[],
  enumByOid: Map<number, EnumModel>,
  fields: FieldNames,
): { queryFunctions: FunctionModel[]; mutationFunctions: FunctionModel[] } {
  const byReltype = new Map(pending.map((p) => [p.catalog.reltype, p]))
  const nameCounts = new Map<string, number>()
  for (const f of catalog.functions) nameCounts.set(f.name, (nameCounts.get(f.name) ?? 0) + 1)
  const queryFunctions: FunctionModel[] = []
  const mutationFunctions: FunctionModel[] = []
  for (const f of catalog.functions) {
    if (!f.canExecute || f.variadic) continue
    const settings = settingsBySchema.get(f.schemaOid)!
    // functionShapes: the enums its signature may use; undefined while the schema keeps pg_graphql's rules.
    const shapes = settings.features.has('functionShapes') ? enumByOid : undefined
    // An overload is left out unless functionShapes is on and its own comment names it apart.
    if (nameCounts.get(f.name)! > 1 && !(shapes && optionalString(parseDirective(f.comment), 'name') !== undefined)) continue
    const d = parseDirective(f.comment)
    const field = functionFieldName(f.name, optionalString(d, 'name'), settings.inflect)
    if (!isValidName(field)) continue
    const returns = returnOf(f, byReltype, enumByOid, shapes !== undefined, settings.types)
    if (!returns) continue
    const inArgs = f.args.filter((a) => INPUT_MODES.has(a.mode))
    const base = { oid: f.oid, schema: f.schema, name: f.name, field, description: descriptionOf(f.comment, d), volatile: f.volatility === 'v', returns }
    const owner = inArgs.length === 1 || (shapes && inArgs.length > 1) ? byReltype.get(inArgs[0]!.oid)?.model : undefined
    if (owner) {
      // functionShapes: the arguments after the row are the field's own.
      const args = inArgs.length === 1 ? [] : functionArgsOf(f, inArgs, settings, byReltype, shapes, 1)
      if (!args || (returns.kind === 'connection' && args.some((a) => CONNECTION_ARGS.includes(a.field)))) continue
      // Filterable when the filter can call it with the row alone: its other arguments have defaults.
      const filterable = shapes !== undefined && returns.kind === 'scalar' && args.every((a) => !a.required)
      if (fields.claim(owner, field)) owner.computed.push({ ...base, args, ...(filterable ? { filterable } : {}) })
      continue
    }
    const args = functionArgsOf(f, inArgs, settings, byReltype, shapes)
    if (!args) continue
    const model: FunctionModel = { ...base, args }
    if (model.returns.kind === 'connection' && args.some((a) => CONNECTION_ARGS.includes(a.field))) continue
    ;(model.volatile ? mutationFunctions : queryFunctions).push(model)
  }
  return { queryFunctions, mutationFunctions }
}

/** Argument modes the caller gives a value for (in, inout); out arguments only shape the result. */
const INPUT_MODES: ReadonlySet<string> = new Set(['i', 'b'])

/** A connection's own arguments: a function returning one cannot have arguments of these names. */
const CONNECTION_ARGS = ['first', 'last', 'before', 'after', 'offset', 'filter', 'orderBy']

/**
 * A function's arguments (from the `from`th input argument on); undefined
 * when one has no name, no usable type or no valid field name (the function
 * is then left out). With functionShapes (`shapes`, the served enums) an
 * unnamed argument is `arg<n>`, n its position as `$n` in the function's
 * body, and enum arguments have their enum's type.
 */
function functionArgsOf(
  f: CatalogFunction,
  inArgs: CatalogFunctionArg[],
  settings: SchemaSettings,
  byReltype: Map<number, PendingTable>,
  shapes?: Map<number, EnumModel>,
  from = 0,
): FunctionArgModel[] | undefined {
  const defaults = argDefaultsOf(f, inArgs)
  const args: FunctionArgModel[] = []
  for (const [i, a] of inArgs.entries()) {
    if (i < from) continue
    const type = argTypeOf(a, shapes, settings.types)
    const name = a.name ?? (shapes ? `arg${i + 1}` : null)
    if (!name || !type || byReltype.has(a.oid)) return undefined
    const field = columnFieldName(name, undefined, settings.inflect)
    if (!isValidName(field)) return undefined
    const d = defaults[i]!
    args.push({ name, field, type, required: d.required, defaultValue: d.required ? undefined : d.value, ...(a.name ? {} : { positional: true }) })
  }
  if (!shapes) return args
  // `arg2` may also be another argument's own name.
  if (new Set(args.map((a) => a.field)).size !== args.length) return undefined
  // Arguments before an unnamed one are passed by position too, so each of them needs a value.
  let lastPositional = -1
  args.forEach((a, i) => { if (a.positional) lastPositional = i })
  return args.map((a, i) => (i < lastPositional && !a.required ? { ...a, required: true, defaultValue: undefined } : a))
}

// Enums, plain or in arrays, are left out of function signatures, as in pg_graphql.
const isEnumish = (t: CatalogType) => t.typtype === 'e' || t.category === 'E' || t.elemTyptype === 'e'

/**
 * The GraphQL type of an argument (any type without a scalar of its own is
 * Opaque); undefined when it has none. An enum (or enum array) argument has
 * one only with functionShapes (`shapes`) and when its enum is served.
 */
function argTypeOf(a: CatalogFunctionArg, shapes?: Map<number, EnumModel>, scope?: TypeScope): ValueType | undefined {
  if (!isEnumish(a)) return valueTypeOf(a, castTypeOf(a), null, NO_ENUMS, scope)
  if (!shapes) return undefined
  const type = valueTypeOf(a, castTypeOf(a), null, shapes, scope)
  return type?.enum ? type : undefined
}

const NO_ENUMS = new Map<number, EnumModel>()

/**
 * The type an argument's value is cast to. format_type of a typmod-less
 * bpchar is `character`, which is char(1) and would cut the value to one
 * character; `bpchar` keeps it whole.
 */
function castTypeOf(a: CatalogFunctionArg): string {
  if (a.oid === BPCHAR_OID) return 'bpchar'
  if (a.oid === BPCHAR_ARRAY_OID) return 'bpchar[]'
  return a.typeName
}

const BPCHAR_OID = 1042
const BPCHAR_ARRAY_OID = 1014

function returnOf(
  f: CatalogFunction,
  byReltype: Map<number, PendingTable>,
  enums: Map<number, EnumModel>,
  shapes: boolean,
  scope?: TypeScope,
): FunctionReturn | undefined {
  const r = f.returnType
  const table = byReltype.get(r.oid)
  if (table) {
    if (f.returnsSet && f.rows !== 1) return { kind: 'connection', table: table.model }
    return { kind: 'row', table: table.model }
  }
  // Enum results are left out, as in pg_graphql, unless functionShapes serves them (a served enum only).
  // A composite result is served as its object type under `composites`.
  const composite = r.relid !== 0 && scope?.composites?.has(r.oid) === true
  if (f.returnsSet || r.typtype === 'p' || (r.relid !== 0 && !composite) || (isEnumish(r) && !shapes)) return undefined
  const type = valueTypeOf(r, r.typeName, null, enums, scope)
  if (!type || (isEnumish(r) && !type.enum)) return undefined
  return { kind: 'scalar', type }
}

/** Whether an argument must be given, and the default introspection shows for it. */
interface ArgDefault {
  required: boolean
  /** JSON text of the GraphQL default value; undefined when none is shown. */
  value: string | undefined
}

/**
 * The defaults of the input arguments, read as pg_graphql reads them: it
 * splits pg_get_expr's list at every comma, so a default with a comma inside
 * (an array, a quoted string) misaligns the list, and then no argument has a
 * default (all are required). A default is shown only when it is a plain
 * literal of int2/int4, bool, float4/float8 or text; any other default (null,
 * an expression) makes the argument optional without a shown default.
 */
function argDefaultsOf(f: CatalogFunction, inArgs: CatalogFunctionArg[]): ArgDefault[] {
  const out: ArgDefault[] = inArgs.map(() => ({ required: true, value: undefined }))
  if (f.nDefaults === 0 || f.defaults === null) return out
  const texts = f.defaults.split(',')
  if (texts.length !== f.nDefaults) return out
  const first = inArgs.length - f.nDefaults
  texts.forEach((text, i) => {
    out[first + i] = { required: false, value: shownDefault(text.trim(), inArgs[first + i]!.oid) }
  })
  return out
}

const INT32 = /^[+-]?\d+$/
const FLOAT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/

const intDefault = (text: string) => {
  const n = Number(text)
  return INT32.test(text) && n >= -(2 ** 31) && n < 2 ** 31 ? String(n) : undefined
}
const boolDefault = (text: string) => (text === 'true' || text === 'false' ? text : undefined)
const floatDefault = (text: string) => (FLOAT.test(text) ? String(Number(text)) : undefined)
// pg_graphql strips commas, then quotes, from both ends of the literal: `'it''s'::text` shows as `it''s`.
const textDefault = (text: string) =>
  text.endsWith('::text') ? JSON.stringify(text.slice(0, -'::text'.length).replace(/^,+|,+$/g, '').replace(/^'+|'+$/g, '')) : undefined

/** By argument type OID (int2, int4, bool, float4, float8, text): the shown default of a default's text. */
const SHOWN_DEFAULTS: Record<number, (text: string) => string | undefined> = {
  21: intDefault, 23: intDefault, 16: boolDefault, 700: floatDefault, 701: floatDefault, 25: textDefault,
}

function shownDefault(text: string, oid: number): string | undefined {
  if (text.startsWith('NULL::')) return undefined
  return SHOWN_DEFAULTS[oid]?.(text)
}

/**
 * upsert's types (`<Type>Constraint`, `<Type>UpdateField`, `<Type>OnConflict`)
 * must not take a name another type has (a table `tag_constraint` beside an
 * upserting `tag`): such a table's insert goes without `onConflict` rather
 * than the whole schema failing to build. The schema report says so.
 */
function withoutClashingUpserts(tables: TableModel[], enums: Iterable<EnumModel>): void {
  const upserting = tables.filter((t) => t.features.has('upsert') && t.conflictConstraints.length > 0)
  if (upserting.length === 0) return
  const counts = new Map<string, number>()
  const add = (name: string) => counts.set(name, (counts.get(name) ?? 0) + 1)
  for (const name of builtInAndEnumTypeNames(enums)) add(name)
  for (const t of tables) {
    for (const suffix of TABLE_TYPE_SUFFIXES) if (!UPSERT_TYPE_SUFFIXES.includes(suffix)) add(`${t.typeName}${suffix}`)
  }
  for (const t of upserting) for (const suffix of UPSERT_TYPE_SUFFIXES) add(`${t.typeName}${suffix}`)
  for (const t of upserting) {
    if (UPSERT_TYPE_SUFFIXES.some((suffix) => counts.get(`${t.typeName}${suffix}`)! > 1)) {
      t.conflictConstraints = []
      t.upsertClash = true
    }
  }
}
