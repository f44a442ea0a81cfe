// The reflected model: which tables, columns, relations, enums and functions
// of the catalogue the caller's role gets in its GraphQL schema, under which
// names (pg_graphql v1.6's rules, SPEC 2.3 and 2.4). Both the graphql-js
// schema (validation, introspection) and the SQL planner read this model.
import type { Catalog, CatalogFunction, CatalogTable } from './catalog.ts'
import {
  descriptionOf, enabled, foreignKeysOf, isTrue, mappingsOf, optionalString, optionalStringList, optionalU64, parseDirective,
  type Directive,
} from './directives.ts'
import { baseTypeName, columnFieldName, functionFieldName, isValidName, lowerFirst, relationFieldName } from './names.ts'
import { valueTypeOf, type EnumModel, type ValueType } from './types.ts'

export const DEFAULT_MAX_ROWS = 30

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
  columns: ColumnModel[]
  columnByField: Map<string, ColumnModel>
  primaryKey: ColumnModel[]
  relations: RelationModel[]
  computed: FunctionModel[]
  maxRows: number
  totalCount: boolean
  aggregate: boolean
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
  introspection: boolean
  validation: boolean
}

interface SchemaSettings {
  inflect: boolean
  maxRows: number
  introspection: boolean
  validation: boolean
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
  const pending: PendingTable[] = []
  for (const t of catalog.tables) {
    const table = tableOf(t, settingsBySchema.get(t.schemaOid)!, enumByOid)
    if (table) pending.push(table)
  }
  const fields = new FieldNames()
  for (const link of linksOf(pending)) relate(link, fields)
  const { queryFunctions, mutationFunctions } = functionsOf(catalog, settingsBySchema, pending, enumByOid, fields)

