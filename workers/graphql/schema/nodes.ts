// A table's row type (columns, relations, computed fields), the field of a
// function (root or computed), and collections: `<Type>Connection`,
// `<Type>Edge` and a collection's arguments (paging, filter, orderBy,
// distinctOn). One module: a row type's relations are collections of row
// types, so the two are built from each other.
import { type GraphQLFieldConfigArgumentMap, type GraphQLFieldConfigMap, GraphQLID, GraphQLInt, GraphQLObjectType, GraphQLString } from 'graphql'
import type { FunctionModel, TableModel } from '../model/index.ts'
import { isOrderable } from '../types.ts'
import { aggregateType } from './aggregates.ts'
import { list, nn, NodeInterface, PageInfo, PAGING_ARGS } from './common.ts'
import { madeOnce, type SchemaBuild } from './context.ts'
import { filterType } from './filters.ts'
import { distinctOnField, isDistinctOnColumn, orderByType } from './order-by.ts'
import { inputType, valueType } from './values.ts'

export function nodeType(b: SchemaBuild, table: TableModel): GraphQLObjectType {
  return madeOnce(b.nodes, table, () =>
    new GraphQLObjectType({
      name: table.typeName,
      description: table.description,
      // A view without a key (the row type of a computed field) has no nodeId: nothing identifies its rows.
      interfaces: table.keyless ? [] : [NodeInterface],
      fields: () => {
        const fields: GraphQLFieldConfigMap<unknown, unknown> = table.keyless
          ? {}
          : { nodeId: { type: nn(GraphQLID), description: 'Globally Unique Record Identifier' } }
        for (const c of table.columns) {
          if (c.shadowed) continue
          const type = valueType(b, c.type)
          fields[c.field] = { type: c.notNull && table.isTable ? nn(type) : type, description: c.description }
        }
        for (const r of table.relations) {
          if (!b.showsTable(r.target)) continue
          fields[r.field] =
            r.kind === 'one'
              ? { type: r.nonNull ? nn(nodeType(b, r.target)) : nodeType(b, r.target) }
              : { type: connectionType(b, r.target), args: connectionArgs(b, r.target) }
        }
        for (const f of table.computed) if (b.showsResult(f)) fields[f.field] = functionField(b, f, f.args.length > 0)
        return fields
      },
    }),
  )
}

export function functionField(b: SchemaBuild, f: FunctionModel, withArgs: boolean) {
  const args: GraphQLFieldConfigArgumentMap = {}
  if (withArgs) {
    for (const a of f.args) {
      const type = inputType(b, a.type)
      args[a.field] = { type: a.required ? nn(type) : type, ...(a.defaultValue !== undefined ? { defaultValue: JSON.parse(a.defaultValue) } : {}) }
    }
  }
  const r = f.returns
  if (r.kind === 'scalar') return { type: valueType(b, r.type), args, description: f.description }
  if (r.kind === 'row') return { type: nodeType(b, r.table), args, description: f.description }
  return { type: connectionType(b, r.table), args: { ...args, ...connectionArgs(b, r.table) }, description: f.description }
}

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
