// A table's row type (columns, relations, computed fields) and the field of
// a function (root or computed).
import { type GraphQLFieldConfigArgumentMap, type GraphQLFieldConfigMap, GraphQLID, GraphQLObjectType } from 'graphql'
import type { FunctionModel, TableModel } from '../model/index.ts'
import { nn, NodeInterface } from './common.ts'
import { connectionArgs, connectionType } from './connections.ts'
import { madeOnce, type SchemaBuild } from './context.ts'
import { inputType, valueType } from './values.ts'

export function nodeType(b: SchemaBuild, table: TableModel): GraphQLObjectType {
  return madeOnce(b.nodes, table, () =>
    new GraphQLObjectType({
      name: table.typeName,
      description: table.description,
      interfaces: [NodeInterface],
      fields: () => {
        const fields: GraphQLFieldConfigMap<unknown, unknown> = {
          nodeId: { type: nn(GraphQLID), description: 'Globally Unique Record Identifier' },
        }
        for (const c of table.columns) {
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
