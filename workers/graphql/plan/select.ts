// Reading rows: a record's selection (columns, nodeId, relations, computed
// fields) and connections (paging, filter, orderBy, cursors, pageInfo,
// totalCount, aggregate) as JSON-building SQL. A count or aggregate is
// computed only when selected; nested collections are correlated subqueries,
// and a to-one relation is a LATERAL join of the query that reads its parent
// row (a subquery run per row costs PostgreSQL noticeably more than a join).
//
// Every subquery that adds a column of the engine's own (a row number, a
// found flag) beside a table's columns names all of them itself (`c1`, `c2`,
// `n`, `e`): a table may have a column of any name, so a name the engine
// picks could otherwise be one of the table's. For the same reason a row read
// whole is never its bare alias (sql.ts wholeRow).
import { Kind, type GraphQLObjectType } from 'graphql'
import { graphqlErrors } from '../errors.ts'
import type { ColumnModel, FunctionModel, RelationModel, TableModel } from '../model.ts'
import { base64JsonArray, ident, jsonObject, literal, qualified, output, text, wholeRow, type SqlValues } from '../sql.ts'
import { argumentsOf, collectFields, nextAlias, subSelections, type CollectedField, type PlanContext } from './context.ts'
import { decodeCursor, itemSql, type DecodedArray } from './cursor.ts'
import { filterSql } from './filter.ts'
import { isOrderable, type CompositeModel } from '../types.ts'

type Sets = ReturnType<typeof subSelections>

/** How SQL reads one row: its columns by name, and the whole row (the argument of a computed field). */
export interface RowRef {
  column(name: string): string
  /** Present when the row is read whole, as every row of a table with computed fields is (rowColumns). */
  whole?: string
}

/** A row that is a composite value, or a table alias (with its `whole`, sql.ts wholeRow): `row."column"`. */
function rowRef(row: string, whole = row): RowRef {
  return { column: (name) => `${row}.${ident(name)}`, whole }
}

function objectType(ctx: PlanContext, name: string): GraphQLObjectType {
  return ctx.schema.getType(name) as GraphQLObjectType
}

function unknown(field: CollectedField, typeName: string): never {
  throw graphqlErrors.unknownField(field.name, typeName)
}

/**
 * JSON of one row of `table`: `row` is a RowRef or the SQL of the row (an
 * alias or a composite). To-one relations add their LATERAL joins to
 * `joins`, which the caller appends to the FROM clause that defines the row,
 * in order.
 */
export function recordSql(ctx: PlanContext, table: TableModel, row: RowRef | string, sets: Sets, joins: string[]): string {
  const ref = typeof row === 'string' ? rowRef(row) : row
  const type = objectType(ctx, table.typeName)
  const pairs: [string, string][] = []
  for (const field of collectFields(ctx, table.typeName, sets, ['Node'])) {
    pairs.push([field.key, recordFieldSql(ctx, table, type, ref, field, joins)])
  }
  return jsonObject(pairs)
}

/**
 * JSON of a composite value (`composites`): the selected attributes, null
 * when the value is null (num_nulls looks at the value itself, where `is
 * null` would also hold for a value whose attributes are all null).
 */
function compositeSql(ctx: PlanContext, composite: CompositeModel, expr: string, sets: Sets): string {
  const pairs: [string, string][] = collectFields(ctx, composite.name, sets).map((f) => {
    if (f.name === '__typename') return [f.key, text(composite.name)]
    const a = composite.attributeByField.get(f.name)
    if (!a) return unknown(f, composite.name)
    const value = `(${expr}).${ident(a.name)}`
    return [f.key, a.type.composite ? compositeSql(ctx, a.type.composite, value, subSelections(f)) : output(a.type, value)]
  })
  return `case when num_nulls(${expr}) = 0 then ${jsonObject(pairs)} end`
}

/** `from` followed by the joins records added. */
export function withJoins(from: string, joins: readonly string[]): string {
  return joins.length === 0 ? from : `${from} ${joins.join(' ')}`
}

