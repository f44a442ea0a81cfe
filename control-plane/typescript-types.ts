// A project's database as TypeScript types, in the layout Supabase's
// generator prints (`supabase gen types typescript`, postgres-meta's
// template, which the management API's `/types/typescript` answers):
// `Json`, `Database` with the `__InternalSupabase` marker and one entry per
// schema (Tables with Row, Insert, Update and Relationships; Views;
// Functions with Args and Returns; Enums; CompositeTypes), the helper types
// (`Tables`, `TablesInsert`, `TablesUpdate`, `Enums`, `CompositeTypes`) and
// `Constants`, so code written against Supabase's generated types compiles
// against these, and `createClient<Database>()` types its queries
// (docs/developer-tools.md). The facts come from lib/pg-catalog's catalogue,
// read as the server's admin role (with the base-table keys views show, as
// the data API embeds views), plus the write facts it lacks
// (db/typescript-types.ts); the text is made here, never by running owner code.
import { readCatalog, type Catalog, type CatalogColumn, type CatalogFunction, type CatalogTable, type CatalogType } from '../lib/pg-catalog/catalog.ts'
import { exposedSchemasFromText } from '../lib/pg-catalog/exposed-schemas.ts'
import { isUniqueKey } from '../lib/pg-catalog/relationships.ts'
import { platformErrors } from '../lib/errors.ts'
import type { ControlPlane } from './control-plane.ts'
import { getProject } from './projects.ts'
import { runInProjectDatabase } from './project-database.ts'
import * as db from './db/typescript-types.ts'

/** The PostgREST version the marker names: the data API answers as PostgREST 13 (docs/rest.md), which turns on postgrest-js's 13 features (maxAffected, spreads on to-many). */
export const POSTGREST_VERSION = '13'

export interface TypescriptTypesView {
  types: string
}

/** `--schema` / `included_schemas` as typed: names separated by commas, checked as the exposed schemas are (never the platform's). */
export function includedSchemasFromText(text: string, field = 'included_schemas', label = field): string[] {
  return exposedSchemasFromText(text, field, label)
}

/**
 * The types of the project's `schemas` (its data API's exposed schemas when
 * not given; a listed schema that does not exist is refused, an exposed one
 * not created yet is left out).
 */
export async function generateTypescriptTypes(controlPlane: ControlPlane, ref: string, schemas?: readonly string[]): Promise<TypescriptTypesView> {
  const project = await getProject(controlPlane, ref)
  const wanted = schemas ?? project.restSchemas
  const { catalog, facts } = await runInProjectDatabase(await controlPlane.serverUrl(project.dbServer), project.dbName, async (client) => ({
    catalog: await readCatalog(client, wanted),
    facts: await db.writeFacts(client, wanted),
  }))
  if (schemas !== undefined) {
    const found = new Set(catalog.schemas.map((schema) => schema.name))
    const missing = schemas.filter((name) => !found.has(name))
    if (missing.length > 0) throw platformErrors.invalidArgument(`included_schemas names ${missing.map((name) => `"${name}"`).join(', ')}: project ${ref} has no such schema`, 'included_schemas')
  }
  return { types: typescriptTypes(catalog, facts) }
}

// ---- The printed form: a small document model, printed two spaces a level as prettier leaves Supabase's output.

type Doc = { kind: 'text'; text: string } | { kind: 'object'; fields: Field[] } | { kind: 'tuple'; items: Doc[] } | { kind: 'union'; items: Doc[] } | { kind: 'suffix'; doc: Doc; suffix: string }

interface Field {
  key: string
  /** Printed as written (`[_ in never]`), not as a property name. */
  raw?: boolean
  optional?: boolean
  value: Doc
}

const text = (value: string): Doc => ({ kind: 'text', text: value })
const object = (fields: Field[]): Doc => ({ kind: 'object', fields })
const field = (key: string, value: Doc | string, optional = false): Field => ({ key, value: typeof value === 'string' ? text(value) : value, optional })
/** What the generator prints for an empty group: a mapped type over no keys, so indexing it with any name fails to compile. */
const NOTHING: Field[] = [{ key: '[_ in never]', raw: true, value: text('never') }]

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/
const propertyName = (name: string) => (IDENTIFIER.test(name) ? name : JSON.stringify(name))
const pad = (level: number) => '  '.repeat(level)

