// The schema's `schemaReport` (SPEC 2.4): with the request extension
// `schemaReport: true`, every table, view and function of each served schema
// whose comment turns the report on, whether the caller's GraphQL schema has
// it and, if not, why. The model decides what is in (so the report never
// disagrees with the schema); the reasons retrace the model's rules in its
// order and name the first that applies. Read as the caller, in the
// request's transaction, from the catalogue the schema was built from (one
// more catalogue query: this is a development aid, asked for, never cached).
//
// Shape (under `extensions.schemaReport`):
//   {"schemas": ["public"],
//    "tables": [{"schema", "name", "kind", "inSchema": true, "type": "Blog",
//                "leftOut"?: [{"constraint", "field", "reason"}], "upsert"?: "<why upsert is left out>"},
//               {"schema", "name", "kind", "inSchema": false, "reason": "no primary key"},
//               {"schema", "name", "kind", "inSchema": true, "type", "reason": "no primary key: only the type of a computed field ..."}],
//    "functions": [{"schema", "name", "signature", "inSchema": true, "field", "on": "Query" | "Mutation" | "<Type>"},
//                  {"schema", "name", "signature", "inSchema": false, "reason": "overloaded function"}]}
// `leftOut` lists a table's foreign keys (in either direction) that give its
// type no field, e.g. two relations wanting the same field name.
import type pg from 'pg'
import { readCatalog, type Catalog, type CatalogForeignKey, type CatalogFunction, type CatalogTable } from '../../lib/pg-catalog/catalog.ts'
import { isTrue, optionalString, optionalStringList, parseDirective } from './directives.ts'
import type { Model, TableModel } from './model/index.ts'
import { overloadedFunctions } from './model/overloads.ts'
import { baseTypeName, functionFieldName, isValidName, relationFieldName } from '../../lib/pg-catalog/names.ts'

export const REASONS = {
  noPrimaryKey: 'no primary key',
  unusableName: 'unusable name',
  noGrant: 'no grant',
  noGrantOnKey: 'no grant on a primary key column',
  noUsableColumn: 'no column of a supported type',
  overloaded: 'overloaded function',
  sharedName: 'two relations sharing a field name',
  variadic: 'variadic function',
  unnamedArgument: 'unnamed argument',
  unsupportedSignature: 'unsupported argument or result type',
  keyNotInSchema: 'a key column is not in the schema',
  nameTaken: 'its field name is taken by another field of the type',
  keylessRow: 'no primary key: only the type of a computed field returning one of its rows, without a collection',
  upsertNamesTaken: 'upsert left out: a type name it needs (<Type>Constraint, <Type>UpdateField or <Type>OnConflict) is taken by another type',
} as const

export interface TableReport {
  schema: string
  name: string
  kind: string
  inSchema: boolean
  type?: string
  reason?: string
  leftOut?: { constraint: string; field: string; reason: string }[]
  /** Why the table's insert has no `onConflict` though `upsert` is on. */
  upsert?: string
}

export interface FunctionReport {
  schema: string
  name: string
  signature: string
  inSchema: boolean
  field?: string
  on?: string
  reason?: string
}

export interface SchemaReport {
  schemas: string[]
  tables: TableReport[]
  functions: FunctionReport[]
}

const KINDS: Record<string, string> = { r: 'table', p: 'partitioned table', v: 'view', m: 'materialized view', f: 'foreign table' }

/** The schemas whose comment turns the report on; none: the report is off. */
export function reportedSchemas(model: Model): string[] {
  return [...model.schemaFeatures].filter(([, on]) => on.has('schemaReport')).map(([name]) => name)
}

export async function schemaReport(client: pg.ClientBase, model: Model, schemas: string[]): Promise<SchemaReport> {
  return reportOf(await readCatalog(client), model, new Set(schemas))
}