  const tables = pending.map((p) => p.model)
  const schemaSettings = [...settingsBySchema.values()]
  return {
    tables,
    tableByTypeName: new Map(tables.map((t) => [t.typeName, t])),
    tableBySqlName: new Map(tables.map((t) => [`${t.schema}\0${t.name}`, t])),
    enums: [...enumByOid.values()],
    queryFunctions,
    mutationFunctions,
    introspection: schemaSettings.some((s) => s.introspection),
    validation: schemaSettings.length === 0 || schemaSettings.every((s) => s.validation),
  }
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
    const values = e.labels.map((label) => ({ db: label, name: mappings.get(label) ?? label }))
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

/** The selectable columns of a table that have a GraphQL type and a valid name. */
function columnsOf(t: CatalogTable, settings: SchemaSettings, enumByOid: Map<number, EnumModel>): ColumnModel[] {
  const columns: ColumnModel[] = []
  for (const c of t.columns) {
    if (!c.canSelect) continue
    const type = valueTypeOf(c, c.typeName, c.maxChars, enumByOid)
    if (!type) continue
    const cd = parseDirective(c.comment)
    const field = columnFieldName(c.name, optionalString(cd, 'name'), settings.inflect)
    if (!isValidName(field)) continue
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
  const columns = columnsOf(t, settings, enumByOid)
  const isTable = t.kind === 'r' || t.kind === 'p'
  const directiveKey = optionalStringList(directive, 'primary_key_columns')
  const keyNames = (isTable ? t.primaryKey : null) ?? directiveKey ?? null
  const maxRows = optionalU64(directive, 'max_rows') ?? settings.maxRows
  // Validated even when the table ends up hidden: a bad directive fails every request.
  foreignKeysOf(directive)
  if (!keyNames || !isValidName(typeName) || columns.length === 0) return undefined
  const byName = new Map(columns.map((c) => [c.name, c]))
  const primaryKey = keyNames.map((n) => byName.get(n))
  if (primaryKey.some((c) => c === undefined)) return undefined
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
      columnByField: new Map(columns.map((c) => [c.field, c])),
      primaryKey: primaryKey as ColumnModel[],
      relations: [],
      computed: [],
      maxRows,
      totalCount: enabled(directive, 'totalCount') === true,
      aggregate: enabled(directive, 'aggregate') === true,
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

/** Adds a link's fields: the referenced row on the local side, the referencing rows on the other. */
function relate(link: Link, fields: FieldNames): void {
  const local = link.local.model
  const foreign = link.foreign.model
  const localCols = link.columns.map((n) => local.columns.find((c) => c.name === n))
  const foreignCols = link.foreignColumns.map((n) => foreign.columns.find((c) => c.name === n))
  if (localCols.some((c) => !c) || foreignCols.some((c) => !c) || localCols.length !== foreignCols.length) return
  const toOne = relationFieldName(foreign.typeName, link.columns, true, link.foreign.settings.inflect, link.foreignName)
  if (fields.claim(local, toOne)) {
    local.relations.push({
      field: toOne, kind: 'one', target: foreign, columns: link.columns, targetColumns: link.foreignColumns,
      nonNull: localCols.every((c) => c!.notNull) && !link.foreign.catalog.rls && foreign.isTable && local.isTable,
      // A foreign key references a primary key or unique constraint.
      unique: link.real && foreign.isTable && local.isTable,
    })
  }
  // One referencing row when the key is unique on the local side.
  const sorted = [...link.columns].sort().join('\0')
  const unique =
    link.local.catalog.uniques.some((u) => [...u].sort().join('\0') === sorted) ||
    [...local.primaryKey.map((c) => c.name)].sort().join('\0') === sorted
  const back = relationFieldName(local.typeName, link.foreignColumns, unique, link.local.settings.inflect, link.localName)
  if (fields.claim(foreign, back)) {
    foreign.relations.push({
      field: back, kind: unique ? 'one' : 'many', target: local, columns: link.foreignColumns, targetColumns: link.columns, nonNull: false,
      unique: unique && link.real && local.isTable,
    })
  }
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
    if (!f.canExecute || f.variadic || nameCounts.get(f.name)! > 1) continue
    const settings = settingsBySchema.get(f.schemaOid)!
    const d = parseDirective(f.comment)
    const field = functionFieldName(f.name, optionalString(d, 'name'), settings.inflect)
    if (!isValidName(field)) continue
    const returns = returnOf(f, byReltype, enumByOid)
    if (!returns) continue
    const inArgs = f.args.filter((a) => a.mode === 'i')
    if (inArgs.length !== f.args.length) continue
    const base = { oid: f.oid, schema: f.schema, name: f.name, field, description: descriptionOf(f.comment, d), volatile: f.volatility === 'v', returns }
    const owner = inArgs.length === 1 ? byReltype.get(inArgs[0]!.oid)?.model : undefined
    if (owner) {
      if (fields.claim(owner, field)) owner.computed.push({ ...base, args: [] })
      continue
    }
    const args = functionArgsOf(f, settings, byReltype)
    if (!args) continue
    const model: FunctionModel = { ...base, args }
    if (model.returns.kind === 'connection' && args.some((a) => ['first', 'last', 'before', 'after', 'offset', 'filter', 'orderBy'].includes(a.field))) continue
    ;(model.volatile ? mutationFunctions : queryFunctions).push(model)
  }
  return { queryFunctions, mutationFunctions }
}

/** A function's arguments; undefined when one has no name, no usable type or no valid field name. */
function functionArgsOf(f: CatalogFunction, settings: SchemaSettings, byReltype: Map<number, PendingTable>): FunctionArgModel[] | undefined {
  const args: FunctionArgModel[] = []
  for (const [i, a] of f.args.entries()) {
    const type = a.name ? valueTypeOf(a, a.typeName, null, new Map()) : undefined
    if (!a.name || !type || type.scalar === 'Opaque' || byReltype.has(a.oid)) return undefined
    const argField = columnFieldName(a.name, undefined, settings.inflect)
    if (!isValidName(argField)) return undefined
    const hasDefault = i >= f.args.length - f.nDefaults
    args.push({ name: a.name, field: argField, type, required: !hasDefault, defaultValue: hasDefault ? defaultOf(f, i - (f.args.length - f.nDefaults)) : undefined })
  }
  return args
}

function returnOf(
  f: CatalogFunction,
  byReltype: Map<number, PendingTable>,
  enums: Map<number, EnumModel>,
): FunctionReturn | undefined {
  const r = f.returnType
  const table = byReltype.get(r.oid)
  if (table) {
    if (f.returnsSet && f.rows !== 1) return { kind: 'connection', table: table.model }
    return { kind: 'row', table: table.model }
  }
  if (f.returnsSet || r.typtype === 'p' || r.relid !== 0) return undefined
  const type = valueTypeOf(r, r.typeName, null, enums)
  // Enum results are left out, as in pg_graphql.
  if (!type || type.enum) return undefined
  return { kind: 'scalar', type }
}

/** The i-th default expression (pg_get_expr lists them comma-separated). */
function defaultOf(f: CatalogFunction, index: number): string | undefined {
  if (!f.defaults) return undefined
  const parts = splitTopLevel(f.defaults)
  const raw = parts[index]?.trim()
  if (raw === undefined) return undefined
  const literal = /^'((?:[^']|'')*)'::[\w ."]+$/.exec(raw)
  if (literal) return JSON.stringify(literal[1]!.replaceAll("''", "'"))
  if (/^-?\d+(\.\d+)?$/.test(raw) || raw === 'true' || raw === 'false') return raw
  return undefined
}

function splitTopLevel(text: string): string[] {
  const out: string[] = []
  let depth = 0
  let quoted = false
  let start = 0
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]
    if (ch === "'") quoted = !quoted
    else if (!quoted && ch === '(') depth++
    else if (!quoted && ch === ')') depth--
    else if (!quoted && depth === 0 && ch === ',') {
      out.push(text.slice(start, i))
      start = i + 1
    }
  }
  out.push(text.slice(start))
  return out
}
