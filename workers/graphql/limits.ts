// Document limits checked before validation and before anything runs
// (SPEC 8): fragments may not refer to themselves, selections nest at most 32
// levels, and a document may expand to at most one million selections once
// fragments are spread. Sizes and depths of fragments are memoised, so a
// document built to explode (each fragment spreading the previous one twice)
// is measured in time linear in its text, never expanded.
import { Kind, type DocumentNode, type FragmentDefinitionNode, type SelectionSetNode } from 'graphql'
import { graphqlErrors, type GraphqlError } from './errors.ts'

export const MAX_DEPTH = 32
export const MAX_SELECTIONS = 1_000_000

interface Measure {
  size: number
  depth: number
}

/** The first limit the document breaks, or undefined. */
export function checkLimits(document: DocumentNode): GraphqlError | undefined {
  const fragments = new Map<string, FragmentDefinitionNode>()
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d)

  // Fragment cycles: depth-first search with colours.
  const state = new Map<string, 'active' | 'done'>()
  let cycle: string | undefined
  const spreadsOf = (set: SelectionSetNode, out: string[] = []): string[] => {
    for (const s of set.selections) {
      if (s.kind === Kind.FRAGMENT_SPREAD) out.push(s.name.value)
      else if (s.selectionSet) spreadsOf(s.selectionSet, out)
    }
    return out
  }
  const visit = (name: string): void => {
    if (cycle !== undefined) return
    const fragment = fragments.get(name)
    if (!fragment) return
    state.set(name, 'active')
    for (const next of spreadsOf(fragment.selectionSet)) {
      const s = state.get(next)
      if (s === 'active') {
        cycle = next
        return
      }
      if (s === undefined) visit(next)
    }
    state.set(name, 'done')
  }
  for (const name of fragments.keys()) if (!state.has(name)) visit(name)
  if (cycle !== undefined) return graphqlErrors.fragmentCycle(cycle)

  const memo = new Map<string, Measure>()
  const measure = (set: SelectionSetNode): Measure => {
    let size = 0
    let depth = 0
    for (const s of set.selections) {
      if (s.kind === Kind.FIELD) {
        const inner = s.selectionSet ? measure(s.selectionSet) : { size: 0, depth: 0 }
        size += 1 + inner.size
        depth = Math.max(depth, 1 + inner.depth)
      } else if (s.kind === Kind.INLINE_FRAGMENT) {
        const inner = measure(s.selectionSet)
        size += inner.size
        depth = Math.max(depth, inner.depth)
      } else {
        const inner = fragmentMeasure(s.name.value)
        size += inner.size
        depth = Math.max(depth, inner.depth)
      }
      if (size > MAX_SELECTIONS) break
    }
    return { size, depth }
  }
  const fragmentMeasure = (name: string): Measure => {
    let m = memo.get(name)
    if (!m) {
      const fragment = fragments.get(name)
      m = fragment ? measure(fragment.selectionSet) : { size: 0, depth: 0 }
      memo.set(name, m)
    }
    return m
  }
  let total = 0
  for (const d of document.definitions) {
    if (d.kind !== Kind.OPERATION_DEFINITION) continue
    const m = measure(d.selectionSet)
    if (m.depth > MAX_DEPTH) return graphqlErrors.tooDeep(MAX_DEPTH)
    total += m.size
    if (total > MAX_SELECTIONS) return graphqlErrors.tooLarge(MAX_SELECTIONS)
  }
  for (const name of fragments.keys()) {
    const m = fragmentMeasure(name)
    if (m.depth > MAX_DEPTH) return graphqlErrors.tooDeep(MAX_DEPTH)
    if (m.size > MAX_SELECTIONS) return graphqlErrors.tooLarge(MAX_SELECTIONS)
  }
  return undefined
}