/** `doc` at `level`: its first line where the caller is, the others indented; `literal` prints an object literal (trailing commas). */
function print(doc: Doc, level: number, literal = false): string {
  switch (doc.kind) {
    case 'text':
      return doc.text
    case 'suffix':
      return print(doc.doc, level, literal) + doc.suffix
    case 'object':
      if (doc.fields.length === 0) return '{}'
      return `{\n${doc.fields
        .map((f) => `${pad(level + 1)}${f.raw ? f.key : propertyName(f.key)}${f.optional ? '?' : ''}: ${print(f.value, level + 1, literal)}${literal ? ',' : ''}`)
        .join('\n')}\n${pad(level)}}`
    case 'tuple':
      if (doc.items.length === 0) return '[]'
      return `[\n${doc.items.map((item) => `${pad(level + 1)}${print(item, level + 1)},`).join('\n')}\n${pad(level)}]`
    case 'union':
      if (doc.items.length === 1) return print(doc.items[0]!, level)
      return `\n${doc.items.map((item) => `${pad(level + 1)}| ${print(item, level + 2)}`).join('\n')}`
  }
}

// ---- PostgreSQL types as TypeScript's, as postgres-meta maps them.

const BUILTIN: Record<number, string> = {
  16: 'boolean',
  20: 'number',
  21: 'number',
  23: 'number',
  700: 'number',
  701: 'number',
  1700: 'number',
  17: 'string',
  25: 'string',
  1042: 'string',
  1043: 'string',
  1082: 'string',
  1083: 'string',
  1266: 'string',
  1114: 'string',
  1184: 'string',
  2950: 'string',
  114: 'Json',
  3802: 'Json',
  2278: 'undefined',
  2249: 'Record<string, unknown>',
}

/** Extension types postgres-meta names as strings, by their name (their oids differ per database). */
const STRING_BY_NAME = new Set(['citext', 'vector'])

interface Context {
  catalog: Catalog
  schemas: Set<string>
  columnsOf: Map<number, CatalogColumn[]>
}

const index = (schema: string, ...keys: string[]) => `Database[${JSON.stringify(schema)}]${keys.map((key) => `[${JSON.stringify(key)}]`).join('')}`

/** A type named by oid (a column's, an argument's, an element's): its TypeScript type, `unknown` for what has none. */
function tsOfOid(oid: number, typeName: string | undefined, context: Context, depth = 0): string {
  const builtin = BUILTIN[oid]
  if (builtin !== undefined) return builtin
  const { catalog } = context
  const anEnum = catalog.enums.find((e) => e.oid === oid)
  if (anEnum) return context.schemas.has(anEnum.schema) ? index(anEnum.schema, 'Enums', anEnum.name) : anEnum.labels.map((label) => JSON.stringify(label)).join(' | ')
  const composite = catalog.composites.find((c) => c.oid === oid)
  if (composite) return index(composite.schema, 'CompositeTypes', composite.name)
  const relation = catalog.tables.find((t) => t.reltype === oid)
  if (relation) return index(relation.schema, isView(relation) ? 'Views' : 'Tables', relation.name, 'Row')
  const domain = catalog.domains.find((d) => d.oid === oid)
  if (domain && depth < 8) return tsOf(domain.base, context, depth + 1)
  const bare = typeName?.replace(/\(.*\)$/, '').replace(/^.*\./, '').replaceAll('"', '')
  if (bare !== undefined && STRING_BY_NAME.has(bare)) return 'string'
  return 'unknown'
}

/** A type as the catalogue describes it (arrays by their element). */
function tsOf(type: CatalogType & { typeName: string }, context: Context, depth = 0): string {
  if (type.category === 'A' && type.elem !== 0) {
    const element = tsOfOid(type.elem, type.typeName.replace(/\[\]$/, ''), context, depth)
    return element.includes(' | ') ? `(${element})[]` : `${element}[]`
  }
  return tsOfOid(type.oid, type.typeName, context, depth)
}