function recordFieldSql(ctx: PlanContext, table: TableModel, type: GraphQLObjectType, row: RowRef, field: CollectedField, joins: string[]): string {
  if (field.name === '__typename') return text(table.typeName)
  if (field.name === 'nodeId') {
    return base64JsonArray([`${text(table.schema)}::text`, `${text(table.name)}::text`, ...table.primaryKey.map((c) => row.column(c.name))])
  }
  const column = table.columnByField.get(field.name)
  if (column) {
    const c = column.type.composite
    return c ? compositeSql(ctx, c, row.column(column.name), subSelections(field)) : output(column.type, row.column(column.name))
  }
  const relation = table.relations.find((r) => r.field === field.name)
  if (relation) return relationSql(ctx, type, row, relation, field, joins)
  const computed = table.computed.find((f) => f.field === field.name)
  if (computed) {
    const call = computed.args.length === 0
      ? `${qualified(computed.schema, computed.name)}(${row.whole!})`
      : functionCallSql(ctx, computed, [row.whole!], argumentsOf(ctx, type, field), field)
    return functionResultSql(ctx, type, computed, call, field)
  }
  return unknown(field, table.typeName)
}

function relationSql(ctx: PlanContext, parentType: GraphQLObjectType, row: RowRef, relation: RelationModel, field: CollectedField, joins: string[]): string {
  const join = (alias: string) =>
    relation.targetColumns.map((c, i) => `${alias}.${ident(c)} = ${row.column(relation.columns[i]!)}`).join(' and ')
  const source = qualified(relation.target.schema, relation.target.name)
  if (relation.kind === 'one') {
    const x = nextAlias(ctx, 'x')
    const sets = subSelections(field)
    if (relation.unique) {
      // A constraint allows one match at most: a plain join, found when its key matched.
      joins.push(`left join ${source} ${x} on ${join(x)}`)
      const row = rowRef(x, wholeRow(x, relation.target))
      return `case when ${x}.${ident(relation.targetColumns[0]!)} is not null then ${recordSql(ctx, relation.target, row, sets, joins)} end`
    }
    // A view's declared key promises nothing: take the first match. `e` tells a found row from none.
    const a = nextAlias(ctx, 'a')
    const columns = rowColumns(relation.target, a)
    joins.push(`left join lateral (select true as e, ${columns.select} from ${source} ${a} where ${join(a)} limit 1) ${x} on true`)
    return `case when ${x}.e then ${recordSql(ctx, relation.target, columns.rowOf(x), sets, joins)} end`
  }
  return connectionSql(ctx, relation.target, source, join, argumentsOf(ctx, parentType, field), field)
}

/**
 * What a subquery over `table` (aliased `alias`, the row itself being
 * `whole`) selects, and how the outer query reads its rows. Plain columns
 * when the table has no computed fields (a whole-row composite costs
 * PostgreSQL a tuple built and taken apart again for every field read),
 * named by position so that the subquery's own columns beside them (`n`,
 * `e`) cannot meet a table column of that name. A computed field takes the
 * row itself, as `r`.
 */
export function rowColumns(table: TableModel, alias: string, whole = wholeRow(alias, table)): { select: string; rowOf: (outer: string) => RowRef } {
  if (table.computed.length > 0 || table.readColumns.length === 0) {
    return { select: `${whole} as r`, rowOf: (outer) => rowRef(`(${outer}.r)`) }
  }
  // A relation's own columns are read too: a foreign key column need not be a field.
  const names = new Set([...table.readColumns.map((c) => c.name), ...table.relations.flatMap((r) => r.columns)])
  const position = new Map([...names].map((name, i) => [name, `c${i + 1}`]))
  return {
    select: [...position].map(([name, as]) => `${alias}.${ident(name)} as ${as}`).join(', '),
    rowOf: (outer) => ({ column: (name) => `${outer}.${position.get(name)!}` }),
  }
}

