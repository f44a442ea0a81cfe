// Relationships between the served tables, from their foreign keys, as both
// API concerns derive them: GraphQL's to-one and to-many fields
// (workers/graphql/model/relations.ts) and the data API's embedding
// (workers/rest/schema/relationships.ts, which also relates views by the keys they
// show). What they share is whether a set of columns is a key of its table (a
// foreign key over a key is one-to-one; a junction's keys make a
// many-to-many); GraphQL's fields follow the foreign keys between two served
// tables (foreignKeyEdgesOf).
import type { CatalogForeignKey, CatalogTable } from './catalog.ts'

/** A foreign key whose referencing and referenced tables are both served. */
export interface ForeignKeyEdge {
  table: CatalogTable
  fk: CatalogForeignKey
  refTable: CatalogTable
}

/** The table's foreign keys to served tables (`byOid`), in the catalogue's order (by constraint name). */
export function foreignKeyEdgesOf(table: CatalogTable, byOid: ReadonlyMap<number, CatalogTable>): ForeignKeyEdge[] {
  const edges: ForeignKeyEdge[] = []
  for (const fk of table.foreignKeys) {
    const refTable = byOid.get(fk.refTable)
    if (refTable && fk.columns.length === fk.refColumns.length) edges.push({ table, fk, refTable })
  }
  return edges
}

const setKey = (columns: readonly string[]) => [...columns].sort().join('\0')

/** Whether two column lists name the same columns, in any order. */
export function sameColumns(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && setKey(a) === setKey(b)
}

/** Whether `columns` are exactly the primary key or a unique key (non-partial, on plain columns) of the table. */
export function isUniqueKey(table: CatalogTable, columns: readonly string[]): boolean {
  if (table.primaryKey && sameColumns(table.primaryKey, columns)) return true
  return table.uniques.some((u) => sameColumns(u, columns))
}

/** Whether every one of `columns` is part of the primary key, or of one unique key (a junction's pair). */
export function withinOneKey(table: CatalogTable, columns: readonly string[]): boolean {
  const keys = table.primaryKey ? [table.primaryKey, ...table.uniques] : table.uniques
  return keys.some((key) => columns.every((c) => key.includes(c)))
}