const isView = (table: CatalogTable) => table.kind === 'v' || table.kind === 'm'
const byName = <T extends { name: string }>(a: T, b: T) => a.name.localeCompare(b.name)
const nullable = (column: CatalogColumn) => !column.notNull

// ---- The parts of one schema.

function rowOf(table: CatalogTable, context: Context): Doc {
  return object((context.columnsOf.get(table.oid) ?? []).map((column) => field(column.name, `${tsOf(column, context)}${nullable(column) ? ' | null' : ''}`)))
}

interface Relationship {
  foreignKeyName: string
  columns: string[]
  isOneToOne: boolean
  referencedRelation: string
  referencedColumns: string[]
}

/**
 * Each relation's relationships, as the generator lists them: a table's
 * foreign keys to a relation of its schema, and those keys again where a
 * view shows either side whole (lib/pg-catalog/view-keys.ts, the keys the
 * data API embeds views by), so `from('a_view').select('author:authors(*)')`
 * types as it answers.
 */
function relationshipsByRelation(catalog: Catalog, byOid: Map<number, CatalogTable>): Map<number, Relationship[]> {
  const found = new Map<number, Relationship[]>()
  const add = (relation: CatalogTable, relationship: Relationship) => {
    // postgrest-js resolves embeds by name within the schema: only relations of the same one.
    const target = catalog.tables.find((t) => t.name === relationship.referencedRelation && t.schema === relation.schema)
    if (target === undefined) return
    found.set(relation.oid, [...(found.get(relation.oid) ?? []), relationship])
  }
  const viewKeys = catalog.viewKeys ?? []
  const viewForeignKeys = new Map((catalog.viewForeignKeys ?? []).map((fk) => [fk.oid, fk]))
  // A view's column showing a base table's column, by the key it shows.
  const shownBy = (kind: 'f' | 'r', constraint: number) =>
    viewKeys.filter((key) => key.kind === kind && key.constraint === constraint).map((key) => ({ view: byOid.get(key.view), columns: key.columns.map(([, viewColumns]) => viewColumns[0]!) }))
  for (const table of catalog.tables) {
    for (const fk of table.foreignKeys) {
      const target = byOid.get(fk.refTable)
      if (target === undefined || target.schema !== table.schema || fk.columns.length !== fk.refColumns.length) continue
      const oneToOne = isUniqueKey(table, fk.columns)
      add(table, { foreignKeyName: fk.name, columns: fk.columns, isOneToOne: oneToOne, referencedRelation: target.name, referencedColumns: fk.refColumns })
      for (const { view, columns } of shownBy('r', fk.oid)) {
        if (view !== undefined) add(table, { foreignKeyName: fk.name, columns: fk.columns, isOneToOne: oneToOne, referencedRelation: view.name, referencedColumns: columns })
      }
    }
  }
  for (const key of viewKeys) {
    if (key.kind !== 'f') continue
    const view = byOid.get(key.view)
    const fk = viewForeignKeys.get(key.constraint)
    const target = fk === undefined ? undefined : byOid.get(fk.refTable)
    if (view === undefined || fk === undefined || target === undefined) continue
    const columns = key.columns.map(([, viewColumns]) => viewColumns[0]!)
    add(view, { foreignKeyName: fk.name, columns, isOneToOne: fk.oneToOne, referencedRelation: target.name, referencedColumns: fk.refColumns })
    for (const shown of shownBy('r', fk.oid)) {
      if (shown.view !== undefined) add(view, { foreignKeyName: fk.name, columns, isOneToOne: fk.oneToOne, referencedRelation: shown.view.name, referencedColumns: shown.columns })
    }
  }
  for (const [oid, list] of found) {
    const unique = new Map(list.map((r) => [JSON.stringify(r), r]))
    found.set(
      oid,
      [...unique.values()].sort((a, b) => a.foreignKeyName.localeCompare(b.foreignKeyName) || a.referencedRelation.localeCompare(b.referencedRelation) || JSON.stringify(a.referencedColumns).localeCompare(JSON.stringify(b.referencedColumns))),
    )
  }
  return found
}

