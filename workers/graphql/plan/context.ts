// What the planner carries while it walks one operation: the model, the
// graphql-js schema (for argument coercion), the fragments, the coerced
// variables, the statement's values and a counter for unique SQL aliases.
import {
  getArgumentValues, getDirectiveValues, GraphQLIncludeDirective, GraphQLSkipDirective, Kind,
  type FieldNode, type FragmentDefinitionNode, type GraphQLField, type GraphQLObjectType, type GraphQLSchema, type SelectionSetNode,
} from 'graphql'
import { graphqlErrors } from '../errors.ts'
import type { Model } from '../model/index.ts'
import type { SqlValues } from '../sql.ts'

export interface PlanContext {
  model: Model
  schema: GraphQLSchema
  fragments: Map<string, FragmentDefinitionNode>
  variables: Record<string, unknown>
  /** Where the client's values go: parameters of a query, literals of a mutation. */
  values: SqlValues
  aliases: number
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

function included(ctx: PlanContext, node: Parameters<typeof getDirectiveValues>[1]): boolean {
  const skip = getDirectiveValues(GraphQLSkipDirective, node, ctx.variables)
  if (skip?.if === true) return false
  const include = getDirectiveValues(GraphQLIncludeDirective, node, ctx.variables)
  return include?.if !== false
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
  const out = new Map<string, CollectedField>()
  const visited = new Set<string>()
  const applies = (condition: string | undefined) => condition === undefined || condition === typeName || interfaces.includes(condition)
  const walk = (set: SelectionSetNode) => {
    for (const selection of set.selections) {
      if (!included(ctx, selection)) continue
      if (selection.kind === Kind.FIELD) {
        const key = selection.alias?.value ?? selection.name.value
        const existing = out.get(key)
        if (existing) existing.nodes.push(selection)
        else out.set(key, { key, name: selection.name.value, nodes: [selection] })
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        if (applies(selection.typeCondition?.name.value)) walk(selection.selectionSet)
      } else {
        const name = selection.name.value
        if (visited.has(name)) continue
        visited.add(name)
        const fragment = ctx.fragments.get(name)
        if (fragment && applies(fragment.typeCondition.name.value)) walk(fragment.selectionSet)
      }
    }
  }
  for (const set of selectionSets) if (set) walk(set)
  return [...out.values()]
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