/** JSON of the single row of `table` that `rest` (from/where, alias `alias`) finds, or null when there is none. */
export function singleRowSql(ctx: PlanContext, table: TableModel, alias: string, rest: string, sets: Sets): string {
  const x = nextAlias(ctx, 'x')
  const columns = rowColumns(table, alias)
  const joins: string[] = []
  const record = recordSql(ctx, table, columns.rowOf(x), sets, joins)
  return `(select ${record} ${withJoins(`from (select ${columns.select} ${rest}) ${x}`, joins)})`
}

/**
 * The arguments the document gives a value: written, or a variable that has
 * one. graphql-js fills in the others' shown defaults, but those are
 * pg_graphql's reading of the function's defaults, so the call leaves them
 * out and PostgreSQL applies the defaults themselves.
 */
function givenArguments(ctx: PlanContext, field: CollectedField): Set<string> {
  const given = new Set<string>()
  for (const arg of field.nodes[0]!.arguments ?? []) {
    if (arg.value.kind !== Kind.VARIABLE || Object.hasOwn(ctx.variables, arg.value.name.value)) given.add(arg.name.value)
  }
  return given
}

/**
 * The SQL call of a function field: `leading` (a computed field's row) and
 * the unnamed arguments by position, the others by name, each only when
 * given. Every argument before the last unnamed one is required (model.ts),
 * so the positions are always filled.
 */
export function functionCallSql(ctx: PlanContext, fn: FunctionModel, leading: string[], args: Record<string, unknown>, field: CollectedField): string {
  const given = givenArguments(ctx, field)
  let lastPositional = -1
  fn.args.forEach((a, i) => { if (a.positional) lastPositional = i })
  const parts = [...leading]
  fn.args.forEach((a, i) => {
    const has = given.has(a.field) && args[a.field] !== undefined
    if (i < lastPositional || (i === lastPositional && has)) parts.push(literal(ctx.values, has ? args[a.field] : null, a.type))
    else if (i > lastPositional && has) parts.push(`${ident(a.name)} => ${literal(ctx.values, args[a.field], a.type)}`)
  })
  return `${qualified(fn.schema, fn.name)}(${parts.join(', ')})`
}

/** JSON of a function field's result: scalar, one row, or a connection. `call` is the SQL call. */
export function functionResultSql(ctx: PlanContext, parentType: GraphQLObjectType, fn: FunctionModel, call: string, field: CollectedField): string {
  const r = fn.returns
  if (r.kind === 'scalar' && r.type.composite) {
    // Read once, from a subquery: the call may be volatile, and every attribute reads the value.
    const v = nextAlias(ctx, 'v')
    return `(select ${compositeSql(ctx, r.type.composite, `${v}.v`, subSelections(field))} from (select ${call} as v) ${v})`
  }
  if (r.kind === 'scalar') return output(r.type, call)
  if (r.kind === 'row') {
    const f = nextAlias(ctx, 'f')
    return singleRowSql(ctx, r.table, f, `from ${call} ${f} where not (${wholeRow(f, r.table)} is null)`, subSelections(field))
  }
  return connectionSql(ctx, r.table, call, () => undefined, argumentsOf(ctx, parentType, field), field)
}

type Direction = 'AscNullsFirst' | 'AscNullsLast' | 'DescNullsFirst' | 'DescNullsLast'

/**
 * One key of a collection's order. `value` is its SQL over a row of the set
 * (an alias, or `(s.r)` for a distinct set). A related value
 * (orderByRelated) is a scalar subquery correlated to that row; the page
 * subquery also selects it, as `as`, so that edges and cursors read it back
 * instead of running it again.
 */