export function reportOf(catalog: Catalog, model: Model, schemas: ReadonlySet<string>): SchemaReport {
  const inflect = new Map(catalog.schemas.map((s) => [s.oid, isTrue(parseDirective(s.comment), 'inflect_names')]))
  const modelOf = new Map<number, TableModel>(model.tables.map((t) => [t.oid, t]))
  // Views without a key that a served computed field returns a row of: a type, though no table of the model.
  const keyless = new Map<number, TableModel>()
  for (const t of model.tables) for (const f of t.computed) if (f.returns.kind === 'row' && f.returns.table.keyless) keyless.set(f.returns.table.oid, f.returns.table)
  const tables: TableReport[] = []
  for (const t of catalog.tables) {
    if (!schemas.has(t.schema)) continue
    const base = { schema: t.schema, name: t.name, kind: KINDS[t.kind] ?? t.kind }
    const m = modelOf.get(t.oid)
    const row = keyless.get(t.oid)
    if (row) {
      tables.push({ ...base, inSchema: true, type: row.typeName, reason: REASONS.keylessRow })
      continue
    }
    if (!m) {
      tables.push({ ...base, inSchema: false, reason: tableReason(t, inflect.get(t.schemaOid)!) })
      continue
    }
    const leftOut = leftOutRelations(catalog, t, m, modelOf, inflect)
    tables.push({
      ...base, inSchema: true, type: m.typeName,
      ...(leftOut.length > 0 ? { leftOut } : {}),
      ...(m.upsertClash ? { upsert: REASONS.upsertNamesTaken } : {}),
    })
  }

  const served = new Map<number, { field: string; on: string }>()
  for (const f of model.queryFunctions) served.set(f.oid, { field: f.field, on: 'Query' })
  for (const f of model.mutationFunctions) served.set(f.oid, { field: f.field, on: 'Mutation' })
  for (const t of model.tables) for (const f of t.computed) served.set(f.oid, { field: f.field, on: t.typeName })
  const byReltype = new Map(catalog.tables.filter((t) => modelOf.has(t.oid)).map((t) => [t.reltype, modelOf.get(t.oid)!]))
  const overloaded = overloadedFunctions(catalog.functions, new Set(byReltype.keys()))
  const ownerOf = (f: CatalogFunction) => {
    const inArgs = f.args.filter((a) => a.mode === 'i' || a.mode === 'b')
    return inArgs.length === 1 ? byReltype.get(inArgs[0]!.oid) : undefined
  }
  const functions: FunctionReport[] = []
  for (const f of catalog.functions) {
    if (!schemas.has(f.schema)) continue
    const base = { schema: f.schema, name: f.name, signature: signatureOf(f) }
    const found = served.get(f.oid)
    if (found) functions.push({ ...base, inSchema: true, ...found })
    else functions.push({ ...base, inSchema: false, reason: functionReason(f, overloaded, inflect.get(f.schemaOid)!, ownerOf(f)) })
  }
  return { schemas: [...schemas], tables, functions }
}

/** Why the model left a table or view out: its rules (model/tables.ts tableOf), in their order. */
function tableReason(t: CatalogTable, inflect: boolean): string {
  const directive = parseDirective(t.comment)
  const isTable = t.kind === 'r' || t.kind === 'p'
  const key = (isTable ? t.primaryKey : null) ?? optionalStringList(directive, 'primary_key_columns') ?? null
  if (!key) return REASONS.noPrimaryKey
  if (!isValidName(baseTypeName(t.name, optionalString(directive, 'name'), inflect))) return REASONS.unusableName
  if (!t.columns.some((c) => c.canSelect)) return REASONS.noGrant
  const byName = new Map(t.columns.map((c) => [c.name, c]))
  if (key.some((n) => byName.get(n)?.canSelect !== true)) return REASONS.noGrantOnKey
  return REASONS.noUsableColumn
}

