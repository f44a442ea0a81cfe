// A request's document: parsed, held to the limits and validated with
// graphql-js's rules (so errors use its sentences, every problem listed), once
// per schema and query text; the result is cached beside the schema.
import {
  GraphQLError, parse, specifiedRules, validate, Kind,
  type DocumentNode, type FieldNode, type ValidationContext, type ASTVisitor,
} from 'graphql'
import { LRUCache } from 'lru-cache'
import { checkLimits } from './limits.ts'

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

export class DocumentCache {
  readonly #cache = new LRUCache<string, PreparedDocument>({ max: 500 })

  prepare(schema: Parameters<typeof validate>[0], query: string, validation: boolean, introspection: boolean): PreparedDocument {
    const cached = this.#cache.get(query)
    if (cached) return cached
    const prepared = prepareDocument(schema, query, validation, introspection)
    // Very large texts are not kept: a flood of distinct huge documents must not hold memory.
    if (query.length <= 100_000) this.#cache.set(query, prepared)
    return prepared
  }
}

export function prepareDocument(schema: Parameters<typeof validate>[0], query: string, validation: boolean, introspection: boolean): PreparedDocument {
  let document: DocumentNode
  try {
    document = parse(query)
  } catch (error) {
    return { errors: [(error as Error).message] }
  }
  const limit = checkLimits(document)
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
