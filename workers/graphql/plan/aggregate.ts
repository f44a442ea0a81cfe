// A connection's `aggregate` (count, sum, avg, min, max) over the filtered set.
import { graphqlErrors } from '../errors.ts'
import type { TableModel } from '../model/index.ts'
import { ident, jsonObject, text } from '../sql.ts'
import { collectFields, subSelections, type CollectedField, type PlanContext } from './context.ts'
import { objectType } from './rows.ts'

const AGGREGATE_FUNCTIONS: Record<string, string> = { sum: 'sum', avg: 'avg', min: 'min', max: 'max' }

/**
 * JSON of `aggregate` over the rows of alias `a`, as pg_graphql builds it:
 * each value is the JSON of PostgreSQL's own aggregate (a sum of integers
 * is a number, min of a timestamp its JSON text), not the column's
 * encoding in a record (where bigint and numeric are strings).
 */
export function aggregateSql(ctx: PlanContext, table: TableModel, a: string, field: CollectedField): string {
  const aggType = `${table.typeName}Aggregate`
  const pairs: [string, string][] = collectFields(ctx, aggType, subSelections(field)).map((f) => {
    if (f.name === '__typename') return [f.key, text(aggType)]
    if (f.name === 'count') return [f.key, 'count(*)::int']
    const fn = AGGREGATE_FUNCTIONS[f.name]
    const resultType = `${table.typeName}${f.name[0]!.toUpperCase()}${f.name.slice(1)}AggregateResult`
    // A table without numeric columns has no sum or avg (schema/aggregates.ts).
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
