// A request's document: measured, parsed, held to the limits and validated
// with graphql-js's rules (so errors use its sentences, every problem listed),
// once per schema and query text; the result is cached beside the schema. Each
// step runs only on what the cheaper one before it let through (limits.ts).
import {
  GraphQLError, parse, specifiedRules, validate, Kind,
  type DocumentNode, type FieldNode, type ValidationContext, type ASTVisitor,
} from 'graphql'
import { LRUCache } from 'lru-cache'
import { checkLimits, checkSize, checkText } from './limits.ts'

export interface PreparedDocument {
  document?: DocumentNode
  /** Messages of every problem found; empty when the document may run. */
  errors: string[]
}

/** With introspection off (pg_graphql 1.6's default), `__schema` and `__type` are not fields of Query. */
function noIntrospectionRule(context: ValidationContext): ASTVisitor {
  return {
    Field(node: FieldNode) {
      const name = node.name.value
      if ((name === '__schema' || name === '__type') && context.getParentType()?.name === context.getSchema().getQueryType()?.name) {
        context.reportError(new GraphQLError(`Cannot query field "${name}" on type "Query".`, { nodes: node }))
      }
    },
  }
}

/**
 * Query text one schema's cache may hold. A thread keeps thousands of schemas
 * (one per active project and role), and anyone with a project's public anon
 * key chooses the documents: bounded by text, one project's flood of distinct
 * documents costs its own cache, not the thread's memory.
 */
const CACHED_TEXT_PER_SCHEMA = 256 * 1024

export class DocumentCache {
  readonly #cache = new LRUCache<string, PreparedDocument>({
    max: 500,
    maxSize: CACHED_TEXT_PER_SCHEMA,
    sizeCalculation: (_prepared, query) => Math.max(1, query.length),
  })

  prepare(schema: Parameters<typeof validate>[0], query: string, validation: boolean, introspection: boolean): PreparedDocument {
    const cached = this.#cache.get(query)
    if (cached) return cached
    const prepared = prepareDocument(schema, query, validation, introspection)
    // A text over a quarter of the bound would push out most of the cache; it is measured again next time.
    if (query.length <= CACHED_TEXT_PER_SCHEMA / 4) this.#cache.set(query, prepared)
    return prepared
  }
}

export function prepareDocument(schema: Parameters<typeof validate>[0], query: string, validation: boolean, introspection: boolean): PreparedDocument {
  const text = checkText(query)
  if (text) return { errors: [text.message] }
  let document: DocumentNode
  try {
    document = parse(query)
  } catch (error) {
    return { errors: [(error as Error).message] }
  }
  const limit = checkSize(document) ?? checkLimits(document)
  if (limit) return { errors: [limit.message] }
  const rules = introspection ? specifiedRules : [...specifiedRules, noIntrospectionRule]
  if (validation) {
    const errors = validate(schema, document, rules)
    if (errors.length > 0) return { errors: errors.map((e) => e.message) }
  } else if (!introspection) {
    const errors = validate(schema, document, [noIntrospectionRule])
    if (errors.length > 0) return { errors: errors.map((e) => e.message) }
  }
  if (!document.definitions.some((d) => d.kind === Kind.OPERATION_DEFINITION)) return { errors: ['Must provide an operation.'] }
  return { document, errors: [] }
}
