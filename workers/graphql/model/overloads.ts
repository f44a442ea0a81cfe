// Which functions are left out as overloads. pg_graphql hides every function
// whose name another function of the served schemas has, with one exception:
// functions of one name that each take a different table's row (`_calories(rec
// recipe)` beside `_calories(rec recipe_ingredient)`) are a computed field of
// each table (its issue 334; the row is cast to its table's type in the call,
// so PostgreSQL picks the right one). The schema report asks the same.
import type { CatalogFunction } from '../../../lib/pg-catalog/catalog.ts'

/** The row type a function is a computed field of: its first input argument's, when that is a served table's row type. */
function rowTypeOf(f: CatalogFunction, rowTypes: ReadonlySet<number>): number | undefined {
  const first = f.args.find((a) => a.mode === 'i' || a.mode === 'b')
  return first && rowTypes.has(first.oid) ? first.oid : undefined
}

/**
 * The oids of the functions an overload hides: those sharing their name with
 * another function, unless both are computed fields of different tables
 * (`rowTypes`: the served tables' row types).
 */
export function overloadedFunctions(functions: readonly CatalogFunction[], rowTypes: ReadonlySet<number>): Set<number> {
  const byName = new Map<string, CatalogFunction[]>()
  for (const f of functions) byName.set(f.name, [...(byName.get(f.name) ?? []), f])
  const hidden = new Set<number>()
  for (const same of byName.values()) {
    if (same.length < 2) continue
    const rows = same.map((f) => rowTypeOf(f, rowTypes))
    const apart = rows.every((r) => r !== undefined) && new Set(rows).size === rows.length
    if (!apart) for (const f of same) hidden.add(f.oid)
  }
  return hidden
}
