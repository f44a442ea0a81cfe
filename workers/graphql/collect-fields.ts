// graphql-js's CollectFields, once for the limits (limits.ts, before the
// document is planned) and the planner (plan/context.ts): the fields a
// selection set asks for, by response key in document order, fragments spread
// (each once) and @skip/@include applied.
import {
  getDirectiveValues, GraphQLIncludeDirective, GraphQLSkipDirective, Kind,
  type FieldNode, type FragmentDefinitionNode, type InlineFragmentNode, type SelectionSetNode,
} from 'graphql'

/** Whether @skip and @include let `node` through with `variables`. */
export function includedNode(node: Parameters<typeof getDirectiveValues>[1], variables: Record<string, unknown>): boolean {
  if (getDirectiveValues(GraphQLSkipDirective, node, variables)?.if === true) return false
  return getDirectiveValues(GraphQLIncludeDirective, node, variables)?.if !== false
}

/** One response key: every field node merged under it, and the scope its first node was found in. */
export interface CollectedNodes<S> {
  scope: S
  nodes: FieldNode[]
}

/**
 * The fields `sets` ask for in `scope`. `enter` gives the scope inside a fragment
 * from its type condition (undefined when it has none); undefined skips the fragment.
 */
export function collectFieldNodes<S>(
  sets: readonly (SelectionSetNode | undefined)[],
  scope: S,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  variables: Record<string, unknown>,
  enter: (condition: string | undefined, scope: S) => S | undefined,
): Map<string, CollectedNodes<S>> {
  const out = new Map<string, CollectedNodes<S>>()
  const visited = new Set<string>()
  const walk = (set: SelectionSetNode, scope: S) => {
    for (const selection of set.selections) {
      if (!includedNode(selection, variables)) continue
      if (selection.kind === Kind.FIELD) {
        const key = selection.alias?.value ?? selection.name.value
        const existing = out.get(key)
        if (existing) existing.nodes.push(selection)
        else out.set(key, { scope, nodes: [selection] })
        continue
      }
      let fragment: InlineFragmentNode | FragmentDefinitionNode | undefined
      if (selection.kind === Kind.INLINE_FRAGMENT) fragment = selection
      else if (visited.has(selection.name.value)) continue
      else {
        visited.add(selection.name.value)
        fragment = fragments.get(selection.name.value)
      }
      if (!fragment) continue
      const inner = enter(fragment.typeCondition?.name.value, scope)
      if (inner !== undefined) walk(fragment.selectionSet, inner)
    }
  }
  for (const set of sets) if (set) walk(set, scope)
  return out
}
