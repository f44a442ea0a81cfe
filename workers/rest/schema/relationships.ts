// Relationships as PostgREST 13's schema cache derives them
// (shared/reference/postgrest.md section 7), from the foreign keys of the
// served tables and those the served views show (view-keys.ts): many-to-one
// from the referencing relation and one-to-many back, one-to-one both ways
// when the key's columns are a key of the referencing table, and
// many-to-many through a junction (a table, or a view with a primary key)
// whose two foreign keys' columns lie in its primary key (or one unique key).
// A view stands where its base table does on each side of a key it shows, so
// views relate to tables, tables to views and views to views, with the base
// key's name and cardinality. Computed relationships (computed.ts) come last
// and replace those they override. Which one an embed means is
// find-relationship.ts.
import type { CatalogFunction, CatalogTable, CatalogViewForeignKey } from '../../../lib/pg-catalog/catalog.ts'
import { isUniqueKey, withinOneKey } from '../../../lib/pg-catalog/relationships.ts'
import { addComputed, computedRelationships } from './computed.ts'
import type { KeySide, ViewSides } from './view-keys.ts'

export type Cardinality = 'many-to-one' | 'one-to-many' | 'one-to-one' | 'many-to-many'

export interface Junction {
  table: CatalogTable
  /** The junction's key to the origin, and its columns paired (origin column, junction column). */
  sourceConstraint: string
  source: Array<[string, string]>
  /** The junction's key to the target, paired (target column, junction column). */
  targetConstraint: string
  target: Array<[string, string]>
}

export interface Relationship {
  table: CatalogTable
  foreign: CatalogTable
  cardinality: Cardinality
  /** The foreign key's name (not for many-to-many; a computed relationship's function name). */
  constraint: string
  /** Column pairs (origin column, target column); empty for many-to-many and computed ones. */
  columns: Array<[string, string]>
  junction?: Junction
  /** The foreign key's oid, on the side holding its columns (`table` references `foreign`): a junction's legs. */
  referencing?: number
  /** A computed relationship's function (computed.ts): its rows are the function's call on the parent's row. */
  computed?: CatalogFunction
}

export const isToOne = (rel: Relationship) => rel.cardinality === 'many-to-one' || rel.cardinality === 'one-to-one'

const noViews: ViewSides = { referencing: new Map(), referenced: new Map() }

/** A foreign key, with every relation standing on each side of it. */
interface Link {
  oid: number
  name: string
  oneToOne: boolean
  origins: KeySide[]
  targets: KeySide[]
}

/** The foreign keys of the served tables, then those only views show (their tables not served), with their sides. */
function links(tables: readonly CatalogTable[], views: ViewSides, viewForeignKeys: readonly CatalogViewForeignKey[]): Link[] {
  const byOid = new Map(tables.map((t) => [t.oid, t]))
  const out: Link[] = []
  const side = (relation: CatalogTable | undefined, columns: string[]): KeySide[] => (relation ? [{ relation, columns }] : [])
  const link = (fk: { oid: number; name: string; columns: string[]; refColumns: string[] }, table: CatalogTable | undefined, ref: CatalogTable | undefined, oneToOne: boolean) => {
    if (fk.columns.length !== fk.refColumns.length) return
    out.push({
      oid: fk.oid,
      name: fk.name,
      oneToOne,
      origins: [...side(table, fk.columns), ...(views.referencing.get(fk.oid) ?? [])],
      targets: [...side(ref, fk.refColumns), ...(views.referenced.get(fk.oid) ?? [])],
    })
  }
  const seen = new Set<number>()
  for (const table of tables) {
    for (const fk of table.foreignKeys) {
      seen.add(fk.oid)
      link(fk, table, byOid.get(fk.refTable), isUniqueKey(table, fk.columns))
    }
  }
  for (const fk of viewForeignKeys) if (!seen.has(fk.oid)) link(fk, byOid.get(fk.table), byOid.get(fk.refTable), fk.oneToOne)
  return out
}

/** Every relationship of the served relations, by the origin's oid. */
export function relationshipsOf(
  tables: readonly CatalogTable[],
  views: ViewSides = noViews,
  viewForeignKeys: readonly CatalogViewForeignKey[] = [],
  functions: readonly CatalogFunction[] = [],
): Map<number, Relationship[]> {
  const byOrigin = new Map<number, Relationship[]>()
  const add = (rel: Relationship) => {
    const list = byOrigin.get(rel.table.oid)
    if (list) list.push(rel)
    else byOrigin.set(rel.table.oid, [rel])
  }
  const legs = new Map<number, Relationship[]>()
  for (const { oid, name, oneToOne, origins, targets } of links(tables, views, viewForeignKeys)) {
    for (const origin of origins) {
      for (const target of targets) {
        const pairs = origin.columns.map((c, i): [string, string] => [c, target.columns[i]!])
        const rel: Relationship = { table: origin.relation, foreign: target.relation, cardinality: oneToOne ? 'one-to-one' : 'many-to-one', constraint: name, columns: pairs, referencing: oid }
        add(rel)
        add({ table: target.relation, foreign: origin.relation, cardinality: oneToOne ? 'one-to-one' : 'one-to-many', constraint: name, columns: pairs.map(([a, b]): [string, string] => [b, a]) })
        const list = legs.get(origin.relation.oid)
        if (list) list.push(rel)
        else legs.set(origin.relation.oid, [rel])
      }
    }
  }
  for (const list of legs.values()) {
    for (const a of list) {
      for (const b of list) {
        if (a.referencing === b.referencing || !withinOneKey(a.table, [...a.columns.map((p) => p[0]), ...b.columns.map((p) => p[0])])) continue
        add({
          table: a.foreign,
          foreign: b.foreign,
          cardinality: 'many-to-many',
          constraint: '',
          columns: [],
          junction: {
            table: a.table,
            sourceConstraint: a.constraint,
            source: a.columns.map(([jc, c]): [string, string] => [c, jc]),
            targetConstraint: b.constraint,
            target: b.columns.map(([jc, c]): [string, string] => [c, jc]),
          },
        })
      }
    }
  }
  addComputed(byOrigin, computedRelationships(functions, tables))
  return byOrigin
}
