// Collections: `<Type>Connection`, `<Type>Edge` and a collection's
// arguments (paging, filter, orderBy, distinctOn).
import { type GraphQLFieldConfigArgumentMap, type GraphQLFieldConfigMap, GraphQLInt, GraphQLObjectType, GraphQLString } from 'graphql'
import type { TableModel } from '../model/index.ts'
import { isOrderable } from '../types.ts'
import { aggregateType } from './aggregates.ts'
import { list, nn, PageInfo, PAGING_ARGS } from './common.ts'
import { madeOnce, type SchemaBuild } from './context.ts'
import { filterType } from './filters.ts'
import { nodeType } from './nodes.ts'
import { distinctOnField, isDistinctOnColumn, orderByType } from './order-by.ts'

export function connectionArgs(b: SchemaBuild, table: TableModel): GraphQLFieldConfigArgumentMap {
  const args: GraphQLFieldConfigArgumentMap = {
    ...PAGING_ARGS(),
    filter: { type: filterType(b, table), description: 'Filters to apply to the results set when querying from the collection' },
  }
  // graphql-js refuses an input type without fields, which pg_graphql would give a table with no orderable field.
  if (table.columns.some((c) => isOrderable(c.type))) {
    args.orderBy = { type: list(nn(orderByType(b, table))), description: 'Sort order to apply to the collection' }
  }
  if (table.features.has('distinctOn') && table.columns.some(isDistinctOnColumn)) {
    args.distinctOn = { type: list(nn(distinctOnField(b, table))), description: 'Keeps one record per value of these fields: the first in the collection\'s order' }
  }
  return args
}

export function connectionType(b: SchemaBuild, table: TableModel): GraphQLObjectType {
  return madeOnce(b.connections, table, () => {
    const edge = new GraphQLObjectType({
      name: `${table.typeName}Edge`,
      fields: () => ({ cursor: { type: nn(GraphQLString) }, node: { type: nn(nodeType(b, table)) } }),
    })
    return new GraphQLObjectType({
      name: `${table.typeName}Connection`,
      fields: () => {
        const fields: GraphQLFieldConfigMap<unknown, unknown> = {
          edges: { type: nn(list(nn(edge))) },
          pageInfo: { type: nn(PageInfo) },
        }
        if (table.totalCount) fields.totalCount = { type: nn(GraphQLInt), description: 'The total number of records matching the `filter` criteria' }
        if (table.aggregate) fields.aggregate = { type: aggregateType(b, table), description: 'Aggregate functions calculated on the collection of `' + table.typeName + '`' }
        return fields
      },
    })
  })
}
