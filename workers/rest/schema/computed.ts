// Computed relationships, as PostgREST 13 reads them (shared/reference/
// postgrest.md section 7): a function of one argument whose type is a served
// relation's row type, returning a served relation's row type, is a
// relationship named as the function from the argument's relation to the
// returned one: to-one when it returns a single row (not `setof`, or `rows
// 1`), else to-many. Embedding it calls the function with the parent's row;
// it takes no hint. It replaces the foreign-key relationships from the same
// relation to the relation of its own name in its schema (PostgREST keys both
// by origin and target name, the computed one winning), which is how a
// detected relationship is overridden.
import type { CatalogFunction, CatalogTable } from '../../../lib/pg-catalog/catalog.ts'
import type { Relationship } from './relationships.ts'

const inputs = (fn: CatalogFunction) => fn.args.filter((a) => a.mode === 'i' || a.mode === 'b' || a.mode === 'v')

/** The computed relationships the functions make between the served relations. */
export function computedRelationships(functions: readonly CatalogFunction[], tables: readonly CatalogTable[]): Relationship[] {
  const byType = new Map(tables.map((t) => [t.reltype, t]))
  const out: Relationship[] = []
  for (const fn of functions) {
    const args = inputs(fn)
    if (args.length !== 1) continue
    const table = byType.get(args[0]!.oid)
    const foreign = byType.get(fn.returnType.oid)
    if (table === undefined || foreign === undefined) continue
    const toOne = !fn.returnsSet || fn.rows === 1
    out.push({ table, foreign, cardinality: toOne ? 'many-to-one' : 'one-to-many', constraint: fn.name, columns: [], computed: fn })
  }
  return out
}

/** Adds the computed relationships to `byOrigin`, each replacing the others from its origin to the relation named as it. */
export function addComputed(byOrigin: Map<number, Relationship[]>, computed: readonly Relationship[]): void {
  for (const rel of computed) {
    const fn = rel.computed!
    const kept = (byOrigin.get(rel.table.oid) ?? []).filter((r) => r.computed !== undefined || r.foreign.schema !== fn.schema || r.foreign.name !== fn.name)
    byOrigin.set(rel.table.oid, [...kept, rel])
  }
}
