// Relationships as PostgREST 13's schema cache derives them
// (shared/reference/postgrest.md section 7), from the foreign keys between
// served tables (lib/pg-catalog/relationships.ts, shared with GraphQL):
// many-to-one from the referencing table and one-to-many back, one-to-one
// both ways when the key's columns are a key of the referencing table, and
// many-to-many through a junction table whose two foreign keys' columns lie
// in its primary key (or one unique key). Which one an embed means, with its
// `!hint`, is `findRelationship`: none is PGRST200, several PGRST201.
import type { CatalogTable } from '../../lib/pg-catalog/catalog.ts'
import { foreignKeyEdges, isUniqueKey, withinOneKey, type ForeignKeyEdge } from '../../lib/pg-catalog/relationships.ts'
import { restErrors } from './errors.ts'
import { closest } from './model.ts'

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
  /** The foreign key's name (not for many-to-many). */
  constraint: string
  /** Column pairs (origin column, target column); empty for many-to-many. */
  columns: Array<[string, string]>
  junction?: Junction
}

export const isToOne = (rel: Relationship) => rel.cardinality === 'many-to-one' || rel.cardinality === 'one-to-one'

/** Every relationship of the served tables, by the origin table's oid. */
export function relationshipsOf(tables: readonly CatalogTable[]): Map<number, Relationship[]> {
  const byOrigin = new Map<number, Relationship[]>()
  const add = (rel: Relationship) => {
    const list = byOrigin.get(rel.table.oid)
    if (list) list.push(rel)
    else byOrigin.set(rel.table.oid, [rel])
  }
  const edges = foreignKeyEdges(tables)
  for (const { table, fk, refTable } of edges) {
    const pairs = fk.columns.map((c, i): [string, string] => [c, fk.refColumns[i]!])
    const oneToOne = isUniqueKey(table, fk.columns)
    add({ table, foreign: refTable, cardinality: oneToOne ? 'one-to-one' : 'many-to-one', constraint: fk.name, columns: pairs })
    add({ table: refTable, foreign: table, cardinality: oneToOne ? 'one-to-one' : 'one-to-many', constraint: fk.name, columns: pairs.map(([a, b]): [string, string] => [b, a]) })
  }
  const byJunction = new Map<number, ForeignKeyEdge[]>()
  for (const edge of edges) {
    const list = byJunction.get(edge.table.oid)
    if (list) list.push(edge)
    else byJunction.set(edge.table.oid, [edge])
  }
  for (const list of byJunction.values()) {
    for (const a of list) {
      for (const b of list) {
        if (a === b || !withinOneKey(a.table, [...a.fk.columns, ...b.fk.columns])) continue
        add({
          table: a.refTable,
          foreign: b.refTable,
          cardinality: 'many-to-many',
          constraint: '',
          columns: [],
          junction: {
            table: a.table,
            sourceConstraint: a.fk.name,
            source: a.fk.refColumns.map((c, i): [string, string] => [c, a.fk.columns[i]!]),
            targetConstraint: b.fk.name,
            target: b.fk.refColumns.map((c, i): [string, string] => [c, b.fk.columns[i]!]),
          },
        })
      }
    }
  }
  return byOrigin
}

/** PostgREST's `findRel`: the target table's name, narrowed by a hint (a constraint, a column of a one-column key on either side, or a junction table). */
export function findRelationship(
  relationships: ReadonlyMap<number, Relationship[]>,
  tables: Iterable<CatalogTable>,
  schema: string,
  origin: { name: string; table: CatalogTable | undefined },
  target: string,
  hints: readonly string[],
): Relationship {
  const all = origin.table ? relationships.get(origin.table.oid) ?? [] : []
  const found = all.filter((rel) => rel.foreign.name === target && rel.foreign.schema === schema && hints.every((hint) => matchesHint(rel, hint)))
  if (found.length === 1) return found[0]!
  if (found.length > 1) throw restErrors.ambiguousRelationship(origin.name, target, found.map(describe), found.map((rel) => `'${target}!${hintOf(rel)}'`))
  throw restErrors.noRelationship(origin.name, target, schema, hints[0] ?? null, suggestion(relationships, tables, schema, origin, target, all))
}

function matchesHint(rel: Relationship, hint: string): boolean {
  if (rel.junction) return rel.junction.table.name === hint
  if (rel.constraint === hint) return true
  return rel.columns.length === 1 && (rel.columns[0]![0] === hint || rel.columns[0]![1] === hint)
}

const hintOf = (rel: Relationship) => (rel.junction ? rel.junction.table.name : rel.constraint)

const list = (names: readonly string[]) => `(${names.join(', ')})`

/** One candidate in PGRST201's details, as PostgREST words it. */
function describe(rel: Relationship): { cardinality: string; embedding: string; relationship: string } {
  const embedding = `${rel.table.name} with ${rel.foreign.name}`
  const j = rel.junction
  if (j) {
    const relationship = `${j.table.name} using ${j.sourceConstraint}${list(j.source.map((p) => p[1]))} and ${j.targetConstraint}${list(j.target.map((p) => p[1]))}`
    return { cardinality: rel.cardinality, embedding, relationship }
  }
  const relationship = `${rel.constraint} using ${rel.table.name}${list(rel.columns.map((p) => p[0]))} and ${rel.foreign.name}${list(rel.columns.map((p) => p[1]))}`
  return { cardinality: rel.cardinality, embedding, relationship }
}

/**
 * PostgREST's hint for PGRST200: when the origin has relationships, a close
 * name among its targets (none when the target is one of them: the hint was
 * wrong); otherwise a close name among the tables that have relationships.
 */
function suggestion(
  relationships: ReadonlyMap<number, Relationship[]>,
  tables: Iterable<CatalogTable>,
  schema: string,
  origin: { name: string; table: CatalogTable | undefined },
  target: string,
  ofOrigin: readonly Relationship[],
): string | null {
  if (ofOrigin.length > 0) {
    const targets = new Set(ofOrigin.map((r) => r.foreign.name))
    if (targets.has(target)) return null
    const near = closest(target, targets)
    return near ? `Perhaps you meant '${near}' instead of '${target}'.` : null
  }
  const parents = [...tables].filter((t) => t.schema === schema && relationships.has(t.oid)).map((t) => t.name)
  if (parents.includes(origin.name)) return null
  const near = closest(origin.name, parents)
  return near ? `Perhaps you meant '${near}' instead of '${origin.name}'.` : null
}
