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
import {
  getArgumentValues, getNamedType, isCompositeType, isInterfaceType, isObjectType,
  Kind, Lexer, SchemaMetaFieldDef, Source, TokenKind, TypeMetaFieldDef,
  type DocumentNode, type FragmentDefinitionNode, type GraphQLCompositeType, type GraphQLField,
  type GraphQLSchema, type OperationDefinitionNode, type SelectionSetNode,
} from 'graphql'
import { collectFieldNodes } from './collect-fields.ts'
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

// The schema's own `limits {fields, rows}` (SPEC 2.4), counted on the
// operation as it will run: after validation and variable coercion (a
// variable may set `first`, `@skip` or `@include`), before any SQL.
//
// Fields: every response key of every selection set, once per place it
// appears in the answer's shape (not per row): fragments are spread where
// they are used, fields merged under one key count once, `__typename`
// counts, skipped fields do not. Fields under type conditions all count (an
// upper bound: which of `... on A`/`... on B` applies is known only per row).
//
// Rows: each collection (a `<Type>Connection` field, wherever it is) counts
// its page, `first` or `last` capped at the table's `max_rows`, multiplied by
// the pages of the collections it is nested in; single rows (`<table>ByPk`,
// to-one relations, `node`) and mutation `records` are not pages and count
// nothing. Both walks are bounded: checkLimits has already held the expanded
// document to MAX_SELECTIONS.

export interface DocumentCount {
  fields: number
  rows: number
}

/** What the operation selects: response keys and rows (see above). */
export function countOperation(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  variables: Record<string, unknown>,
  pageOf: (connectionType: string) => number | undefined,
): DocumentCount {
  const count: DocumentCount = { fields: 0, rows: 0 }
  const root = schema.getRootType(operation.operation)
  if (!root) return count

  const collect = (parent: GraphQLCompositeType, sets: readonly SelectionSetNode[]) =>
    collectFieldNodes(sets, parent, fragments, variables, (condition, type) => conditionType(schema, condition) ?? type)

  const visit = (parent: GraphQLCompositeType, sets: readonly SelectionSetNode[], around: number) => {
    for (const [, field] of collect(parent, sets)) {
      count.fields += 1
      const node = field.nodes[0]!
      const def = fieldDefOf(schema, field.scope, node.name.value)
      if (!def) continue
      const type = getNamedType(def.type)
      let inner = around
      const page = pageOf(type.name)
      if (page !== undefined) {
        let args: Record<string, unknown> = {}
        try {
          args = getArgumentValues(def, node, variables)
        } catch {
          // Validation off and a bad argument: the planner reports it; count the full page.
        }
        const asked = (args.first ?? args.last) as number | null | undefined
        inner = around * (typeof asked === 'number' && asked >= 0 ? Math.min(asked, page) : page)
        count.rows += inner
      }
      const children = field.nodes.map((n) => n.selectionSet).filter((s): s is SelectionSetNode => s !== undefined)
      if (children.length > 0 && isCompositeType(type)) visit(type, children, inner)
    }
  }
  visit(root, [operation.selectionSet], 1)
  return count
}

function conditionType(schema: GraphQLSchema, name: string | undefined): GraphQLCompositeType | undefined {
  if (name === undefined) return undefined
  const type = schema.getType(name)
  return type && isCompositeType(type) ? type : undefined
}

function fieldDefOf(schema: GraphQLSchema, parent: GraphQLCompositeType, name: string): GraphQLField<unknown, unknown> | undefined {
  if (name === '__schema' && parent === schema.getQueryType()) return SchemaMetaFieldDef
  if (name === '__type' && parent === schema.getQueryType()) return TypeMetaFieldDef
  if (name === '__typename') return undefined
  return isObjectType(parent) || isInterfaceType(parent) ? parent.getFields()[name] : undefined
}

/** The first of the schema's `limits` the count breaks, or undefined. */
export function checkCount(count: DocumentCount, limits: { fields: number | undefined; rows: number | undefined }): GraphqlError | undefined {
  if (limits.fields !== undefined && count.fields > limits.fields) return graphqlErrors.overFieldLimit(count.fields, limits.fields)
  if (limits.rows !== undefined && count.rows > limits.rows) return graphqlErrors.overRowLimit(count.rows, limits.rows)
  return undefined
}
