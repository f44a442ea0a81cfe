// What the planner carries while it walks one operation: the model, the
// graphql-js schema (for argument coercion), the fragments, the coerced
// variables, the statement's values and a counter for unique SQL aliases.
import {
  getArgumentValues,
  type FieldNode, type FragmentDefinitionNode, type GraphQLField, type GraphQLObjectType, type GraphQLSchema, type SelectionSetNode,
} from 'graphql'
import { collectFieldNodes } from '../collect-fields.ts'
import { graphqlErrors } from '../errors.ts'
import type { Model, TableModel } from '../model/index.ts'
import type { SqlValues } from '../sql.ts'
import type { RowRef } from './rows.ts'

export interface PlanContext {
  model: Model
  schema: GraphQLSchema
  fragments: Map<string, FragmentDefinitionNode>
  variables: Record<string, unknown>
  /** Where the client's values go: parameters of a query, literals of a mutation. */
  values: SqlValues
  aliases: number
  /**
   * JSON of one row of `table` (select.ts recordSql), given to the planner
   * rather than imported by the parts it recurses through (a connection's nodes).
   */
  recordSql: (ctx: PlanContext, table: TableModel, row: RowRef | string, sets: (SelectionSetNode | undefined)[], joins: string[]) => string
}

export function nextAlias(ctx: PlanContext, prefix: string): string {
  ctx.aliases += 1
  return `${prefix}${ctx.aliases}`
}

/** One response key of a selection set: its field and every node merged under it. */
export interface CollectedField {
  key: string
  name: string
  nodes: FieldNode[]
}

/**
 * The fields a selection set asks of an object of type `typeName` (which
 * implements `interfaces`), fragments spread and @skip/@include applied, in
 * document order (graphql-js's CollectFields).
 */
export function collectFields(
  ctx: PlanContext,
  typeName: string,
  selectionSets: readonly (SelectionSetNode | undefined)[],
  interfaces: readonly string[] = [],
): CollectedField[] {
  const applies = (condition: string | undefined) => condition === undefined || condition === typeName || interfaces.includes(condition)
  const collected = collectFieldNodes(selectionSets, true, ctx.fragments, ctx.variables, (condition) => applies(condition) || undefined)
  return [...collected].map(([key, { nodes }]) => ({ key, name: nodes[0]!.name.value, nodes }))
}

/** Sub-selections of a collected field, across its merged nodes. */
export function subSelections(field: CollectedField): (SelectionSetNode | undefined)[] {
  return field.nodes.map((n) => n.selectionSet)
}

export function fieldDef(type: GraphQLObjectType, field: CollectedField): GraphQLField<unknown, unknown> {
  const def = type.getFields()[field.name]
  if (!def) throw graphqlErrors.unknownField(field.name, type.name)
  return def
}

/** Coerced argument values of a field (defaults applied), as graphql-js gives them. */
export function argumentsOf(ctx: PlanContext, type: GraphQLObjectType, field: CollectedField): Record<string, unknown> {
  return getArgumentValues(fieldDef(type, field), field.nodes[0]!, ctx.variables)
}
