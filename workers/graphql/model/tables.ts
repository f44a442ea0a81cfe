// The served tables and views: a table with a key (its own, or a
// `primary_key_columns` directive) and a column of a supported type, with its
// columns, per-table settings and upsert's constraint names.
import type { Catalog, CatalogTable } from '../../../lib/pg-catalog/catalog.ts'
import { baseTypeName, columnFieldName, isValidName, lowerFirst } from '../../../lib/pg-catalog/names.ts'
import { descriptionOf, enabled, foreignKeysOf, optionalString, optionalStringList, optionalU64, parseDirective } from '../directives.ts'
import { builtInAndEnumTypeNames, TABLE_TYPE_SUFFIXES, UPSERT_TYPE_SUFFIXES, valueTypeOf, type EnumModel } from '../types.ts'
import { featuresOf, type PendingTable, type SchemaSettings } from './settings.ts'
import { TABLE_FEATURES, type ColumnModel, type TableModel } from './shapes.ts'

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

/**
 * A table or view with a key (its own, or a `primary_key_columns` directive);
 * undefined when it is left out. With `keyless`, a view without a key is kept
 * too, as the row type of a computed field returning one of its rows (see
 * keylessViewsOf).
 */
export function tableOf(t: CatalogTable, settings: SchemaSettings, enumByOid: Map<number, EnumModel>, keyless = false): PendingTable | undefined {
  const directive = parseDirective(t.comment)
  const typeName = baseTypeName(t.name, optionalString(directive, 'name'), settings.inflect)
  const selectable = selectableColumnsOf(t, settings, enumByOid)
  const columns = selectable.filter((c) => isValidName(c.field))
  const isTable = t.kind === 'r' || t.kind === 'p'
  const directiveKey = optionalStringList(directive, 'primary_key_columns')
  const keyNames = (isTable ? t.primaryKey : null) ?? directiveKey ?? (keyless && !isTable ? [] : null)
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
      // A column-level grant is enough, as in pg_graphql (any column insertable, or updatable): the
      // input then holds the granted columns only (ColumnModel insertable, updatable).
      canInsert: t.canInsert || t.columns.some((c) => c.canInsert),
      canUpdate: t.canUpdate || t.columns.some((c) => c.canUpdate),
      canDelete: t.canDelete,
      rls: t.rls,
      isTable,
      ...(keyNames.length === 0 ? { keyless: true as const, root: false, canInsert: false, canUpdate: false, canDelete: false } : {}),
    },
  }
}

/**
 * The views without a key whose rows a computed field returns one of (`returns
 * v` or `setof v rows 1`), by row type. Such a view is no collection and no
 * Node (nothing identifies its rows), but the computed field gives it an object
 * type of its columns, and the field is a nullable object of it.
 */
export function keylessViewsOf(
  catalog: Catalog,
  keyed: ReadonlyMap<number, PendingTable>,
  settingsBySchema: Map<number, SchemaSettings>,
  enumByOid: Map<number, EnumModel>,
): Map<number, PendingTable> {
  const returned = new Set<number>()
  for (const f of catalog.functions) {
    const first = f.args.find((a) => a.mode === 'i' || a.mode === 'b')
    if (first && keyed.has(first.oid) && (!f.returnsSet || f.rows === 1)) returned.add(f.returnType.oid)
  }
  const views = new Map<number, PendingTable>()
  for (const t of catalog.tables) {
    if (!returned.has(t.reltype) || keyed.has(t.reltype) || t.kind === 'r' || t.kind === 'p') continue
    const view = tableOf(t, settingsBySchema.get(t.schemaOid)!, enumByOid, true)
    if (view?.model.keyless) views.set(t.reltype, view)
  }
  return views
}

/**
 * upsert's types (`<Type>Constraint`, `<Type>UpdateField`, `<Type>OnConflict`)
 * must not take a name another type has (a table `tag_constraint` beside an
 * upserting `tag`): such a table's insert goes without `onConflict` rather
 * than the whole schema failing to build. The schema report says so.
 */
export function withoutClashingUpserts(tables: TableModel[], enums: Iterable<EnumModel>): void {
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