function relationshipsDoc(relationships: Relationship[] | undefined): Doc {
  return {
    kind: 'tuple',
    items: (relationships ?? []).map((r) =>
      object([
        field('foreignKeyName', JSON.stringify(r.foreignKeyName)),
        field('columns', JSON.stringify(r.columns)),
        field('isOneToOne', String(r.isOneToOne)),
        field('referencedRelation', JSON.stringify(r.referencedRelation)),
        field('referencedColumns', JSON.stringify(r.referencedColumns)),
      ]),
    ),
  }
}

function tableEntry(table: CatalogTable, context: Context, facts: Facts, relationships: Map<number, Relationship[]>): Field {
  const columns = context.columnsOf.get(table.oid) ?? []
  const noValue = (column: CatalogColumn) => {
    const fact = facts.columns.get(`${table.oid}:${column.num}`)
    // GENERATED ALWAYS (identity or an expression) takes no value: PostgreSQL refuses one.
    return fact?.identity === 'a' || fact?.generated === 's' || column.generated
  }
  const write = (all: boolean) =>
    object(
      columns.map((column) => {
        if (noValue(column)) return field(column.name, 'never', true)
        const optional = all || nullable(column) || column.hasDefault || column.serial
        return field(column.name, `${tsOf(column, context)}${nullable(column) ? ' | null' : ''}`, optional)
      }),
    )
  return field(table.name, object([field('Row', rowOf(table, context)), field('Insert', write(false)), field('Update', write(true)), field('Relationships', relationshipsDoc(relationships.get(table.oid)))]))
}

function viewEntry(view: CatalogTable, context: Context, facts: Facts, relationships: Map<number, Relationship[]>): Field {
  const columns = context.columnsOf.get(view.oid) ?? []
  const parts: Field[] = [field('Row', rowOf(view, context))]
  if (facts.updatableRelations.has(view.oid)) {
    // An updatable view: every column optional and nullable (PostgreSQL knows no defaults or NOT NULL of a view's), those it cannot write never.
    const write = object(columns.map((column) => (facts.columns.get(`${view.oid}:${column.num}`)?.updatable === false ? field(column.name, 'never', true) : field(column.name, `${tsOf(column, context)} | null`, true))))
    parts.push(field('Insert', write), field('Update', write))
  }
  parts.push(field('Relationships', relationshipsDoc(relationships.get(view.oid))))
  return field(view.name, object(parts))
}

/** Input arguments: those a call passes (PostgREST's: in, inout, variadic). */
const inputArgs = (fn: CatalogFunction) => fn.args.filter((arg) => arg.mode === 'i' || arg.mode === 'b' || arg.mode === 'v')

/** What PostgREST can call by named arguments: every input named, or a single unnamed one (its body). */
function callable(fn: CatalogFunction): boolean {
  if (fn.returnType.typeName === 'trigger' || fn.returnType.typeName === 'event_trigger') return false
  const inputs = inputArgs(fn)
  return inputs.every((arg) => arg.name !== null) || inputs.length === 1
}

