// What the data API knows of a project's database, built from the one
// catalogue query shared with GraphQL (lib/pg-catalog/catalog.ts) and cached
// by the shared key (server, database, schema version, role, search path:
// lib/pg-catalog/schema-version.ts), so a DDL is followed on the next request.
// The exposed schemas are those on the role's search path (public for the API
// roles), the first one the default, as PostgREST's `db-schemas`.
import type pg from 'pg'
import { readCatalog, type CatalogFunction, type CatalogTable } from '../../lib/pg-catalog/catalog.ts'
import { VersionedCache } from '../../lib/pg-catalog/schema-version.ts'
import { relationshipsOf, type Relationship } from './relationships.ts'

export interface RestModel {
  /** Exposed schemas, the default first. */
  schemas: string[]
  /** Tables, views, materialized views and foreign tables by `schema\0name`. */
  tables: Map<string, CatalogTable>
  /** Functions by `schema\0name` (overloads together). */
  functions: Map<string, CatalogFunction[]>
  /** Relationships for embedding, by the origin table's oid (relationships.ts). */
  relationships: Map<number, Relationship[]>
  /** Enum labels by the type's oid, and the exposed schemas' comments: for the OpenAPI description (openapi.ts). */
  enums: Map<number, string[]>
  schemaComments: Map<string, string | null>
}

export function buildModel(catalog: Awaited<ReturnType<typeof readCatalog>>): RestModel {
  const tables = new Map<string, CatalogTable>()
  for (const table of catalog.tables) tables.set(`${table.schema}\0${table.name}`, table)
  const functions = new Map<string, CatalogFunction[]>()
  for (const fn of catalog.functions) {
    const key = `${fn.schema}\0${fn.name}`
    const list = functions.get(key)
    if (list) list.push(fn)
    else functions.set(key, [fn])
  }
  const schemas = catalog.schemas.map((s) => s.name)
  return {
    schemas: schemas.length > 0 ? schemas : ['public'],
    tables,
    functions,
    relationships: relationshipsOf(catalog.tables),
    enums: new Map(catalog.enums.map((e) => [e.oid, e.labels])),
    schemaComments: new Map(catalog.schemas.map((s) => [s.name, s.comment])),
  }
}

/** The table of a row type (a function returning `setof t`), by its type's oid. */
export function tableByType(model: RestModel, typeOid: number): CatalogTable | undefined {
  for (const table of model.tables.values()) if (table.reltype === typeOid) return table
  return undefined
}

export class ModelCache extends VersionedCache<RestModel> {
  constructor(max = 200) {
    super(async (client: pg.ClientBase) => buildModel(await readCatalog(client)), max)
  }
}

/** The closest of `names` to `name` (PostgREST's fuzzy "Perhaps you meant"), or undefined when none is close. */
export function closest(name: string, names: Iterable<string>): string | undefined {
  let best: string | undefined
  let bestDistance = Infinity
  for (const candidate of names) {
    const d = distance(name, candidate)
    if (d < bestDistance) {
      bestDistance = d
      best = candidate
    }
  }
  return best !== undefined && bestDistance <= Math.max(2, Math.floor(name.length / 3)) ? best : undefined
}

function distance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 8) return Infinity
  const row = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0]!
    row[0] = i
    for (let j = 1; j <= b.length; j++) {
      const kept = row[j]!
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1))
      previous = kept
    }
  }
  return row[b.length]!
}
