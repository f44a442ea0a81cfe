// The GraphQL service's error catalogue (STYLE 1). Every error a request can
// meet is one of these; its message is the wire text. Messages reuse
// pg_graphql's (v1.6) where pg_graphql has one and graphql-js's validation
// sentences where the spec asks for them (SPEC 7). PostgreSQL errors raised
// while a statement runs pass through with their own message, as in pg_graphql.

const BRAND = Symbol.for('baseplane.graphql.error')

export class GraphqlError extends Error {
  readonly code: string
  readonly [BRAND] = true

  constructor(code: string, message: string) {
    super(message)
    this.name = 'GraphqlError'
    this.code = code
  }

  /** The same error with more words after its message. */
  withSuffix(suffix: string): GraphqlError {
    return new GraphqlError(this.code, this.message + suffix)
  }

  static is(value: unknown): value is GraphqlError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true
  }
}

const e = (code: string, message: string) => new GraphqlError(code, message)

/** pg_graphql's texts for an unknown field of an introspection type (its builder.rs), which differ per type. */
const INTROSPECTION_UNKNOWN: Record<string, (field: string) => string> = {
  __Schema: (f) => `unknown field in __Schema: ${f}`,
  __Type: (f) => `unknown field on __Type: ${f}`,
  __Field: (f) => `unknown field in __Field ${f}`,
  __InputValue: (f) => `unknown field in __InputValue: ${f}`,
  __EnumValue: (f) => `unknown field in __EnumValue: ${f}`,
  __Directive: (f) => `unknown field ${f} in __Directive`,
}