function functionOverload(fn: CatalogFunction, context: Context): Doc {
  const inputs = inputArgs(fn)
  const firstDefault = inputs.length - fn.nDefaults
  const args: Doc = inputs.length === 0 ? text('never') : object(inputs.map((arg, i) => field(arg.name ?? '', tsOf(arg, context), i >= firstDefault)))
  const setof = fn.returnsSet ? '[]' : ''
  const fields: Field[] = [field('Args', args)]
  const tableColumns = fn.args.filter((arg) => arg.mode === 't')
  const relation = fn.returnType.relid !== 0 ? context.catalog.tables.find((t) => t.oid === fn.returnType.relid) : undefined
  const composite = fn.returnType.relid !== 0 ? context.catalog.composites.find((c) => c.oid === fn.returnType.oid) : undefined
  if (tableColumns.length > 0) {
    fields.push(field('Returns', { kind: 'suffix', doc: object(tableColumns.map((arg) => field(arg.name ?? '', tsOf(arg, context)))), suffix: setof }))
  } else if (relation) {
    fields.push(field('Returns', { kind: 'suffix', doc: rowOf(relation, context), suffix: setof }))
  } else {
    fields.push(field('Returns', `${tsOf(fn.returnType, context)}${setof}`))
  }
  const target = relation?.name ?? composite?.name
  if (target !== undefined) {
    // postgrest-js reads SetofOptions to type rpc() results as the relation's rows (and to embed from them).
    const only = inputs.length === 1 ? context.catalog.tables.find((t) => t.reltype === inputs[0]!.oid) ?? context.catalog.composites.find((c) => c.oid === inputs[0]!.oid) : undefined
    fields.push(
      field(
        'SetofOptions',
        object([field('from', JSON.stringify(only?.name ?? '*')), field('to', JSON.stringify(target)), field('isOneToOne', String(!fn.returnsSet)), field('isSetofReturn', String(fn.returnsSet))]),
      ),
    )
  }
  return object(fields)
}

interface Facts {
  columns: Map<string, db.ColumnWriteFacts>
  updatableRelations: Set<number>
}

function schemaEntry(schema: string, context: Context, facts: Facts, relationships: Map<number, Relationship[]>): Field {
  const { catalog } = context
  const relations = catalog.tables.filter((t) => t.schema === schema).sort(byName)
  const tables = relations.filter((t) => !isView(t)).map((t) => tableEntry(t, context, facts, relationships))
  const views = relations.filter(isView).map((v) => viewEntry(v, context, facts, relationships))
  const functions = new Map<string, CatalogFunction[]>()
  for (const fn of catalog.functions.filter((f) => f.schema === schema && callable(f)).sort(byName)) functions.set(fn.name, [...(functions.get(fn.name) ?? []), fn])
  const functionFields = [...functions].map(([name, overloads]) => {
    const docs = overloads.map((fn) => functionOverload(fn, context)).sort((a, b) => print(a, 0).localeCompare(print(b, 0)))
    return field(name, { kind: 'union', items: docs })
  })
  const enums = catalog.enums.filter((e) => e.schema === schema).sort(byName)
  const composites = catalog.composites.filter((c) => c.schema === schema).sort(byName)
  const group = (fields: Field[]) => object(fields.length === 0 ? NOTHING : fields)
  return field(
    schema,
    object([
      field('Tables', group(tables)),
      field('Views', group(views)),
      field('Functions', group(functionFields)),
      field('Enums', group(enums.map((e) => field(e.name, e.labels.map((label) => JSON.stringify(label)).join(' | '))))),
      field('CompositeTypes', group(composites.map((c) => field(c.name, object(c.attributes.map((a) => field(a.name, `${tsOf(a, context)} | null`))))))),
    ]),
  )
}

/** The whole text, from a catalogue read of the schemas to print and their write facts. */
export function typescriptTypes(catalog: Catalog, writeFacts: Awaited<ReturnType<typeof db.writeFacts>>): string {
  const schemas = catalog.schemas.map((schema) => schema.name).sort((a, b) => a.localeCompare(b))
  const columnsOf = new Map(catalog.tables.map((table) => [table.oid, [...table.columns].sort(byName)]))
  const context: Context = { catalog, schemas: new Set(schemas), columnsOf }
  const facts: Facts = {
    columns: new Map(writeFacts.columns.map((column) => [`${column.relid}:${column.num}`, column])),
    updatableRelations: new Set(writeFacts.relations.filter((relation) => relation.updatable).map((relation) => relation.relid)),
  }
  const relationships = relationshipsByRelation(catalog, new Map(catalog.tables.map((table) => [table.oid, table])))
  const database = object([
    field('__InternalSupabase', object([field('PostgrestVersion', JSON.stringify(POSTGREST_VERSION))])),
    ...schemas.map((schema) => schemaEntry(schema, context, facts, relationships)),
  ])
  const databaseText = print(database, 0).replace(
    '{\n  __InternalSupabase',
    "{\n  // Allows to automatically instantiate createClient with right options\n  // instead of createClient<Database, { PostgrestVersion: 'XX' }>(URL, KEY)\n  __InternalSupabase",
  )
  const constants = object(
    schemas.map((schema) =>
      field(schema, object([field('Enums', object(catalog.enums.filter((e) => e.schema === schema).sort(byName).map((e) => field(e.name, `[${e.labels.map((label) => JSON.stringify(label)).join(', ')}]`))))])),
    ),
  )
  const defaultSchema = schemas.includes('public') ? 'public' : (schemas[0] ?? 'public')
  return [
    'export type Json =\n  | string\n  | number\n  | boolean\n  | null\n  | { [key: string]: Json | undefined }\n  | Json[]',
    `export type Database = ${databaseText}`,
    helperTypes(defaultSchema),
    `export const Constants = ${print(constants, 0, true)} as const`,
  ].join('\n\n') + '\n'
}

