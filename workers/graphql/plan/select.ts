// Reading rows: a record's selection (columns, nodeId, relations, computed
// fields, function results) as JSON-building SQL; connections are
// connection.ts. Nested collections are correlated subqueries, and a to-one
// relation is a LATERAL join of the query that reads its parent row (a
// subquery run per row costs PostgreSQL noticeably more than a join).
//
// Every subquery that adds a column of the engine's own (a row number, a
// found flag) beside a table's columns names all of them itself (`c1`, `c2`,
// `n`, `e`): a table may have a column of any name, so a name the engine
// picks could otherwise be one of the table's. For the same reason a row read
// whole is never its bare alias (sql.ts wholeRow).
import { Kind, type GraphQLObjectType } from 'graphql'
import type { FunctionModel, RelationModel, TableModel } from '../model/index.ts'
import { base64JsonArray, ident, jsonObject, literal, qualified, output, text, wholeRow } from '../sql.ts'
import type { CompositeModel } from '../types.ts'
import { connectionSql } from './connection.ts'
import { argumentsOf, collectFields, nextAlias, subSelections, type CollectedField, type PlanContext } from './context.ts'
import { objectType, rowColumns, rowRef, unknown, withJoins, type RowRef } from './rows.ts'

type Sets = ReturnType<typeof subSelections>

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

function recordFieldSql(ctx: PlanContext, table: TableModel, type: GraphQLObjectType, row: RowRef, field: CollectedField, joins: string[]): string {
  if (field.name === '__typename') return text(table.typeName)
  if (field.name === 'nodeId') {
    return base64JsonArray([`${text(table.schema)}::text`, `${text(table.name)}::text`, ...table.primaryKey.map((c) => row.column(c.name))])
  }
  const column = table.columnByField.get(field.name)
  if (column && !column.shadowed) {
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
 * given. Every argument before the last unnamed one is required (model/functions.ts),
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