export const graphqlErrors = {
  // Request shape.
  noQuery: () => e('no_query', 'Must provide query string.'),
  badVariables: () =>
    e('bad_variables', 'Variables must be provided as an Object where each property is a variable value. Perhaps look to see if an unparsed JSON string was provided.'),
  badJsonBody: () => e('bad_json', 'Could not parse request body as JSON'),
  badBody: () => e('bad_body', 'Request body must be a JSON object with a "query" string'),
  // Operation selection (graphql-js's sentences).
  multipleOperations: () => e('operation_name_required', 'Must provide operation name if query contains multiple operations.'),
  unknownOperation: (name: string) => e('operation_not_found', `Unknown operation named "${name}".`),
  noOperation: () => e('operation_not_found', 'Must provide an operation.'),
  subscription: () => e('subscription', 'Subscriptions are not supported'),
  // Limits (SPEC 8; texts are ours: the spec does not show them).
  tooDeep: (max: number) => e('too_deep', `Query is too deep: selections nest more than ${max} levels`),
  tooLarge: (max: number) => e('too_large', `Query is too large: it expands to more than ${max} selections once fragments are spread`),
  fragmentCycle: (name: string) => e('fragment_cycle', `Cannot spread fragment "${name}" within itself.`),
  // Ceilings measured before parsing and before validation (limits.ts).
  tooManyTokens: (max: number) => e('too_many_tokens', `Query is too large: it has more than ${max} tokens`),
  tooNested: (max: number) => e('too_nested', `Query is too deep: braces, brackets and parentheses nest more than ${max} levels`),
  tooManyFields: (count: number, max: number) => e('too_many_fields', `Query is too large: it has ${count} fields, more than the ${max} allowed`),
  tooManyAliases: (count: number, max: number) => e('too_many_aliases', `Query is too large: it has ${count} aliases, more than the ${max} allowed`),
  // Schema comments (pg_graphql's texts).
  directiveJson: () => e('directive_json', 'invalid input syntax for type json'),
  directiveShape: (detail: string) => e('directive_shape', `Error while loading schema, check comment directives. ${detail}`),
  // Planning, when validation is off or a value is out of range (pg_graphql's texts).
  unknownField: (field: string, type: string) => e('unknown_field', `Unknown field "${field}" on type ${type}`),
  firstAndLast: () => e('pagination', 'only one of "first" and "last" may be provided'),
  beforeAndAfter: () => e('pagination', 'only one of "before" and "after" may be provided'),
  firstWithBefore: () => e('pagination', '"first" may only be used with "after"'),
  lastWithAfter: () => e('pagination', '"last" may only be used with "before"'),
  offsetBackwards: () => e('pagination', '"offset" may only be used with "first" and "after"'),
  notUnsigned: (arg: string) => e('pagination', `\`${arg}\` must be an unsigned integer`),
  badCursor: (n: number) => e('bad_cursor', `Failed to decode cursor, error ${n}`),
  cursorMismatch: () => e('bad_cursor', 'orderBy clause incompatible with pagination cursor'),
  // pg_graphql writes its first one with a comma.
  badNodeId: (n: number) => e('bad_node_id', `Invalid value passed to nodeId argument${n === 1 ? ',' : '.'} Error ${n}`),
  nodeIdOtherCollection: () => e('bad_node_id', 'nodeId belongs to a different collection'),
  missingPrimaryKey: (columns: string[]) => e('missing_pk', `Missing primary key column(s): ${columns.join(', ')}`),
  noObjects: () => e('no_objects', 'At least one record must be provided to objects'),
  emptySet: () => e('empty_set', 'At least one mapping must be provided to set argument'),
  tooLong: (max: number) => e('too_long', `Invalid input for String type. Maximum character length ${max}`),
  invalidInput: (type: string) => e('invalid_input', `Invalid input for ${type} type`),
  // Introspection: a field graphql-js's introspection types have and pg_graphql's do not (`isOneOf`), in pg_graphql's words per type.
  unknownIntrospectionField: (type: string, field: string) => e('unknown_field', INTROSPECTION_UNKNOWN[type]?.(field) ?? `unknown field on ${type}: ${field}`),
  unknownConnectionField: () => e('unknown_field', 'unknown field in connection'),
  unknownEdgeField: () => e('unknown_field', 'unknown field in edge'),
  unknownPageInfoField: () => e('unknown_field', 'unknown field in pageInfo'),
  aggregateDisabled: () => e('unknown_field', 'enable the aggregate directive to use aggregates'),
  unknownAggregateSelection: (field: string, type: string) => e('unknown_field', `Unknown field "${field}" selected on type "${type}"`),
  unknownAggregateField: (field: string, type: string) => e('unknown_field', `Unknown or invalid field "${field}" selected on type "${type}"`),
  isNullOperand: () => e('invalid_input', 'Error transpiling Is filter value type'),
  // Mutations (pg_graphql's texts).
  updateTooMany: () => e('at_most', 'update impacts too many records'),
  deleteTooMany: () => e('at_most', 'delete impacts too many records'),
  // Upsert (SPEC 2.4 `upsert`; texts are ours: pg_graphql has no upsert).
  upsertFilterWithoutUpdate: () =>
    e('invalid_input', 'onConflict.filter needs updateFields: without them an existing record is left as it is, so there is nothing to filter'),
  // Schema `limits` (SPEC 2.4; texts are ours, naming the limit and the figure).
  overFieldLimit: (count: number, max: number) => e('limits', `Query selects ${count} fields, over the limit of ${max}`),
  overRowLimit: (count: number, max: number) => e('limits', `Query selects ${count} rows, over the limit of ${max}`),
  // Schema `allowlist` and persisted queries. The first three are Apollo's
  // words, and the codes of the first two go out as `extensions.code`, so
  // Apollo Client's persisted-query link knows what to do (see index.ts).
  persistedQueryNotFound: () => e('PERSISTED_QUERY_NOT_FOUND', 'PersistedQueryNotFound'),
  persistedQueryNotSupported: () => e('PERSISTED_QUERY_NOT_SUPPORTED', 'PersistedQueryNotSupported'),
  persistedQueryHashMismatch: () => e('persisted_query_hash', 'provided sha does not match query'),
  notAllowlisted: (role: string, hash: string) =>
    e('not_allowlisted', `Document is not on the allowlist: role ${role} may only run stored documents (this one's SHA-256 is ${hash})`),
  storedDocumentHash: (hash: string) => e('allowlist_hash', `The allowlist's document for hash ${hash} does not have that SHA-256`),
  // PostGIS (SPEC 2.4 `postgis`; texts are ours, in pg_graphql's "Invalid input for" shape).
  badGeoJson: () =>
    e('invalid_input', 'Invalid input for GeoJSON type. Expected a GeoJSON geometry (an object, or its JSON text): Point, LineString, Polygon, MultiPoint, MultiLineString, MultiPolygon or GeometryCollection with valid coordinates'),
  negativeDistance: () => e('invalid_input', 'Invalid input for GeoJSONDWithinInput type. distance must be zero or more'),
  // The project database cannot be reached (HTTP 503 with Retry-After; the cause goes to the log).
  databaseUnavailable: () => e('database_unavailable', 'The project database is unavailable; try again shortly'),
  // Anything else: the cause goes to the log, never into the response.
  internal: () => e('internal', 'Internal error while resolving the GraphQL request'),
}
