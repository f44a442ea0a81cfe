// The field names each table's type has taken so far, and by what. Columns
// come first, then relations, then computed fields, as pg_graphql lists a
// type's fields. pg_graphql answers a field from a map filled in that order,
// so where two share a name the later one answers: a computed field answers
// under its name even when a column or a relation has it too (a column
// `count` beside a function `_count(parent)` answers the function). Its list
// would show both; a graphql-js type holds one field per name, so the type
// shows the one that answers. A relation whose name is taken is left out.
import { isValidName } from '../../../lib/pg-catalog/names.ts'
import type { TableModel } from './shapes.ts'

type Owner = 'reserved' | 'column' | 'relation' | 'computed'

/** The field names each table's type already has, and which kind of field has each. */
export class FieldNames {
  readonly #taken = new Map<TableModel, Map<string, Owner>>()

  of(t: TableModel): Map<string, Owner> {
    let names = this.#taken.get(t)
    if (!names) {
      names = new Map<string, Owner>([['nodeId', 'reserved'], ['__typename', 'reserved']])
      for (const c of t.columns) if (!names.has(c.field)) names.set(c.field, 'column')
      this.#taken.set(t, names)
    }
    return names
  }

  /** Claims `name` on `t` for a relation; false when it is invalid or taken. */
  claim(t: TableModel, name: string): boolean {
    const names = this.of(t)
    if (!isValidName(name) || names.has(name)) return false
    names.set(name, 'relation')
    return true
  }

  /**
   * Claims `name` on `t` for a computed field, over a column or relation of
   * that name (which then stops being a field of the type: the column stays
   * in filters, orderings and inputs, as in pg_graphql); false when it is
   * invalid, `nodeId`, or another computed field's.
   */
  claimComputed(t: TableModel, name: string): boolean {
    const names = this.of(t)
    const owner = names.get(name)
    if (!isValidName(name) || owner === 'reserved' || owner === 'computed') return false
    if (owner === 'column') for (const c of t.columns) if (c.field === name) c.shadowed = true
    if (owner === 'relation') t.relations = t.relations.filter((r) => r.field !== name)
    names.set(name, 'computed')
    return true
  }
}
