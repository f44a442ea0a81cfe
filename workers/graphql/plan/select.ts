// Reading rows: a record's selection (columns, nodeId, relations, computed
// fields) and connections (paging, filter, orderBy, cursors, pageInfo,
// totalCount, aggregate) as JSON-building SQL. A count or aggregate is
// computed only when selected; nested collections are correlated subqueries,
// and a to-one relation is a LATERAL join of the query that reads its parent
// row (a subquery run per row costs PostgreSQL noticeably more than a join).
import type { GraphQLObjectType } from 'graphql'
import { graphqlErrors } from '../errors.ts'
import type { FunctionModel, RelationModel, TableModel } from '../model.ts'
import { base64JsonArray, ident, jsonObject, output, qualified, text, type SqlValues } from '../sql.ts'
import { argumentsOf, collectFields, nextAlias, subSelections, type CollectedField, type PlanContext } from './context.ts'
import { decodeCursor, itemSql, type DecodedArray } from './cursor.ts'
import { filterSql } from './filter.ts'

type Sets = ReturnType<typeof subSelections>

function objectType(ctx: PlanContext, name: string): GraphQLObjectType {
  return ctx.schema.getType(name) as GraphQLObjectType
}

function unknown(field: CollectedField, typeName: string): never {
  throw graphqlErrors.unknownField(field.name, typeName)
}

/**
 * JSON of one row of `table`, the row being the SQL expression `row`. To-one
 * relations add their LATERAL joins to `joins`, which the caller appends to
 * the FROM clause that defines `row`, in order.
 */
export function recordSql(ctx: PlanContext, table: TableModel, row: string, sets: Sets, joins: string[]): string {
  const type = objectType(ctx, table.typeName)
  const pairs: [string, string][] = []
  for (const field of collectFields(ctx, table.typeName, sets, ['Node'])) {
    pairs.push([field.key, recordFieldSql(ctx, table, type, row, field, joins)])
  }
  return jsonObject(pairs)
}

/** `from` followed by the joins records added. */
export function withJoins(from: string, joins: readonly string[]): string {
  return joins.length === 0 ? from : `${from} ${joins.join(' ')}`
}

function recordFieldSql(ctx: PlanContext, table: TableModel, type: GraphQLObjectType, row: string, field: CollectedField, joins: string[]): string {
  if (field.name === '__typename') return text(table.typeName)
  if (field.name === 'nodeId') {
    return base64JsonArray([`${text(table.schema)}::text`, `${text(table.name)}::text`, ...table.primaryKey.map((c) => `${row}.${ident(c.name)}`)])
  }
  const column = table.columnByField.get(field.name)
  if (column) return output(column.type, `${row}.${ident(column.name)}`)
  const relation = table.relations.find((r) => r.field === field.name)
  if (relation) return relationSql(ctx, type, row, relation, field, joins)
  const computed = table.computed.find((f) => f.field === field.name)
  if (computed) return functionResultSql(ctx, type, computed, `${qualified(computed.schema, computed.name)}(${row})`, field)
  return unknown(field, table.typeName)
}

function relationSql(ctx: PlanContext, parentType: GraphQLObjectType, row: string, relation: RelationModel, field: CollectedField, joins: string[]): string {
  const join = (alias: string) =>
    relation.targetColumns.map((c, i) => `${alias}.${ident(c)} = ${row}.${ident(relation.columns[i]!)}`).join(' and ')
  const source = qualified(relation.target.schema, relation.target.name)
  if (relation.kind === 'one') {
    const x = nextAlias(ctx, 'x')
    const sets = subSelections(field)
    if (relation.unique) {
      // A constraint allows one match at most: a plain join, found when its key matched.
      joins.push(`left join ${source} ${x} on ${join(x)}`)
      return `case when ${x}.${ident(relation.targetColumns[0]!)} is not null then ${recordSql(ctx, relation.target, x, sets, joins)} end`
    }
    // A view's declared key promises nothing: take the first match. "0e" tells a found row from none.
    const a = nextAlias(ctx, 'a')
    const columns = rowColumns(relation.target, a)
    joins.push(`left join lateral (select true as "0e", ${columns.select} from ${source} ${a} where ${join(a)} limit 1) ${x} on true`)
    return `case when ${x}."0e" then ${recordSql(ctx, relation.target, columns.rowOf(x), sets, joins)} end`
  }
  return connectionSql(ctx, relation.target, source, join, argumentsOf(ctx, parentType, field), field)
}

/**
 * What a subquery over `table` (aliased `alias`) selects, and how the outer
 * query reads its columns. Plain columns when the table has no computed
 * fields: a whole-row composite costs PostgreSQL a tuple built and taken
 * apart again for every field read. A computed field takes the row itself.
 */
export function rowColumns(table: TableModel, alias: string): { select: string; rowOf: (outer: string) => string } {
  if (table.computed.length > 0 || table.columns.length === 0) return { select: `${alias} as r`, rowOf: (outer) => `(${outer}.r)` }
  return { select: table.columns.map((c) => `${alias}.${ident(c.name)}`).join(', '), rowOf: (outer) => outer }
}