/**
 * The helper types, as the generator prints them: `Tables<'posts'>` (or
 * `Tables<{ schema: 'api' }, 'posts'>`) for a row, `TablesInsert`,
 * `TablesUpdate`, `Enums`, `CompositeTypes`, over the schemas without the marker.
 */
function helperTypes(defaultSchema: string): string {
  const S = 'DatabaseWithoutInternals'
  const O = (name: string) => `${name}NameOrOptions`
  const picker = (opts: string, nameParam: string, defaultKeys: string, keysOf: (schema: string) => string) =>
    `  ${opts} extends\n    | ${defaultKeys}\n    | { schema: keyof ${S} },\n  ${nameParam} extends ${opts} extends {\n    schema: keyof ${S}\n  }\n    ? ${keysOf(`${S}[${opts}["schema"]]`)}\n    : never = never,`
  const rowLike = (name: string, groups: string, part: string, letter: string) => {
    const opts = O('DefaultSchemaTable')
    const inSchema = (schema: string) => (groups === 'both' ? (schema === 'DefaultSchema' ? `(${schema}["Tables"] & ${schema}["Views"])` : `(${schema}["Tables"] &\n        ${schema}["Views"])`) : `${schema}["Tables"]`)
    const keys = (schema: string) => (groups === 'both' ? `keyof ${inSchema(schema)}` : `keyof ${schema}["Tables"]`)
    return `export type ${name}<\n${picker(opts, 'TableName', keys('DefaultSchema'), keys)}\n> = ${opts} extends {\n  schema: keyof ${S}\n}\n  ? ${inSchema(`${S}[${opts}["schema"]]`)}[TableName] extends {\n      ${part}: infer ${letter}\n    }\n    ? ${letter}\n    : never\n  : ${opts} extends ${keys('DefaultSchema')}\n    ? ${inSchema('DefaultSchema')}[${opts}] extends {\n        ${part}: infer ${letter}\n      }\n      ? ${letter}\n      : never\n    : never`
  }
  const named = (name: string, opts: string, nameParam: string, group: string) =>
    `export type ${name}<\n${picker(opts, nameParam, `keyof DefaultSchema["${group}"]`, (schema) => `keyof ${schema}["${group}"]`)}\n> = ${opts} extends {\n  schema: keyof ${S}\n}\n  ? ${S}[${opts}["schema"]]["${group}"][${nameParam}]\n  : ${opts} extends keyof DefaultSchema["${group}"]\n    ? DefaultSchema["${group}"][${opts}]\n    : never`
  return [
    `type ${S} = Omit<Database, "__InternalSupabase">`,
    `type DefaultSchema = ${S}[Extract<keyof Database, ${JSON.stringify(defaultSchema)}>]`,
    rowLike('Tables', 'both', 'Row', 'R'),
    rowLike('TablesInsert', 'tables', 'Insert', 'I'),
    rowLike('TablesUpdate', 'tables', 'Update', 'U'),
    named('Enums', 'DefaultSchemaEnumNameOrOptions', 'EnumName', 'Enums'),
    named('CompositeTypes', 'PublicCompositeTypeNameOrOptions', 'CompositeTypeName', 'CompositeTypes'),
  ].join('\n\n')
}
