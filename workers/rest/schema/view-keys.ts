// What the served views carry of their base tables' keys, as PostgREST 13
// derives it (shared/reference/postgrest.md section 7), from the catalogue's
// view key dependencies (lib/pg-catalog/view-keys.ts): a view showing every
// column of its base table's primary key has that key (the first column
// showing each), and a view showing every column of one side of a foreign key
// stands on that side of it, once for each way of picking the columns when it
// shows one twice. relationships.ts makes relationships of those sides as of
// the tables'.
import type { CatalogTable, CatalogViewKey } from '../../../lib/pg-catalog/catalog.ts'

/** A relation on one side of a foreign key: the columns it shows that side with, in the key's order. */
export interface KeySide {
  relation: CatalogTable
  columns: string[]
}

export interface ViewSides {
  /** By foreign key oid: the views showing its referencing columns. */
  referencing: Map<number, KeySide[]>
  /** By foreign key oid: the views showing its referenced columns. */
  referenced: Map<number, KeySide[]>
}

/** The views' primary keys, by view oid: for each key column, the first view column showing it. */
export function viewPrimaryKeys(keys: readonly CatalogViewKey[]): Map<number, string[]> {
  const out = new Map<number, string[]>()
  for (const key of keys) if (key.kind === 'p' && !out.has(key.view)) out.set(key.view, key.columns.map(([, shown]) => shown[0]!))
  return out
}

/** The views standing on either side of each foreign key, `byOid` giving the served relations (views with their keys). */
export function viewSides(keys: readonly CatalogViewKey[], byOid: ReadonlyMap<number, CatalogTable>): ViewSides {
  const sides: ViewSides = { referencing: new Map(), referenced: new Map() }
  for (const key of keys) {
    const relation = byOid.get(key.view)
    if (key.kind === 'p' || relation === undefined) continue
    const map = key.kind === 'f' ? sides.referencing : sides.referenced
    const list = map.get(key.constraint) ?? []
    for (const columns of choices(key.columns.map(([, shown]) => shown))) list.push({ relation, columns })
    map.set(key.constraint, list)
  }
  return sides
}

/** Every way of taking one name from each list (a key column shown twice gives two relationships, as PostgREST's). */
function choices(lists: readonly string[][]): string[][] {
  let out: string[][] = [[]]
  for (const list of lists) out = out.flatMap((prefix) => list.map((name) => [...prefix, name]))
  return out
}