/** JSON of the single row of `table` that `rest` (from/where, alias `alias`) finds, or null when there is none. */
export function singleRowSql(ctx: PlanContext, table: TableModel, alias: string, rest: string, sets: Sets): string {
  const x = nextAlias(ctx, 'x')
  const columns = rowColumns(table, alias)
  const joins: string[] = []
  const record = recordSql(ctx, table, columns.rowOf(x), sets, joins)
  return `(select ${record} ${withJoins(`from (select ${columns.select} ${rest}) ${x}`, joins)})`
}

/** JSON of a function field's result: scalar, one row, or a connection. `call` is the SQL call. */
export function functionResultSql(ctx: PlanContext, parentType: GraphQLObjectType, fn: FunctionModel, call: string, field: CollectedField): string {
  const r = fn.returns
  if (r.kind === 'scalar') return output(r.type, call)
  if (r.kind === 'row') {
    const f = nextAlias(ctx, 'f')
    return singleRowSql(ctx, r.table, f, `from ${call} ${f} where not (${f} is null)`, subSelections(field))
  }
  return connectionSql(ctx, r.table, call, () => undefined, argumentsOf(ctx, parentType, field), field)
}

type Direction = 'AscNullsFirst' | 'AscNullsLast' | 'DescNullsFirst' | 'DescNullsLast'

interface OrderItem {
  column: TableModel['columns'][number]
  direction: Direction
}

const FLIP: Record<Direction, Direction> = {
  AscNullsFirst: 'DescNullsLast',
  AscNullsLast: 'DescNullsFirst',
  DescNullsFirst: 'AscNullsLast',
  DescNullsLast: 'AscNullsFirst',
}

function orderSql(alias: string, items: OrderItem[], reverse: boolean): string {
  return items
    .map(({ column, direction }) => {
      const d = reverse ? FLIP[direction] : direction
      return `${alias}.${ident(column.name)} ${d.startsWith('Asc') ? 'asc' : 'desc'} nulls ${d.endsWith('First') ? 'first' : 'last'}`
    })
    .join(', ')
}

