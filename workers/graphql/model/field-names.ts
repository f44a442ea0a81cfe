// The field names each table's type has taken so far: relations, then
// computed fields, claim theirs in pg_graphql's order, and a name already
// taken (or no GraphQL name) leaves the later one out.
import { isValidName } from '../../../lib/pg-catalog/names.ts'
import type { TableModel } from './shapes.ts'

/** The field names each table's type already has: relations and computed fields take the first free one. */
export class FieldNames {
  readonly #taken = new Map<TableModel, Set<string>>()

  of(t: TableModel): Set<string> {
    let set = this.#taken.get(t)
    if (!set) {
      set = new Set(['nodeId', '__typename', ...t.columns.map((c) => c.field)])
      this.#taken.set(t, set)
    }
    return set
  }

  /** Claims `name` on `t`; false when it is invalid or taken. */
  claim(t: TableModel, name: string): boolean {
    const set = this.of(t)
    if (!isValidName(name) || set.has(name)) return false
    set.add(name)
    return true
  }
}
