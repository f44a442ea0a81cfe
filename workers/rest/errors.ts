// The data API's error catalogue (STYLE 1): PostgREST's codes, statuses and
// sentences (shared/reference/postgrest.md section 5; PostgREST 13 where 12
// and 13 differ), in its body `{code, details, hint, message}`. PostgreSQL's
// own errors pass through with their SQLSTATE (database-error.ts maps them to
// statuses as PostgREST does). Throw only these.

const BRAND = Symbol.for('baseplane.rest.error')

export class RestError extends Error {
  readonly code: string
  readonly status: number
  /** Text, or PGRST201's list of candidate relationships. */
  readonly details: string | object[] | null
  readonly hint: string | null
  readonly [BRAND] = true

  constructor(code: string, status: number, message: string, details: string | object[] | null = null, hint: string | null = null) {
    super(message)
    this.name = 'RestError'
    this.code = code
    this.status = status
    this.details = details
    this.hint = hint
  }

  static is(value: unknown): value is RestError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true
  }
}

const e = (code: string, status: number, message: string, details: string | object[] | null = null, hint: string | null = null) =>
  new RestError(code, status, message, details, hint)

/** PostgREST's parse-error message: the parser's input quoted, and where it stopped (1-based). */
function parseFailure(what: string, input: string, position: number, details: string): RestError {
  return e('PGRST100', 400, `"failed to parse ${what} (${input})" (line 1, column ${position + 1})`, details)
}

export const restErrors = {
  parse: parseFailure,
  // PGRST101..
  rpcMethod: (method: string) => e('PGRST101', 405, `Cannot use the ${method} method on RPC`),
  invalidBody: (details: string) => e('PGRST102', 400, details),
  contentType: (mime: string) => e('PGRST102', 400, `Content-Type not acceptable: ${mime}`),
  range: (details: string) => e('PGRST103', 416, 'Requested range not satisfiable', details),
  putFilters: () => e('PGRST105', 405, "Filters must include all and only primary key columns with 'eq' operators"),
  schema: (schema: string, exposed: readonly string[]) =>
    e('PGRST106', 406, `Invalid schema: ${schema}`, null, `Only the following schemas are exposed: ${exposed.join(', ')}`),
  mediaType: (types: string) => e('PGRST107', 406, `None of these media types are available: ${types}`),
  notEmbedded: (name: string) =>
    e('PGRST108', 400, `'${name}' is not an embedded resource in this request`, null, `Verify that '${name}' is included in the 'select' query parameter.`),
  responseHeaders: () => e('PGRST111', 500, 'response.headers guc must be a JSON array composed of objects with a single key and a string value'),
  responseStatus: () => e('PGRST112', 500, 'response.status guc must be a valid status code'),
  putLimit: () => e('PGRST114', 400, 'limit/offset querystring parameters are not allowed for PUT'),
  putMismatch: () => e('PGRST115', 400, 'Payload values do not match URL in primary key column(s)'),
  singular: (rows: number) => e('PGRST116', 406, 'Cannot coerce the result to a single JSON object', `The result contains ${rows} rows`),
  method: (method: string) => e('PGRST117', 405, `Unsupported HTTP method: ${method}`),
  relatedOrder: (origin: string, target: string) =>
    e('PGRST118', 400, `A related order on '${target}' is not possible`, `'${origin}' and '${target}' do not form a many-to-one or one-to-one relationship`),
  embedFilter: (target: string) =>
    e('PGRST120', 400, `Bad operator on the '${target}' embedded resource`, 'Only is null or not is null filters are allowed on embedded resources'),
  strictPreferences: (invalid: readonly string[]) =>
    e('PGRST122', 400, 'Invalid preferences given with handling=strict', `Invalid preferences: ${invalid.join(', ')}`),
  aggregates: () => e('PGRST123', 400, 'Use of aggregate functions is not allowed'),
  maxAffected: (rows: number) => e('PGRST124', 400, 'Query result exceeds max-affected preference constraint', `The query affects ${rows} rows`),
  invalidPath: () => e('PGRST125', 404, 'Invalid path specified in request URL'),
  rootDisabled: () => e('PGRST126', 404, 'Root endpoint metadata is disabled'),
  notImplemented: (details: string) => e('PGRST127', 400, 'Feature not implemented', details),
  maxAffectedScalar: () => e('PGRST128', 400, 'Function must return SETOF or TABLE when max-affected preference is used with handling=strict'),
  // Schema cache.
  noRelationship: (parent: string, child: string, schema: string, embedHint: string | null, hint: string | null) =>
    e(
      'PGRST200',
      400,
      `Could not find a relationship between '${parent}' and '${child}' in the schema cache`,
      `Searched for a foreign key relationship between '${parent}' and '${child}'${embedHint === null ? '' : ` using the hint '${embedHint}'`} in the schema '${schema}', but no matches were found.`,
      hint,
    ),
  ambiguousRelationship: (parent: string, child: string, candidates: object[], hints: readonly string[]) =>
    e(
      'PGRST201',
      300,
      `Could not embed because more than one relationship was found for '${parent}' and '${child}'`,
      candidates,
      `Try changing '${child}' to one of the following: ${hints.join(', ')}. Find the desired relationship in the 'details' key.`,
    ),
  noFunction: (message: string, details: string, hint: string | null) => e('PGRST202', 404, message, details, hint),
  ambiguousFunction: (signatures: string) =>
    e(
      'PGRST203',
      300,
      `Could not choose the best candidate function between: ${signatures}`,
      null,
      'Try renaming the parameters or the function itself in the database so function overloading can be resolved',
    ),
  noColumn: (column: string, table: string) => e('PGRST204', 400, `Could not find the '${column}' column of '${table}' in the schema cache`),
  noTable: (qualified: string, hint: string | null) => e('PGRST205', 404, `Could not find the table '${qualified}' in the schema cache`, null, hint),
  // PostgreSQL's answer to a NUL in a text value (PostgREST passes it on with status 400): given before any SQL,
  // since a NUL cannot travel in a statement's text.
  nulByte: () => e('22021', 400, 'invalid byte sequence for encoding "UTF8": 0x00'),
  // PostgreSQL's answer to PostgREST's statement when two embeds of one select list share a name (their
  // lateral joins' alias `<parent>_<name>_<depth>`), given before any SQL (embed.ts).
  duplicateAlias: (alias: string) => e('42712', 400, `table name "${alias}" specified more than once`),
  // Ours, in the same shape: limits measured before any SQL (limits.ts).
  tooLarge: (what: string, count: number, max: number) =>
    e('PGRST100', 400, `Request is too large: ${what} has ${count} items, more than the ${max} allowed`),
  tooDeep: (max: number) => e('PGRST100', 400, `Request is too deep: logic trees nest more than ${max} levels`),
  tooDeepEmbed: (max: number) => e('PGRST100', 400, `Request is too deep: embedded resources nest more than ${max} levels`),
  // Connection trouble (PGRST001: PostgREST's "client error").
  unavailable: () => e('PGRST001', 503, 'Database client error. Retrying the connection.'),
  internal: () => e('PGRST000', 500, 'Unexpected failure, please check server logs for more information'),
}
