// `filter` arguments to SQL conditions over a row alias (SPEC 2.3: every
// operator, combined with and/or/not). Values arrive coerced by graphql-js;
// each becomes a value (sql.ts SqlValues) cast to the column's type, by the
// operator's entry in filter-operators.ts.
import { graphqlErrors } from '../errors.ts'
import { operatorFor } from '../filter-operators.ts'
import type { ColumnModel, RelationModel, TableModel } from '../model/index.ts'
import { ident, qualified, wholeRow, type SqlValues } from '../sql.ts'
import { decodeNodeId, itemSql } from './cursor.ts'

function columnCondition(values: SqlValues, column: Pick<ColumnModel, 'type'>, expr: string, ops: Record<string, unknown>): string[] {
  // `composites`: each attribute's filter, on that attribute of the value.
  const composite = column.type.composite
  if (composite) {
    if (typeof ops !== 'object' || ops === null || Array.isArray(ops)) throw graphqlErrors.invalidInput(`${composite.name}Filter`)
    return Object.entries(ops).flatMap(([field, inner]) => {
      if (inner === null || inner === undefined) return []
      const attribute = composite.attributeByField.get(field)
      if (!attribute) throw graphqlErrors.invalidInput(`${composite.name}Filter`)
      return columnCondition(values, attribute, `(${expr}).${ident(attribute.name)}`, inner as Record<string, unknown>)
    })
  }
  const out: string[] = []
  const target = column.type.domain ? `(${expr})::${column.type.sqlType}` : expr
  for (const [name, operand] of Object.entries(ops)) {
    if (operand === undefined) continue
    const op = operatorFor(name, column.type.list)
    if (!op) {
      throw graphqlErrors.invalidInput(column.type.list ? `${column.type.enum?.name ?? column.type.scalar}ListFilter` : `${column.type.enum?.name ?? column.type.scalar}Filter`)
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
    out.push(op.sql(values, target, column.type, operand))
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
  // Relation filters' subqueries are named after the filtered row's alias and
  // numbered across the whole filter, so no inner alias hides an outer one.
  let subqueries = 0
  const scope: Scope = { values, subquery: () => `${alias}r${++subqueries}` }
  return conditionsOf(scope, table, alias, filter) ?? 'true'
}

interface Scope {
  values: SqlValues
  /** A fresh alias for a relation filter's subquery. */
  subquery: () => string
}

/**
 * The conditions of a filter value, undefined when it has none. As in
 * pg_graphql, an entry with no condition (`{}`, an operator left unset, a
 * null) counts for nothing: it is left out of `and`/`or` (so `or: [{}, x]` is
 * `x`), and an `and`/`or`/`not` left with nothing is no condition either.
 */
function conditionsOf(scope: Scope, table: TableModel, alias: string, filter: unknown): string | undefined {
  const { values } = scope
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
        .map((f) => conditionsOf(scope, table, alias, f))
        .filter((c): c is string => c !== undefined)
      if (entries.length > 0) parts.push(entries.map((c) => `(${c})`).join(key === 'and' ? ' and ' : ' or '))
    } else if (key === 'not') {
      const inner = conditionsOf(scope, table, alias, value)
      if (inner !== undefined) parts.push(`not (${inner})`)
    } else if (key === 'nodeId') {
      // A null nodeId is no nodeId: refused as pg_graphql does, not ignored.
      const eq = (value as Record<string, unknown>).eq
      if (eq !== undefined) parts.push(nodeIdCondition(values, table, alias, eq))
    } else if (table.computed.some((f) => f.filterable && f.field === key)) {
      parts.push(...computedCondition(values, table, key, alias, value as Record<string, unknown>))
    } else {
      const relation = table.features.has('relationFilters') ? table.relations.find((r) => r.field === key) : undefined
      if (!relation) throw graphqlErrors.invalidInput(`${table.typeName}Filter`)
      const condition = relationCondition(scope, relation, alias, value)
      if (condition !== undefined) parts.push(condition)
    }
  }
  return parts.length === 0 ? undefined : parts.map((p) => `(${p})`).join(' and ')
}

/**
 * A relation filter (`relationFilters`) as EXISTS over the related table,
 * run as the caller: row level security decides which related rows count.
 * A to-one relation takes the related type's filter: a row whose related row
 * exists, is visible and matches (`{}` asks only that it exists). A to-many
 * relation takes `some`, `every` and `none`; `some: {}` is "has one",
 * `none: {}` "has none", and `every` holds over an empty set. `every` asks
 * that each related row be one the same filter would return from its
 * collection, so a row where the condition is null fails it (`is not true`).
 */
function relationCondition(scope: Scope, relation: RelationModel, alias: string, value: unknown): string | undefined {
  const target = relation.target
  const related = (inner: unknown, negate: boolean): { sql: string; any: boolean } => {
    const r = scope.subquery()
    const join = relation.targetColumns.map((c, i) => `${r}.${ident(c)} = ${alias}.${ident(relation.columns[i]!)}`).join(' and ')
    const condition = conditionsOf(scope, target, r, inner)
    const where = condition === undefined ? join : `${join} and (${negate ? `(${condition}) is not true` : condition})`
    return { sql: `exists(select 1 from ${qualified(target.schema, target.name)} ${r} where ${where})`, any: condition !== undefined }
  }
  if (relation.kind === 'one') return related(value, false).sql
  const typeName = `${target.typeName}ListRelationFilter`
  if (typeof value !== 'object' || Array.isArray(value)) throw graphqlErrors.invalidInput(typeName)
  const parts: string[] = []
  for (const [quantifier, inner] of Object.entries(value as Record<string, unknown>)) {
    if (inner === null || inner === undefined) continue
    if (quantifier === 'some') parts.push(related(inner, false).sql)
    else if (quantifier === 'none') parts.push(`not ${related(inner, false).sql}`)
    else if (quantifier === 'every') {
      // Every row of an empty condition: always true, so no condition.
      const every = related(inner, true)
      if (every.any) parts.push(`not ${every.sql}`)
    } else throw graphqlErrors.invalidInput(typeName)
  }
  return parts.length === 0 ? undefined : parts.map((p) => `(${p})`).join(' and ')
}

/**
 * A filterable computed field (`functionShapes`) compared as a column: the
 * function called with the row alone, so its other arguments take their defaults.
 */
function computedCondition(values: SqlValues, table: TableModel, field: string, alias: string, ops: Record<string, unknown>): string[] {
  const fn = table.computed.find((f) => f.field === field)!
  if (fn.returns.kind !== 'scalar') throw graphqlErrors.invalidInput(`${table.typeName}Filter`)
  return columnCondition(values, fn.returns, `${qualified(fn.schema, fn.name)}(${wholeRow(alias, table)})`, ops)
}
