// What the data API knows of a project's database, built from the one
// catalogue query shared with GraphQL (lib/pg-catalog/catalog.ts), read for
// the project's exposed schemas (PostgREST's `db-schemas`, the first the
// default: lib/pg-catalog/exposed-schemas.ts), and cached by the shared key
// (server, database, schema version, role, and the exposed schemas in place of
// the search path: lib/pg-catalog/schema-version.ts), so a DDL or a change of
// the list is followed on the next request.
import type pg from 'pg'
import { readCatalog, type CatalogFunction, type CatalogTable } from '../../../lib/pg-catalog/catalog.ts'
import { VersionedCache, type Meta } from '../../../lib/pg-catalog/schema-version.ts'
import { relationshipsOf, type Relationship } from './relationships.ts'
import { isCallable } from './routines.ts'
import { viewPrimaryKeys, viewSides } from './view-keys.ts'

export interface RestModel {
  /** Exposed schemas, the default first (also those not created yet: they serve nothing). */
  schemas: readonly string[]
  /** Tables, views, materialized views and foreign tables by `schema\0name` (a view with the primary key it shows: view-keys.ts). */
  tables: Map<string, CatalogTable>
  /** Functions by `schema\0name` (overloads together): those PostgREST's schema cache holds (routines.ts `isCallable`). */
  functions: Map<string, CatalogFunction[]>
  /** Relationships for embedding, by the origin table's oid (relationships.ts). */
  relationships: Map<number, Relationship[]>
  /** Enum labels by the type's oid, and the exposed schemas' comments: for the OpenAPI description (openapi.ts). */
  enums: Map<number, string[]>
  schemaComments: Map<string, string | null>
  /** The exposed schemas that exist and the role may use (USAGE): the OpenAPI description offers nothing of the others. */
  usable: ReadonlySet<string>
}

export function buildModel(catalog: Awaited<ReturnType<typeof readCatalog>>, exposed: readonly string[]): RestModel {
  // A view has the primary key it shows of its base table, as in PostgREST (PUT, Location, embedding, OpenAPI).
  const viewKeys = catalog.viewKeys ?? []
  const keyed = viewPrimaryKeys(viewKeys)
  const relations = catalog.tables.map((t) => (keyed.has(t.oid) && t.primaryKey === null ? { ...t, primaryKey: keyed.get(t.oid)! } : t))
  const tables = new Map<string, CatalogTable>()
  for (const table of relations) tables.set(`${table.schema}\0${table.name}`, table)
  const functions = new Map<string, CatalogFunction[]>()
  for (const fn of catalog.functions) {
    if (!isCallable(fn)) continue
    const key = `${fn.schema}\0${fn.name}`
    const list = functions.get(key)
    if (list) list.push(fn)
    else functions.set(key, [fn])
  }
  return {
    schemas: exposed,
    tables,
    functions,
    relationships: relationshipsOf(relations, viewSides(viewKeys, new Map(relations.map((t) => [t.oid, t]))), catalog.viewForeignKeys ?? [], catalog.functions),
    enums: new Map(catalog.enums.map((e) => [e.oid, e.labels])),
    schemaComments: new Map(catalog.schemas.map((s) => [s.name, s.comment])),
    usable: new Set(catalog.schemas.filter((s) => s.usable).map((s) => s.name)),
  }
}

/** The table of a row type (a function returning `setof t`), by its type's oid. */
export function tableByType(model: RestModel, typeOid: number): CatalogTable | undefined {
  for (const table of model.tables.values()) if (table.reltype === typeOid) return table
  return undefined
}

/** The exposed schemas a key stands for: answer.ts reads them into `search_path` (metaColumns' `served`). */
export const exposedOf = (meta: Pick<Meta, 'search_path'>): string[] => JSON.parse(meta.search_path) as string[]

export class ModelCache extends VersionedCache<RestModel> {
  constructor(max = 200) {
    super(async (client: pg.ClientBase, meta: Meta) => {
      const exposed = exposedOf(meta)
      return buildModel(await readCatalog(client, exposed), exposed)
    }, max)
  }
}
