// Document limits, checked before anything costly runs (SPEC 8). In order:
//
// 1. On the text, before parsing (`checkText`): at most 15,000 tokens and 128
//    levels of nested braces, brackets and parentheses, counted with
//    graphql-js's own lexer, which stops at the first ceiling, so a 600 KB
//    document costs what its first 15,000 tokens cost (a few milliseconds)
//    instead of a parse, a validation and a plan of all of it (about a second).
// 2. On the parsed document, before validation (`checkSize`): at most 2,000
//    fields and 500 aliases as written (not expanded).
// 3. Before validation (`checkLimits`): fragments may not refer to
//    themselves, selections nest at most 32 levels, and a document may expand
//    to at most one million selections once fragments are spread. Sizes and
//    depths of fragments are memoised, so a document built to explode (each
//    fragment spreading the previous one twice) is measured in time linear in
//    its text, never expanded.
//
// Why these figures: 15,000 tokens is Apollo Router's default
// (`parser_max_tokens`); a hand-written or generated (Apollo, Relay, Hasura
// console) document of a few hundred fields is one to three thousand. Nesting
// of 128 leaves room for 32 levels of fields each inside an inline fragment
// (64) plus nested filter arguments, and stays far below where graphql-js's
// recursive parser overflows its stack (about 1,000 on the main thread).
// 2,000 fields is several times a large real document; it also keeps one
// selection set below the few thousand members at which the single SQL
// statement a query becomes fails in PostgreSQL ("stack depth limit
// exceeded"). Aliases are what multiplies work (the same collection asked for
// again under another name is another subquery, where a repeated field is
// merged), so they get the tighter ceiling; 500 still allows batching
// hundreds of lookups by alias in one request.
import { Kind, Lexer, Source, TokenKind, type DocumentNode, type FragmentDefinitionNode, type SelectionSetNode } from 'graphql'
import { graphqlErrors, type GraphqlError } from './errors.ts'

export const MAX_DEPTH = 32
export const MAX_SELECTIONS = 1_000_000
export const MAX_TOKENS = 15_000
export const MAX_NESTING = 128
export const MAX_FIELDS = 2_000
export const MAX_ALIASES = 500

const OPENING = new Set<string>([TokenKind.BRACE_L, TokenKind.BRACKET_L, TokenKind.PAREN_L])
const CLOSING = new Set<string>([TokenKind.BRACE_R, TokenKind.BRACKET_R, TokenKind.PAREN_R])

/**
 * The first ceiling the text breaks (tokens, nesting), or undefined. A
 * syntax error is left for the parser to report with its own sentence; it
 * meets the same error no later than the lexer did here.
 */
export function checkText(query: string): GraphqlError | undefined {
  const lexer = new Lexer(new Source(query))
  let tokens = 0
  let nesting = 0
  try {
    for (let token = lexer.advance(); token.kind !== TokenKind.EOF; token = lexer.advance()) {
      if (++tokens > MAX_TOKENS) return graphqlErrors.tooManyTokens(MAX_TOKENS)
      if (OPENING.has(token.kind)) {
        if (++nesting > MAX_NESTING) return graphqlErrors.tooNested(MAX_NESTING)
      } else if (CLOSING.has(token.kind)) {
        nesting -= 1
      }
    }
  } catch {
    return undefined
  }
  return undefined
}

/** Fields and aliases as written in the document (operations and fragments), over their ceilings, or undefined. */
export function checkSize(document: DocumentNode): GraphqlError | undefined {
  let fields = 0
  let aliases = 0
  const pending: SelectionSetNode[] = []
  for (const d of document.definitions) {
    if (d.kind === Kind.OPERATION_DEFINITION || d.kind === Kind.FRAGMENT_DEFINITION) pending.push(d.selectionSet)
  }
  for (let set = pending.pop(); set !== undefined; set = pending.pop()) {
    for (const s of set.selections) {
      if (s.kind === Kind.FIELD) {
        fields += 1
        if (s.alias) aliases += 1
      }
      if (s.kind !== Kind.FRAGMENT_SPREAD && s.selectionSet) pending.push(s.selectionSet)
    }
  }
  if (aliases > MAX_ALIASES) return graphqlErrors.tooManyAliases(aliases, MAX_ALIASES)
  if (fields > MAX_FIELDS) return graphqlErrors.tooManyFields(fields, MAX_FIELDS)
  return undefined
}

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