/** Why the model left a function out (model/functions.ts functionsOf), in its order. */
function functionReason(f: CatalogFunction, overloaded: ReadonlySet<number>, inflect: boolean, owner: TableModel | undefined): string {
  if (!f.canExecute) return REASONS.noGrant
  if (f.variadic) return REASONS.variadic
  // Overloads clash by name across the served schemas, as in the model.
  if (overloaded.has(f.oid)) return REASONS.overloaded
  const field = functionFieldName(f.name, optionalString(parseDirective(f.comment), 'name'), inflect)
  if (!isValidName(field)) return REASONS.unusableName
  // A computed field whose name another computed field or nodeId has (it takes a column's or a relation's: model/field-names.ts).
  if (owner && (owner.computed.some((c) => c.field === field) || field === 'nodeId')) return REASONS.nameTaken
  const inArgs = f.args.filter((a) => a.mode === 'i' || a.mode === 'b')
  if (inArgs.length > 1 && inArgs.some((a) => !a.name)) return REASONS.unnamedArgument
  return REASONS.unsupportedSignature
}

function signatureOf(f: CatalogFunction): string {
  const args = f.args.filter((a) => a.mode !== 'o' && a.mode !== 't').map((a) => (a.name ? `${a.name} ${a.typeName}` : a.typeName))
  return `${f.name}(${args.join(', ')})`
}

const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i])
const sameSet = (a: readonly string[], b: readonly string[]) => sameList([...a].sort(), [...b].sort())

/**
 * The foreign keys touching `t` (its own, and those of tables referencing it)
 * that give its type no field, and why: pg_graphql's relations that
 * the model could not place (names from lib/pg-catalog/names.ts, as the model asks for them).
 */
function leftOutRelations(
  catalog: Catalog,
  t: CatalogTable,
  m: TableModel,
  modelOf: Map<number, TableModel>,
  inflect: Map<number, boolean>,
): { constraint: string; field: string; reason: string }[] {
  const out: { constraint: string; field: string; reason: string }[] = []
  const usable = (local: TableModel, fk: CatalogForeignKey, foreign: TableModel) =>
    fk.columns.every((n) => local.columns.some((c) => c.name === n)) && fk.refColumns.every((n) => foreign.columns.some((c) => c.name === n))
  const why = (field: string, ok: boolean) =>
    !ok ? REASONS.keyNotInSchema
      : !isValidName(field) ? REASONS.unusableName
      // A computed field answers under the name (model/field-names.ts).
      : m.computed.some((c) => c.field === field) ? REASONS.nameTaken
      : REASONS.sharedName
  // Its own foreign keys: the referenced row.
  for (const fk of t.foreignKeys) {
    const foreign = modelOf.get(fk.refTable)
    if (!foreign) continue
    const has = m.relations.some((r) => r.target === foreign && sameList(r.columns, fk.columns) && sameList(r.targetColumns, fk.refColumns))
    if (has) continue
    const foreignCatalog = catalog.tables.find((c) => c.oid === fk.refTable)!
    const field = relationFieldName(foreign.typeName, fk.columns, true, inflect.get(foreignCatalog.schemaOid)!, optionalString(parseDirective(fk.comment), 'foreign_name'))
    out.push({ constraint: fk.name, field, reason: why(field, usable(m, fk, foreign)) })
  }
  // Foreign keys referencing it: the referencing rows.
  for (const other of catalog.tables) {
    const local = modelOf.get(other.oid)
    if (!local) continue
    for (const fk of other.foreignKeys) {
      if (fk.refTable !== t.oid) continue
      const has = m.relations.some((r) => r.target === local && sameList(r.columns, fk.refColumns) && sameList(r.targetColumns, fk.columns))
      if (has) continue
      const unique = other.uniques.some((u) => sameSet(u, fk.columns)) || sameSet(local.primaryKey.map((c) => c.name), fk.columns)
      const field = relationFieldName(local.typeName, fk.refColumns, unique, inflect.get(other.schemaOid)!, optionalString(parseDirective(fk.comment), 'local_name'))
      out.push({ constraint: fk.name, field, reason: why(field, usable(local, fk, m)) })
    }
  }
  return out
}
