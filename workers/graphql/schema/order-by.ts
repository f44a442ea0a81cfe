// Ordering: `<Type>OrderBy` (with `orderByRelated`'s relations),
// `<Type>AggregateOrderBy`, and `distinctOn`'s `<Type>DistinctOnField`.
import { GraphQLEnumType, type GraphQLInputFieldConfigMap, GraphQLInputObjectType } from 'graphql'
import type { TableModel } from '../model/index.ts'
import { isOrderable } from '../types.ts'
import { OrderByDirection } from './common.ts'
import { madeOnce, type SchemaBuild } from './context.ts'

export function orderByType(b: SchemaBuild, table: TableModel): GraphQLInputObjectType {
  return madeOnce(b.orderBys, table, () =>
    new GraphQLInputObjectType({
      name: `${table.typeName}OrderBy`,
      // A thunk: with orderByRelated, order types refer to each other (a book's author, an author's books).
      fields: () => {
        const fields: GraphQLInputFieldConfigMap = Object.fromEntries(table.columns.filter((c) => isOrderable(c.type)).map((c) => [c.field, { type: OrderByDirection }]))
        if (!table.features.has('orderByRelated')) return fields
        for (const r of table.relations) {
          if (!b.showsTable(r.target)) continue
          if (r.kind === 'many') fields[r.field] = { type: aggregateOrderBy(b, r.target), description: `Orders by the related \`${r.target.typeName}\` records` }
          else if (r.target.columns.some((c) => isOrderable(c.type))) fields[r.field] = { type: orderByType(b, r.target), description: `Orders by the related \`${r.target.typeName}\` record's fields` }
        }
        return fields
      },
    }),
  )
}

/** orderByRelated over a to-many relation: `{count: <direction>}`, the number of related rows the caller sees. */
export function aggregateOrderBy(b: SchemaBuild, table: TableModel): GraphQLInputObjectType {
  return madeOnce(b.aggregateOrderBys, table, () =>
    new GraphQLInputObjectType({
      name: `${table.typeName}AggregateOrderBy`,
      fields: { count: { type: OrderByDirection, description: `The number of related \`${table.typeName}\` records` } },
    }),
  )
}

/** distinctOn's values: the columns that compare for equality; each value is the column's SQL name. */
export function distinctOnField(b: SchemaBuild, table: TableModel): GraphQLEnumType {
  return madeOnce(b.distinctOnFields, table, () =>
    new GraphQLEnumType({
      name: `${table.typeName}DistinctOnField`,
      values: Object.fromEntries(table.columns.filter(isDistinctOnColumn).map((c) => [c.field, { value: c.name }])),
    }),
  )
}

/** A column distinctOn can name: orderable (DISTINCT ON sorts) and a name graphql-js accepts as an enum value. */
export const isDistinctOnColumn = (c: TableModel['columns'][number]) => isOrderable(c.type) && !['true', 'false', 'null'].includes(c.field)