interface OrderItem {
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

const FLIP: Record<Direction, Direction> = {
  AscNullsFirst: 'DescNullsLast',
  AscNullsLast: 'DescNullsFirst',
  DescNullsFirst: 'AscNullsLast',
  DescNullsLast: 'AscNullsFirst',
}

function orderSql(value: (item: OrderItem) => string, items: OrderItem[], reverse: boolean): string {
  return items
    .map((item) => {
      const d = reverse ? FLIP[item.direction] : item.direction
      return `${value(item)} ${d.startsWith('Asc') ? 'asc' : 'desc'} nulls ${d.endsWith('First') ? 'first' : 'last'}`
    })
    .join(', ')
}

/**
 * Rows strictly after the cursor in `items` order (strictly before with
 * `reverse`). Never null. A cursor shorter than the order compares its
 * leading columns only, as pg_graphql's does.
 */
function keysetSql(values: SqlValues, alias: string, items: OrderItem[], cursor: DecodedArray, reverse: boolean): string {
  const disjuncts: string[] = []
  // A domain-typed column is compared as its base type, as filters compare it:
  // PostgreSQL finds no `<` or `=` for a domain over an enum.
  const comparable = (item: OrderItem) => (item.column?.type.domain ? `(${item.value(alias)})::${item.sqlType}` : item.value(alias))
  items.slice(0, cursor.items.length).forEach((item, i) => {
    const col = comparable(item)
    const value = (k: number) => itemSql(values, cursor, k, items[k]!.sqlType)
    const equal = items.slice(0, i).map((prev, k) => (cursor.items[k] === null ? `${comparable(prev)} is null` : `${comparable(prev)} = ${value(k)}`))
    const d = reverse ? FLIP[item.direction] : item.direction
    const nullsFirst = d.endsWith('First')
    let after: string
    if (cursor.items[i] === null) {
      if (!nullsFirst) return
      after = `${col} is not null`
    } else {
      const cmp = `${col} ${d.startsWith('Asc') ? '>' : '<'} ${value(i)}`
      after = nullsFirst ? cmp : `(${cmp} or ${col} is null)`
    }
    disjuncts.push([...equal, after].join(' and '))
  })
  return disjuncts.length === 0 ? 'false' : `coalesce((${disjuncts.map((d) => `(${d})`).join(' or ')}), false)`
}

function pagingError(args: Record<string, unknown>): void {
  const has = (k: string) => args[k] !== undefined && args[k] !== null
  if (has('first') && has('last')) throw graphqlErrors.firstAndLast()
  if (has('before') && has('after')) throw graphqlErrors.beforeAndAfter()
  if (has('first') && has('before')) throw graphqlErrors.firstWithBefore()
  if (has('last') && has('after')) throw graphqlErrors.lastWithAfter()
  if (has('offset') && (has('last') || has('before'))) throw graphqlErrors.offsetBackwards()
  for (const k of ['first', 'last', 'offset']) if (has(k) && (args[k] as number) < 0) throw graphqlErrors.notUnsigned(k)
}

function orderItems(ctx: PlanContext, table: TableModel, args: Record<string, unknown>): OrderItem[] {
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
function groupedCountJoin(
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
function distinctColumns(table: TableModel, args: Record<string, unknown>): ColumnModel[] {
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

/** One connection's page, as the SQL of its fields sees it. */
interface Page {
  backward: boolean
  limit: number
  offset: number
  /** The rows strictly after the cursor, in the page's direction, when there is a cursor. */
  keyset: string | undefined
  /** Whether a row of the filtered set meets `condition` (SQL over the base alias). */
  exists: (condition: string) => string
  /** The page subquery's row number and how rows are told to be in the page. */
  n: string
  inPage: string
  cursorOf: () => string
}

/**
 * pageInfo as pg_graphql answers it. Ahead (in the page's direction) there
 * is more when the rows after the cursor outnumber offset + limit: the page
 * subquery reads one row more than that. Behind, there is more when the
 * set's first row (its last, paging backwards) is not on the page: with no
 * offset and room for a row, that is when a row is at or before the cursor;
 * an offset or `first: 0` also leaves rows after the cursor off the page.
 */
function pageInfoSql(ctx: PlanContext, page: Page, field: CollectedField): string {
  const more = `count(*) > ${page.offset + page.limit}`
  const atOrBeforeCursor = page.keyset ? page.exists(`not ${page.keyset}`) : undefined
  const skipsRows = page.offset > 0 || page.limit === 0
  const behind = !skipsRows
    ? (atOrBeforeCursor ?? 'false')
    : atOrBeforeCursor
      ? `(count(*) > 0 or ${atOrBeforeCursor})`
      : 'count(*) > 0'
  const next = page.backward ? behind : more
  const previous = page.backward ? more : behind
  const cursorAt = (fromEnd: boolean) =>
    `(array_agg(${page.cursorOf()} order by ${page.n}${fromEnd !== page.backward ? ' desc' : ''}) filter (where ${page.inPage}))[1]`
  const pairs: [string, string][] = collectFields(ctx, 'PageInfo', subSelections(field)).map((e) => {
    if (e.name === '__typename') return [e.key, `'PageInfo'`]
    if (e.name === 'hasNextPage') return [e.key, next]
    if (e.name === 'hasPreviousPage') return [e.key, previous]
    if (e.name === 'startCursor') return [e.key, cursorAt(false)]
    if (e.name === 'endCursor') return [e.key, cursorAt(true)]
    throw graphqlErrors.unknownPageInfoField()
  })
  return jsonObject(pairs)
}

/** Where a connection field's value comes from: the page, one scan of the whole filtered set, or neither. */
type Part = 'page' | 'set' | 'none'

interface ConnectionPart {
  key: string
  sql: string
  part: Part
}

/**
 * JSON of a connection over `source` (a table or a set-returning call),
 * rows limited by `join` (a correlation to the parent row) and the arguments.
 *
 * The page's fields are aggregates over the page subquery (`group by ()`
 * makes that one row even when no field aggregates, as `pageInfo {
 * hasPreviousPage }` alone does not). totalCount and aggregate are read from
 * one scan of the filtered set together, whatever number of them is
 * selected; with both kinds the two one-row results are joined.
 */
export function connectionSql(
  ctx: PlanContext,
  table: TableModel,
  source: string,
  join: (alias: string) => string | undefined,
  args: Record<string, unknown>,
  field: CollectedField,
): string {
  pagingError(args)
  const first = args.first as number | null | undefined
  const last = args.last as number | null | undefined
  const backward = (last !== undefined && last !== null) || (args.before !== undefined && args.before !== null)
  const limit = Math.min(first ?? last ?? table.maxRows, table.maxRows)
  const offset = (args.offset as number | null | undefined) ?? 0
  const order = orderItems(ctx, table, args)
  const distinct = distinctColumns(table, args)

  const where = (conditions: string[]) => (conditions.length > 0 ? ` where ${conditions.join(' and ')}` : '')
  const t = nextAlias(ctx, 'a')
  const correlation = join(t)
  const filter = filterSql(ctx.values, table, t, args.filter)
  const filtered = [correlation, filter].filter((c): c is string => c !== undefined && c !== 'true')
  // The set the collection pages through: the table's rows under `a`, or,
  // with distinctOn, the first row of each value in the collection's own
  // (forward) order, read whole as `(s.r)`. Cursors, totalCount and
  // aggregate then all see the distinct set, which is the collection.
  let from = `${source} ${t}`
  let a = t
  let whole = wholeRow(t, table)
  let base = filtered
  if (distinct.length > 0) {
    const s = nextAlias(ctx, 's')
    const on = distinct.map((c) => `${t}.${ident(c.name)}`)
    from = `(select distinct on (${on.join(', ')}) ${whole} as r from ${source} ${t}${where(filtered)} order by ${on.join(', ')}, ${orderSql((o) => o.value(t), order, false)}) ${s}`
    a = `(${s}.r)`
    whole = a
    base = []
  }
  // A root collection ordered by a related count counts every parent's rows
  // in one grouped scan (joined to the page's rows) rather than once per
  // parent row: three to four times faster over a few hundred parents.
  // Nested collections, and distinct sets, keep the correlated count.
  let pageFrom = from
  if (correlation === undefined && distinct.length === 0) {
    order.forEach((item, i) => {
      if (!item.counted) return
      const grouped = groupedCountJoin(ctx, item.counted, t, filter === 'true' ? undefined : { table, source, args })
      pageFrom += grouped.join
      order[i] = { ...item, value: () => grouped.value }
    })
  }
  const cursorText = (backward ? args.before : args.after) as string | null | undefined
  let keyset: string | undefined
  if (cursorText !== undefined && cursorText !== null) {
    const cursor = decodeCursor(cursorText)
    if (cursor.items.length > order.length) throw graphqlErrors.cursorMismatch()
    keyset = keysetSql(ctx.values, a, order, cursor, backward)
  }

  const connType = `${table.typeName}Connection`
  const fields = collectFields(ctx, connType, subSelections(field))
  const p = nextAlias(ctx, 'p')
  const columns = rowColumns(table, a, whole)
  const row = columns.rowOf(p)
  const read = (o: OrderItem) => (o.as ? `${p}.${o.as}` : row.column(o.column!.name))
  const related = order.flatMap((o) => (o.as ? [`, ${o.value(a)} as ${o.as}`] : [])).join('')
  const n = `${p}.n`
  const inPage = offset > 0 ? `${n} > ${offset} and ${n} <= ${offset + limit}` : `${n} <= ${limit}`
  const page: Page = {
    backward,
    limit,
    offset,
    keyset,
    exists: (condition) => `exists(select 1 from ${pageFrom}${where([...base, condition])})`,
    n,
    inPage,
    cursorOf: () => base64JsonArray(order.map(read)),
  }
  // One row past the page tells pageInfo whether there is more; without
  // pageInfo that row is never read, and fetching it can cost a long scan.
  const lookahead = fields.some((f) => f.name === 'pageInfo') ? 1 : 0
  // Row numbers are needed for offsets and pageInfo; a plain page is ordered by its keys.
  const numbered = lookahead === 1 || offset > 0

  const parts: ConnectionPart[] = []
  const joins: string[] = []
  for (const f of fields) {
    if (f.name === '__typename') {
      parts.push({ key: f.key, sql: text(connType), part: 'none' })
    } else if (f.name === 'edges') {
      const edgeType = `${table.typeName}Edge`
      const edgePairs: [string, string][] = collectFields(ctx, edgeType, subSelections(f)).map((e) => {
        if (e.name === '__typename') return [e.key, text(edgeType)]
        if (e.name === 'cursor') return [e.key, page.cursorOf()]
        if (e.name === 'node') return [e.key, recordSql(ctx, table, row, subSelections(e), joins)]
        throw graphqlErrors.unknownEdgeField()
      })
      const edges = numbered
        ? `json_agg(${jsonObject(edgePairs)} order by ${n}${backward ? ' desc' : ''}) filter (where ${inPage})`
        : `json_agg(${jsonObject(edgePairs)} order by ${orderSql(read, order, false)})`
      parts.push({ key: f.key, sql: `coalesce(${edges}, '[]'::json)`, part: 'page' })
    } else if (f.name === 'pageInfo') {
      parts.push({ key: f.key, sql: pageInfoSql(ctx, page, f), part: 'page' })
    } else if (f.name === 'totalCount' && table.totalCount) {
      parts.push({ key: f.key, sql: 'count(*)::int', part: 'set' })
    } else if (f.name === 'aggregate' && table.aggregate) {
      parts.push({ key: f.key, sql: aggregateSql(ctx, table, a, f), part: 'set' })
    } else {
      throw f.name === 'aggregate' ? graphqlErrors.aggregateDisabled() : graphqlErrors.unknownConnectionField()
    }
  }

  const pageRows = () => {
    const keyed = where(keyset ? [...base, keyset] : base)
    const sorted = orderSql((o) => o.value(a), order, backward)
    return numbered
      ? `select ${columns.select}${related}, row_number() over (order by ${sorted}) as n from ${pageFrom}${keyed} order by ${sorted} limit ${offset + limit + lookahead}`
      : `select ${columns.select}${related} from ${pageFrom}${keyed} order by ${sorted} limit ${limit}`
  }
  const fromPage = () => `${withJoins(`from (${pageRows()}) ${p}`, joins)} group by ()`
  return connectionObjectSql(ctx, parts, fromPage, `from ${from}${where(base)}`)
}

/**
 * The connection's object from its parts, in selection order: page parts
 * aggregate the page (`fromPage`), set parts the filtered set (`fromSet`),
 * each source read once, in a one-row subquery whose columns (`v<i>`, the
 * part's position) the object reads when both kinds are selected.
 */
function connectionObjectSql(ctx: PlanContext, parts: ConnectionPart[], fromPage: () => string, fromSet: string): string {
  const columnsOf = (part: Part) => parts.flatMap((x, i) => (x.part === part ? [`${x.sql} as v${i}`] : [])).join(', ')
  const object = (read: (x: ConnectionPart, i: number) => string) => jsonObject(parts.map((x, i) => [x.key, read(x, i)]))
  const hasPage = parts.some((x) => x.part === 'page')
  const hasSet = parts.some((x) => x.part === 'set')
  if (!hasSet) return hasPage ? `(select ${object((x) => x.sql)} ${fromPage()})` : `(select ${object((x) => x.sql)})`
  const s = nextAlias(ctx, 's')
  const setRow = `(select ${columnsOf('set')} ${fromSet}) ${s}`
  if (!hasPage) return `(select ${object((x, i) => (x.part === 'set' ? `${s}.v${i}` : x.sql))} from ${setRow})`
  const q = nextAlias(ctx, 'q')
  const read = (x: ConnectionPart, i: number) => (x.part === 'set' ? `${s}.v${i}` : x.part === 'page' ? `${q}.v${i}` : x.sql)
  return `(select ${object(read)} from (select ${columnsOf('page')} ${fromPage()}) ${q}, ${setRow})`
}

const AGGREGATE_FUNCTIONS: Record<string, string> = { sum: 'sum', avg: 'avg', min: 'min', max: 'max' }

/**
 * JSON of `aggregate` over the rows of alias `a`, as pg_graphql builds it:
 * each value is the JSON of PostgreSQL's own aggregate (a sum of integers
 * is a number, min of a timestamp its JSON text), not the column's
 * encoding in a record (where bigint and numeric are strings).
 */
function aggregateSql(ctx: PlanContext, table: TableModel, a: string, field: CollectedField): string {
  const aggType = `${table.typeName}Aggregate`
  const pairs: [string, string][] = collectFields(ctx, aggType, subSelections(field)).map((f) => {
    if (f.name === '__typename') return [f.key, text(aggType)]
    if (f.name === 'count') return [f.key, 'count(*)::int']
    const fn = AGGREGATE_FUNCTIONS[f.name]
    const resultType = `${table.typeName}${f.name[0]!.toUpperCase()}${f.name.slice(1)}AggregateResult`
    // A table without numeric columns has no sum or avg (schema.ts).
    const resultFields = fn ? objectType(ctx, resultType)?.getFields() : undefined
    if (!resultFields) throw graphqlErrors.unknownAggregateSelection(f.name, aggType)
    const inner: [string, string][] = collectFields(ctx, resultType, subSelections(f)).map((c) => {
      if (c.name === '__typename') return [c.key, text(resultType)]
      const column = table.columnByField.get(c.name)
      if (!column || !resultFields[c.name]) throw graphqlErrors.unknownAggregateField(c.name, resultType)
      return [c.key, `${fn}(${a}.${ident(column.name)})`]
    })
    return [f.key, jsonObject(inner)]
  })
  return jsonObject(pairs)
}
