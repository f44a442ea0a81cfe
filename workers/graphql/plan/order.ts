// A collection's order: the `orderBy` items (columns, and orderByRelated's
// related values and counts) with the primary key appended, their SQL, the
// grouped count a root collection orders by instead of counting per row, and
// distinctOn's columns.
import { graphqlErrors } from '../errors.ts'
import type { ColumnModel, RelationModel, TableModel } from '../model/index.ts'
import { ident, qualified } from '../sql.ts'
import { isOrderable } from '../types.ts'
import { nextAlias, type PlanContext } from './context.ts'
import { FLIP, type Direction } from './directions.ts'
import { filterSql } from './filter.ts'

/**
 * One key of a collection's order. `value` is its SQL over a row of the set
 * (an alias, or `(s.r)` for a distinct set). A related value
 * (orderByRelated) is a scalar subquery correlated to that row; the page
 * subquery also selects it, as `as`, so that edges and cursors read it back
 * instead of running it again.
 */
export interface OrderItem {
  value: (row: string) => string
  /** The type a cursor's item is read back as. */
  sqlType: string
  direction: Direction
  /** Set when the item is a column of the table itself. */
  column?: ColumnModel
  /** The page subquery's column (`o1`, `o2`, ...) carrying a related value. */
  as?: string
  /** Set on a to-many relation's count: what connectionSql needs to count all parents' rows in one grouped scan instead. */
  counted?: { source: string; targetColumns: string[]; columns: string[] }
}

export function orderSql(value: (item: OrderItem) => string, items: OrderItem[], reverse: boolean): string {
  return items
    .map((item) => {
      const d = reverse ? FLIP[item.direction] : item.direction
      const way = d.startsWith('Asc') ? 'asc' : 'desc'
      // A column that cannot hold null orders the same whatever its nulls are said to do, and without the
      // clause the order is a btree's own (ASC NULLS LAST, DESC NULLS FIRST): `id desc nulls last` would
      // make PostgreSQL sort every matching row for a page an index scan reads twenty rows of.
      if (item.column?.notNull === true) return `${value(item)} ${way}`
      return `${value(item)} ${way} nulls ${d.endsWith('First') ? 'first' : 'last'}`
    })
    .join(', ')
}

export function orderItems(ctx: PlanContext, table: TableModel, args: Record<string, unknown>): OrderItem[] {
  const order: OrderItem[] = []
  for (const entry of (args.orderBy as unknown[] | null | undefined) ?? []) {
    for (const item of entryItems(ctx, table, entry)) order.push(item.column ? item : { ...item, as: `o${order.length + 1}` })
  }
  for (const column of table.primaryKey) order.push(columnItem(column, 'AscNullsLast'))
  return order
}

const columnItem = (column: ColumnModel, direction: Direction): OrderItem => ({
  value: (row) => `${row}.${ident(column.name)}`,
  sqlType: column.type.sqlType,
  direction,
  column,
})

/** The items of one `<Type>OrderBy` object, in its keys' order. */
function entryItems(ctx: PlanContext, table: TableModel, entry: unknown): OrderItem[] {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw graphqlErrors.invalidInput(`${table.typeName}OrderBy`)
  const items: OrderItem[] = []
  for (const [key, given] of Object.entries(entry)) {
    const column = table.columnByField.get(key)
    if (column) {
      if (given) items.push(columnItem(column, given as Direction))
      continue
    }
    const relation = table.features.has('orderByRelated') ? table.relations.find((r) => r.field === key) : undefined
    if (!relation) throw graphqlErrors.invalidInput(`${table.typeName}OrderBy`)
    if (given !== null && given !== undefined) items.push(...relatedItems(ctx, relation, given))
  }
  return items
}

/**
 * orderByRelated: a to-one relation orders by its row's values (its own
 * `<Target>OrderBy`, so it nests), a to-many relation by its number of rows
 * (`<Target>AggregateOrderBy { count }`). The related rows are read as the
 * caller, so row level security decides which of them exist and count.
 */
