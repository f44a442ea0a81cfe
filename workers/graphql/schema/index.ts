// Builds the graphql-js schema of a model: the types, fields and arguments
// pg_graphql (v1.6) generates, so documents validate and introspect exactly
// against them. Execution does not go through graphql-js resolvers: the
// planner turns the validated document into SQL (plan/). One file per part:
// values.ts, filters.ts, connections.ts, nodes.ts, aggregates.ts,
// mutations.ts, order-by.ts; context.ts holds what one build shares.
import {
  GraphQLID, GraphQLIncludeDirective, GraphQLObjectType, GraphQLSchema, GraphQLSkipDirective,
  type GraphQLFieldConfigMap, type GraphQLNamedType, type GraphQLSchemaConfig,
} from 'graphql'
import type { FunctionModel, Model, TableModel } from '../model/index.ts'
import { BigFloatScalar, BigIntScalar, CursorScalar, DateScalar, DatetimeScalar, JSONScalar, OpaqueScalar, TimeScalar, UUIDScalar } from '../scalars.ts'
import { OPTIONAL_SCALARS } from '../filter-operators.ts'
import type { ScalarName } from '../types.ts'
import { byCodePoint, FilterIs, nn, NodeInterface, OrderByDirection, PageInfo } from './common.ts'
import { SchemaBuild } from './context.ts'
import { mutationFields } from './mutations.ts'
import { connectionArgs, connectionType, functionField, nodeType } from './nodes.ts'
import { SCALAR_FILTERS } from './scalar-filters.ts'
import { enumType, inputType } from './values.ts'

/**
 * The schemas introspection answers from when only some served schemas
 * switch it on: their part alone, as pg_graphql shows it (other schemas'
 * types are neither listed nor found by `__type`).
 */
const introspectedParts = new WeakMap<GraphQLSchema, GraphQLSchema>()

export function buildSchema(model: Model): GraphQLSchema {
  const schema = schemaOf(model, () => true)
  const shown = model.introspectedSchemas
  const outside = (o: { schema: string }) => !shown.has(o.schema)
  if (model.introspection && [model.tables, model.enums, model.queryFunctions, model.mutationFunctions].some((all) => all.some(outside))) {
    introspectedParts.set(schema, schemaOf(model, (name) => shown.has(name)))
  }
  return schema
}

/** The schema `__schema` and `__type` answer from. */
export function introspectedSchemaOf(schema: GraphQLSchema): GraphQLSchema {
  return introspectedParts.get(schema) ?? schema
}

/** The graphql-js schema of the model's objects in the schemas `shows` accepts. */
function schemaOf(model: Model, shows: (schema: string) => boolean): GraphQLSchema {
  const b = new SchemaBuild(model, shows)
  for (const e of model.enums) if (shows(e.schema)) enumType(b, e)
  const query: GraphQLFieldConfigMap<unknown, unknown> = {
    node: {
      type: NodeInterface,
      args: { nodeId: { type: nn(GraphQLID), description: "The record's `ID`" } },
      description: 'Retrieve a record by its `ID`',
    },
  }
  const mutation: GraphQLFieldConfigMap<unknown, unknown> = {}
  for (const table of model.tables) {
    if (!b.showsTable(table)) continue
    // `root: false` drops only these two: the type stays (relations, node, mutations reach it).
    if (table.root) query[`${table.fieldBase}Collection`] = {
      type: nn(connectionType(b, table)),
      args: connectionArgs(b, table),
      description: `A pagable collection of type \`${table.typeName}\``,
    }
    if (table.root && table.primaryKey.every((c) => isByPkArgument(table, c))) {
      query[`${table.fieldBase}ByPk`] = {
        type: nodeType(b, table),
        args: Object.fromEntries(table.primaryKey.map((c) => [c.field, { type: nn(inputType(b, c.type)) }])),
        description: `Retrieve a record of type \`${table.typeName}\` by its primary key`,
      }
    }
    mutationFields(b, table, mutation)
  }
  const shown = (f: FunctionModel) => b.shows(f.schema) && b.showsResult(f)
  for (const f of model.queryFunctions) if (!(f.field in query) && shown(f)) query[f.field] = functionField(b, f, true)
  for (const f of model.mutationFunctions) if (!(f.field in mutation) && shown(f)) mutation[f.field] = functionField(b, f, true)

  const sorted = (fields: GraphQLFieldConfigMap<unknown, unknown>) =>
    Object.fromEntries(Object.entries(fields).sort(([a], [b2]) => byCodePoint(a, b2)))
  const types = [
    ...[...SCALAR_FILTERS.values()].filter((f) => !OPTIONAL_SCALARS.has(f.name.slice(0, -'Filter'.length) as ScalarName)), ...b.enums.values(), ...b.enumFilters.values(), FilterIs, OrderByDirection, PageInfo,
    BigFloatScalar, BigIntScalar, CursorScalar, DateScalar, DatetimeScalar, JSONScalar, OpaqueScalar, TimeScalar, UUIDScalar,
    ...model.tables.filter((t) => b.showsTable(t)).map((t) => nodeType(b, t)),
  ]
  return schemaListedByName({
    query: new GraphQLObjectType({ name: 'Query', description: 'The root type for querying data', fields: sorted(query) }),
    mutation: Object.keys(mutation).length > 0
      ? new GraphQLObjectType({ name: 'Mutation', description: 'The root type for creating and mutating data', fields: sorted(mutation) })
      : undefined,
    types,
    // The two pg_graphql knows (and lists).
    directives: [GraphQLIncludeDirective, GraphQLSkipDirective],
  })
}

/** A `<table>ByPk` argument: a primary key column of a type pg_graphql takes there, that is a field. */
function isByPkArgument(table: TableModel, c: TableModel['columns'][number]): boolean {
  return !c.type.list && ['Int', 'BigInt', 'String', 'UUID'].includes(c.type.scalar ?? '') && table.columnByField.get(c.field) === c
}

/**
 * The schema with its types in name order, as pg_graphql lists `__schema {
 * types }` (and `possibleTypes`). graphql-js keeps the order it meets types
 * in, so the draft's complete list is given back to it sorted. Once per
 * schema build, never per request.
 */
function schemaListedByName(config: GraphQLSchemaConfig): GraphQLSchema {
  const draft = new GraphQLSchema(config)
  const types: GraphQLNamedType[] = Object.values(draft.getTypeMap()).sort((a, b) => byCodePoint(a.name, b.name))
  return new GraphQLSchema({ ...config, types })
}