/** Rows strictly after the cursor in `items` order (strictly before with `reverse`). Never null. */
function keysetSql(values: SqlValues, alias: string, items: OrderItem[], cursor: DecodedArray, reverse: boolean): string {
  const disjuncts: string[] = []
  items.forEach((item, i) => {
    const col = `${alias}.${ident(item.column.name)}`
    const value = (k: number) => itemSql(values, cursor, k, items[k]!.column.type.sqlType)
    const equal = items.slice(0, i).map((prev, k) => (cursor.items[k] === null ? `${alias}.${ident(prev.column.name)} is null` : `${alias}.${ident(prev.column.name)} = ${value(k)}`))
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

/**
 * JSON of a connection over `source` (a table or a set-returning call),
 * rows limited by `join` (a correlation to the parent row) and the arguments.
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

  const order: OrderItem[] = []
  for (const entry of (args.orderBy as Record<string, Direction>[] | null | undefined) ?? []) {
    for (const [key, direction] of Object.entries(entry)) {
      const column = table.columnByField.get(key)
      if (!column) throw graphqlErrors.invalidInput(`${table.typeName}OrderBy`)
      if (direction) order.push({ column, direction })
    }
  }
  for (const column of table.primaryKey) order.push({ column, direction: 'AscNullsLast' })

  const a = nextAlias(ctx, 'a')
  const base = [join(a), filterSql(ctx.values, table, a, args.filter)].filter((c): c is string => c !== undefined && c !== 'true')
  const cursorText = (backward ? args.before : args.after) as string | null | undefined
  let keyset: string | undefined
  if (cursorText !== undefined && cursorText !== null) {
    const cursor = decodeCursor(cursorText)
    if (cursor.items.length !== order.length) throw graphqlErrors.cursorMismatch()
    keyset = keysetSql(ctx.values, a, order, cursor, backward)
  }
  const where = (conditions: string[]) => (conditions.length > 0 ? ` where ${conditions.join(' and ')}` : '')

  const connType = `${table.typeName}Connection`
  const fields = collectFields(ctx, connType, subSelections(field))
  const needsPage = fields.some((f) => f.name === 'edges' || f.name === 'pageInfo')
  const p = nextAlias(ctx, 'p')
  const columns = rowColumns(table, a)
  const row = columns.rowOf(p)
  // The row number's name cannot clash with a column's: generated names never start with a digit.
  const n = `${p}."0n"`
  const inPage = offset > 0 ? `${n} > ${offset} and ${n} <= ${offset + limit}` : `${n} <= ${limit}`
  const outputOrder = `${n}${backward ? ' desc' : ''}`
  const cursorOf = () => base64JsonArray(order.map((o) => `${row}.${ident(o.column.name)}`))
  const exists = (extra: string) => `exists(select 1 from ${source} ${a}${where([...base, extra])})`

  // One row past the page tells pageInfo whether there is more; without
  // pageInfo that row is never read, and fetching it can cost a long scan.
  const lookahead = fields.some((f) => f.name === 'pageInfo') ? 1 : 0
  // Row numbers are needed for offsets and pageInfo; a plain page is ordered by its keys.
  const numbered = lookahead === 1 || offset > 0

  const pairs: [string, string][] = []
  const joins: string[] = []
  for (const f of fields) {
    if (f.name === '__typename') {
      pairs.push([f.key, text(connType)])
    } else if (f.name === 'edges') {
      const edgeType = `${table.typeName}Edge`
      const edgePairs: [string, string][] = collectFields(ctx, edgeType, subSelections(f)).map((e) => {
        if (e.name === '__typename') return [e.key, text(edgeType)]
        if (e.name === 'cursor') return [e.key, cursorOf()]
        if (e.name === 'node') return [e.key, recordSql(ctx, table, row, subSelections(e), joins)]
        return unknown(e, edgeType)
      })
      pairs.push([
        f.key,
        numbered
          ? `coalesce(json_agg(${jsonObject(edgePairs)} order by ${outputOrder}) filter (where ${inPage}), '[]'::json)`
          : `coalesce(json_agg(${jsonObject(edgePairs)} order by ${orderSql(row, order, false)}), '[]'::json)`,
      ])
    } else if (f.name === 'pageInfo') {
      const more = `count(*) > ${offset + limit}`
      const cursorAt = (fromEnd: boolean) =>
        `(array_agg(${cursorOf()} order by ${n}${fromEnd !== backward ? ' desc' : ''}) filter (where ${inPage}))[1]`
      const previous = backward ? more : keyset ? exists(`not ${keyset}`) : offset > 0 ? exists('true') : 'false'
      const next = backward ? (keyset ? exists(`not ${keyset}`) : 'false') : more
      const infoPairs: [string, string][] = collectFields(ctx, 'PageInfo', subSelections(f)).map((e) => {
        if (e.name === '__typename') return [e.key, `'PageInfo'`]
        if (e.name === 'hasNextPage') return [e.key, next]
        if (e.name === 'hasPreviousPage') return [e.key, previous]
        if (e.name === 'startCursor') return [e.key, cursorAt(false)]
        if (e.name === 'endCursor') return [e.key, cursorAt(true)]
        return unknown(e, 'PageInfo')
      })
      pairs.push([f.key, jsonObject(infoPairs)])
    } else if (f.name === 'totalCount' && table.totalCount) {
      pairs.push([f.key, `(select count(*) from ${source} ${a}${where(base)})::int`])
    } else if (f.name === 'aggregate' && table.aggregate) {
      pairs.push([f.key, aggregateSql(ctx, table, source, a, where(base), f)])
    } else {
      unknown(f, connType)
    }
  }
  const page = !needsPage
    ? undefined
    : numbered
      ? `select ${columns.select}, row_number() over (order by ${orderSql(a, order, backward)}) as "0n" from ${source} ${a}${where(keyset ? [...base, keyset] : base)} order by ${orderSql(a, order, backward)} limit ${offset + limit + lookahead}`
      : `select ${columns.select} from ${source} ${a}${where(keyset ? [...base, keyset] : base)} order by ${orderSql(a, order, backward)} limit ${limit}`
  return `(select ${jsonObject(pairs)} ${withJoins(`from (${page ?? 'select null as r, 0 as "0n" limit 0'}) ${p}`, joins)})`
}

function aggregateSql(ctx: PlanContext, table: TableModel, source: string, a: string, where: string, field: CollectedField): string {
  const aggType = `${table.typeName}Aggregate`
  const pairs: [string, string][] = collectFields(ctx, aggType, subSelections(field)).map((f) => {
    if (f.name === '__typename') return [f.key, text(aggType)]
    if (f.name === 'count') return [f.key, 'count(*)::int']
    const fn = ({ sum: 'sum', avg: 'avg', min: 'min', max: 'max' } as Record<string, string>)[f.name]
    if (!fn) return unknown(f, aggType)
    const resultType = `${table.typeName}${f.name[0]!.toUpperCase()}${f.name.slice(1)}AggregateResult`
    const inner: [string, string][] = collectFields(ctx, resultType, subSelections(f)).map((c) => {
      if (c.name === '__typename') return [c.key, text(resultType)]
      const column = table.columnByField.get(c.name)
      if (!column || !(objectType(ctx, resultType)?.getFields()[c.name])) {
        throw graphqlErrors.unknownField(c.name, resultType)
      }
      const expr = `${fn}(${a}.${ident(column.name)})`
      return [c.key, fn === 'sum' || fn === 'avg' ? `(${expr})::text` : output(column.type, expr)]
    })
    return [f.key, jsonObject(inner)]
  })
  return `(select ${jsonObject(pairs)} from ${source} ${a}${where})`
}
