// `filter` arguments to SQL conditions over a row alias (SPEC 2.3: every
// operator, combined with and/or/not). Values arrive coerced by graphql-js;
// each becomes a value (sql.ts SqlValues) cast to the column's type, by the
// operator's entry in filter-operators.ts.
import { graphqlErrors } from '../errors.ts'
import { operatorFor } from '../filter-operators.ts'
import type { ColumnModel, TableModel } from '../model.ts'
import { ident, type SqlValues } from '../sql.ts'
import { decodeNodeId, itemSql } from './cursor.ts'

function columnCondition(values: SqlValues, column: ColumnModel, expr: string, ops: Record<string, unknown>): string[] {
  const out: string[] = []
  for (const [name, operand] of Object.entries(ops)) {
    if (operand === undefined) continue
    const op = operatorFor(name, column.type.list)
    if (!op) {
      throw graphqlErrors.invalidInput(column.type.list ? `${column.type.scalar}ListFilter` : `${column.type.enum?.name ?? column.type.scalar}Filter`)
    }
    // An explicit null compares as SQL does: `x < null` is null, never true, so it
    // matches no row (as pg_graphql answers), rather than being left out and
    // matching every row; under `not` it stays null. `is` has no SQL for a null
    // operand, and pg_graphql refuses it.
    if (operand === null) {
      if (op.operand === 'is') throw graphqlErrors.isNullOperand()
      out.push('null::boolean')
      continue
    }
    out.push(op.sql(values, expr, column.type, operand))
  }
  return out
}

/** Conditions on the primary key that a nodeId names; fails for another table's nodeId. */
export function nodeIdCondition(values: SqlValues, table: TableModel, alias: string, nodeId: unknown): string {
  const decoded = decodeNodeId(nodeId)
  if (decoded.schema !== table.schema || decoded.table !== table.name) throw graphqlErrors.nodeIdOtherCollection()
  if (decoded.items.length !== table.primaryKey.length + 2) throw graphqlErrors.badNodeId(6)
  return table.primaryKey
    .map((c, i) => `${alias}.${ident(c.name)} = ${itemSql(values, decoded, i + 2, c.type.sqlType)}`)
    .join(' and ')
}

/** SQL for a `<Table>Filter` value over rows aliased `alias`; 'true' for a filter with no condition. */
export function filterSql(values: SqlValues, table: TableModel, alias: string, filter: unknown): string {
  return conditionsOf(values, table, alias, filter) ?? 'true'
}

/**
 * The conditions of a filter value, undefined when it has none. As in
 * pg_graphql, an entry with no condition (`{}`, an operator left unset, a
 * null) counts for nothing: it is left out of `and`/`or` (so `or: [{}, x]` is
 * `x`), and an `and`/`or`/`not` left with nothing is no condition either.
 */
function conditionsOf(values: SqlValues, table: TableModel, alias: string, filter: unknown): string | undefined {
  if (filter === null || filter === undefined) return undefined
  if (typeof filter !== 'object' || Array.isArray(filter)) throw graphqlErrors.invalidInput(`${table.typeName}Filter`)
  const parts: string[] = []
  for (const [key, value] of Object.entries(filter as Record<string, unknown>)) {
    if (value === null || value === undefined) continue
    const column = table.columnByField.get(key)
    if (column) {
      parts.push(...columnCondition(values, column, `${alias}.${ident(column.name)}`, value as Record<string, unknown>))
    } else if (key === 'and' || key === 'or') {
      const entries = (Array.isArray(value) ? value : [value])
        .map((f) => conditionsOf(values, table, alias, f))
        .filter((c): c is string => c !== undefined)
      if (entries.length > 0) parts.push(entries.map((c) => `(${c})`).join(key === 'and' ? ' and ' : ' or '))
    } else if (key === 'not') {
      const inner = conditionsOf(values, table, alias, value)
      if (inner !== undefined) parts.push(`not (${inner})`)
    } else if (key === 'nodeId') {
      // A null nodeId is no nodeId: refused as pg_graphql does, not ignored.
      const eq = (value as Record<string, unknown>).eq
      if (eq !== undefined) parts.push(nodeIdCondition(values, table, alias, eq))
    } else {
      throw graphqlErrors.invalidInput(`${table.typeName}Filter`)
    }
  }
  return parts.length === 0 ? undefined : parts.map((p) => `(${p})`).join(' and ')
}