function relatedItems(ctx: PlanContext, relation: RelationModel, given: unknown): OrderItem[] {
  const target = relation.target
  const t = nextAlias(ctx, 't')
  const source = qualified(target.schema, target.name)
  const join = (row: string) => relation.targetColumns.map((c, i) => `${t}.${ident(c)} = ${row}.${ident(relation.columns[i]!)}`).join(' and ')
  if (relation.kind === 'one') {
    // `limit 1`: a view's declared key promises no single match (the same first match relationSql reads).
    return entryItems(ctx, target, given).map((inner) => ({
      value: (row) => `(select ${inner.value(t)} from ${source} ${t} where ${join(row)} limit 1)`,
      sqlType: inner.sqlType,
      direction: inner.direction,
    }))
  }
  const typeName = `${target.typeName}AggregateOrderBy`
  if (typeof given !== 'object' || given === null || Array.isArray(given)) throw graphqlErrors.invalidInput(typeName)
  const items: OrderItem[] = []
  for (const [key, direction] of Object.entries(given)) {
    if (key !== 'count') throw graphqlErrors.invalidInput(typeName)
    if (!direction) continue
    items.push({
      value: (row) => `(select count(*) from ${source} ${t} where ${join(row)})`,
      sqlType: 'bigint',
      direction: direction as Direction,
      counted: { source, targetColumns: relation.targetColumns, columns: relation.columns },
    })
  }
  return items
}

/**
 * A `left join` counting the related rows of every parent row (alias `t`)
 * at once, and the count's SQL for a row (0 where it has none). With a
 * filter on a table's own rows, only the related rows of parents that pass
 * it are counted, so a narrow filter does not pay for every parent; the
 * filter is written again over its own alias (a set-returning function is
 * not called twice: its collections count everything).
 */
export function groupedCountJoin(
  ctx: PlanContext,
  counted: NonNullable<OrderItem['counted']>,
  t: string,
  filtered: { table: TableModel; source: string; args: Record<string, unknown> } | undefined,
): { join: string; value: string } {
  const g = nextAlias(ctx, 'g')
  const x = nextAlias(ctx, 'x')
  const keys = counted.targetColumns.map((c) => `${x}.${ident(c)}`)
  let restrict = ''
  if (filtered && filtered.source === qualified(filtered.table.schema, filtered.table.name)) {
    const f = nextAlias(ctx, 'f')
    const parentKeys = counted.columns.map((c) => `${f}.${ident(c)}`)
    restrict = ` where (${keys.join(', ')}) in (select ${parentKeys.join(', ')} from ${filtered.source} ${f} where ${filterSql(ctx.values, filtered.table, f, filtered.args.filter)})`
  }
  const grouped = `select ${keys.map((k, i) => `${k} as k${i}`).join(', ')}, count(*) as n from ${counted.source} ${x}${restrict} group by ${keys.join(', ')}`
  const on = counted.columns.map((c, i) => `${g}.k${i} = ${t}.${ident(c)}`).join(' and ')
  return { join: ` left join (${grouped}) ${g} on ${on}`, value: `coalesce(${g}.n, 0)` }
}

/**
 * distinctOn: the columns whose values the collection keeps one row of
 * each; none when the argument is absent or empty.
 */
export function distinctColumns(table: TableModel, args: Record<string, unknown>): ColumnModel[] {
  const given = args.distinctOn as unknown[] | null | undefined
  if (!given || given.length === 0) return []
  if (!table.features.has('distinctOn')) throw graphqlErrors.invalidInput(`${table.typeName}DistinctOnField`)
  const columns = new Set<ColumnModel>()
  for (const name of given) {
    const column = table.columns.find((c) => c.name === name && isOrderable(c.type))
    if (!column) throw graphqlErrors.invalidInput(`${table.typeName}DistinctOnField`)
    columns.add(column)
  }
  return [...columns]
}
