// The GraphQL engine as a library (issue 4 item 7): `resolve(client, request)`
// answers a GraphQL request on a `pg` client, under that client's current
// role, inside its open transaction if it has one (otherwise in a transaction
// of its own), reading the schema through the same connection, so DDL not
// yet committed in that transaction is seen. On failure it rolls back to its
// savepoint, so nothing it wrote is kept, and returns `{data: null, errors}`.
// The HTTP service (worker.ts) wraps exactly this.
import type pg from 'pg'
import { SchemaCache, metaColumns, type Meta, type Probe } from './cache.ts'
import { GraphqlError, graphqlErrors } from './errors.ts'
import { allowedDocument, persistedHashOf, restricts } from './allowlist.ts'
import { planQuery, RequestErrors, runOperation } from './execute.ts'
import { asks, type ExplainedStatement } from './explain.ts'
import { reportedSchemas, schemaReport } from './schema-report.ts'
import { isCancelled, READ_ONLY_TRANSACTION } from '../../lib/db/database-errors.ts'
import { preparedCall } from '../../lib/db/prepared-statements.ts'
import { OWN_TRANSACTION, savepointFrame } from '../../lib/db/request-transaction.ts'
import { lastRow, probeOf, runOrdinary, SchemaKeys, serverOf, speculate, type KeyMemory } from '../../lib/db/schema-keyed-run.ts'

export interface GraphqlRequest {
  /** The document; may be left out when `extensions.persistedQuery.sha256Hash` names a stored one. */
  query?: string | null
  variables?: Record<string, unknown> | null
  operationName?: string | null
  extensions?: Record<string, unknown> | null
}

export interface GraphqlErrorItem {
  message: string
  /** Only on Apollo's persisted-query refusals: `{code: "PERSISTED_QUERY_NOT_FOUND"}`. */
  extensions?: { code: string }
}

/** What the schema's `explain` and `schemaReport` add when the request asks for them (SPEC 2.4). */
export type ResponseExtensions = Record<string, unknown>

export type GraphqlResponse =
  | { data: Record<string, unknown>; extensions?: ResponseExtensions }
  | { data: null; errors: GraphqlErrorItem[]; extensions?: ResponseExtensions }
  // Apollo's persisted-query refusals carry no `data`, as Apollo Server answers them.
  | { data?: undefined; errors: GraphqlErrorItem[] }

/** Errors answered in Apollo's shape, their code under `extensions` (Apollo Client retries or stops hashing on them). */
const APOLLO_CODES: ReadonlySet<string> = new Set(['PERSISTED_QUERY_NOT_FOUND', 'PERSISTED_QUERY_NOT_SUPPORTED'])

export interface ResolveOptions {
  /** Schema cache to use; by default one per process. */
  cache?: SchemaCache
  /** Called with errors that are not the request's fault (their text never reaches the response). */
  onInternalError?: (error: unknown) => void
  /**
   * SQL run right after the transaction (or savepoint) opens, in the same
   * round trip: the HTTP service sets the caller's role and claims with it.
   * A function gives the statements for the client at hand, so they may be
   * the client's prepared statements (lib/db/request-transaction.ts's
   * identityCall: planned once per connection, not parsed on every request).
   */
  setup?: string | ((client: pg.ClientBase) => readonly string[])
  /**
   * Names what the schema depends on besides the database (e.g. project and
   * role). With it, a query on a connection without an open transaction runs
   * in one round trip and one statement after `setup`: planned against the
   * schema last seen under this key, the data read together with the schema
   * version, and run again the ordinary way if the version moved. Mutations
   * never take this path.
   */
  speculationKey?: string
  /**
   * Whether the caller has a transaction open on the client: 'none' (resolve
   * opens and ends its own), 'open' (resolve works in a savepoint inside it).
   * Unsaid, the server is asked, at the cost of one round trip. The HTTP
   * service says 'none': its connections come from a pool every user of which
   * ends its transactions before giving them back.
   */
  transaction?: 'none' | 'open'
  /** Answered instead of PostgreSQL's text when a write meets a read-only transaction (the project past its size cap). */
  readOnlyMessage?: string
  /**
   * Told of a write refused as read-only when `readOnlyMessage` is not given: the server is read-only
   * (a standby, a promotion under way). The HTTP service answers 503 then; the answer is still returned.
   */
  onServerReadOnly?: (error: Error) => void
}

/** The schema key last seen per project and role on this thread (the speculation key). */
const schemaKeys = new SchemaKeys()

const defaultCache = new SchemaCache()
const SAVEPOINT = 'baseplane_graphql'

export { SchemaCache, GraphqlError, graphqlErrors }

function failure(messages: string[]): { data: null; errors: GraphqlErrorItem[] } {
  return { data: null, errors: messages.map((message) => ({ message })) }
}

function isDatabaseError(error: unknown): error is Error {
  return error instanceof Error && typeof (error as { code?: unknown }).code === 'string' && 'severity' in error
}

/** SQLSTATE of a savepoint outside a transaction block (no_active_sql_transaction) and inside a failed one (in_failed_sql_transaction). */
const NO_TRANSACTION = '25P01'
const FAILED_TRANSACTION = '25P02'

/**
 * The client's transaction state as the caller said it, or else as the server
 * answers a savepoint: 'none', 'open', or 'failed' (an aborted transaction).
 * pg keeps the state only in a private field, which we do not read.
 */
async function transactionState(client: pg.ClientBase, said: ResolveOptions['transaction']): Promise<'none' | 'open' | 'failed'> {
  if (said !== undefined) return said
  try {
    await client.query(`savepoint ${SAVEPOINT}; release savepoint ${SAVEPOINT}`)
    return 'open'
  } catch (error) {
    const code = (error as { code?: unknown }).code
    if (code === FAILED_TRANSACTION) return 'failed'
    if (code === NO_TRANSACTION) return 'none'
    throw error
  }
}

/** The setup statements for `client`. */
function setupOf(client: pg.ClientBase, setup: ResolveOptions['setup']): readonly string[] {
  if (typeof setup === 'function') return setup(client)
  return setup ? [setup] : []
}

export async function resolve(client: pg.ClientBase, request: GraphqlRequest, options: ResolveOptions = {}): Promise<GraphqlResponse> {
  const hasQuery = typeof request?.query === 'string' && request.query.length > 0
  // Apollo's persisted query: the hash alone stands for a stored document (allowlist.ts).
  const persistedHash = persistedHashOf(request?.extensions)
  if (!hasQuery && (persistedHash === undefined || (request?.query !== undefined && request.query !== null && request.query !== ''))) {
    return failure([graphqlErrors.noQuery().message])
  }
  const variables = request.variables ?? {}
  if (typeof variables !== 'object' || Array.isArray(variables)) return failure([graphqlErrors.badVariables().message])
  const cache = options.cache ?? defaultCache

  const probe = await probeOf(client)
  const state = await transactionState(client, options.transaction)
  if (state === 'failed') return failure(['current transaction is aborted, commands ignored until end of transaction block'])
  const own = state === 'none'
  const frame = own ? OWN_TRANSACTION : savepointFrame(SAVEPOINT)
  const memory: KeyMemory | undefined =
    own && probe.versioned && options.speculationKey !== undefined ? { keys: schemaKeys, key: schemaKeys.keyOf(client, options.speculationKey) } : undefined
  // A stored document to read, or extensions asking for more than data, take the ordinary path.
  const plain = hasQuery && persistedHash === undefined && !asks(request.extensions, 'explain') && !asks(request.extensions, 'schemaReport')
  if (memory !== undefined && plain) {
    const answer = await speculateQuery(client, cache, memory, request, variables, setupOf(client, options.setup), probe)
    if (answer !== undefined) return answer
  }
  // Filled only once the document may run: a refused one learns nothing more.
  let extensions: ResponseExtensions | undefined
  return runOrdinary<GraphqlResponse>({
    client,
    frame,
    setup: () => setupOf(client, options.setup),
    probe,
    memory,
    work: async (meta) => {
      extensions = undefined
      const built = await cache.get(client, serverOf(client), meta)
      if ('error' in built) throw built.error
      const model = built.model
      const query = persistedHash !== undefined || restricts(model.allowlist, meta.role)
        ? await allowedDocument(client, model.allowlist, meta.role, hasQuery ? request.query! : undefined, persistedHash)
        : request.query!
      // Off unless a served schema turns it on; asked for while off, the extension is ignored, as pg_graphql ignores extensions.
      let explain: ExplainedStatement[] | undefined
      if (asks(request.extensions, 'explain') && [...model.schemaFeatures.values()].some((on) => on.has('explain'))) {
        explain = []
        extensions = { explain }
      }
      const reported = asks(request.extensions, 'schemaReport') ? reportedSchemas(model) : []
      if (reported.length > 0) (extensions ??= {}).schemaReport = await schemaReport(client, model, reported)
      const prepared = built.documents.prepare(built.schema, query, model.validation, model.introspection)
      if (prepared.errors.length > 0) throw new RequestErrors(prepared.errors)
      // The frame's commit rides in the operation's last message.
      const data = await runOperation(client, built, prepared.document!, request.operationName, variables, { trailer: frame.commit, role: meta.role, explain })
      return extensions ? { data, extensions } : { data }
    },
    failed: (error) => {
      if (GraphqlError.is(error) && APOLLO_CODES.has(error.code)) return { errors: [{ message: error.message, extensions: { code: error.code } }] }
      const answer = failed(error, options)
      // A failing request is when a plan or the report helps most.
      return extensions ? { ...answer, extensions } : answer
    },
  })
}

/** The answer to a failure: the request's own errors as they are, anything else as an internal error. */
function failed(error: unknown, options: ResolveOptions): { data: null; errors: GraphqlErrorItem[] } {
  if (error instanceof RequestErrors) return failure(error.messages)
  if (isDatabaseError(error) && (error as { code?: unknown }).code === READ_ONLY_TRANSACTION) {
    if (options.readOnlyMessage !== undefined) return failure([options.readOnlyMessage])
    // The caller did not make it read-only: the server is (a standby, a promotion under way).
    options.onServerReadOnly?.(error)
  }
  if (GraphqlError.is(error) || isDatabaseError(error)) return failure([error.message])
  if (error instanceof Error && error.name === 'GraphQLError') return failure([error.message])
  options.onInternalError?.(error)
  return failure([graphqlErrors.internal().message])
}

/**
 * One round trip for a query whose schema is (probably) cached: set the
 * caller, then one prepared statement reads the schema key and the data. The
 * statements of one simple-protocol message run as one implicit transaction,
 * so `setup`'s transaction-local settings hold for the statement and end with
 * it, and no BEGIN or COMMIT is needed. Answers only when the key read back
 * is the one the query was planned with; otherwise (or on any error) returns
 * undefined and the caller runs the ordinary path, which gives the definitive
 * answer. A query changes nothing, so running it against a schema that turned
 * out stale had no effect.
 */
async function speculateQuery(
  client: pg.ClientBase,
  cache: SchemaCache,
  memory: KeyMemory,
  request: GraphqlRequest,
  variables: Record<string, unknown>,
  setup: readonly string[],
  probe: Probe,
): Promise<GraphqlResponse | undefined> {
  const last = memory.keys.last(memory.key)
  const built = last ? cache.peek(serverOf(client), last) : undefined
  if (!last || !built || 'error' in built) return undefined
  // A role held to the allowlist has its document looked up first: the ordinary path.
  if (restricts(built.model.allowlist, last.role)) return undefined
  let planned
  try {
    const prepared = built.documents.prepare(built.schema, request.query!, built.model.validation, built.model.introspection)
    if (prepared.errors.length > 0) return undefined
    planned = planQuery(built, prepared.document!, request.operationName, variables)
  } catch {
    return undefined
  }
  if (planned?.data === undefined) return undefined
  const { finish } = planned
  const call = preparedCall(client, last.role, `select ${metaColumns(probe.versioned)}, ${planned.data} as data`, planned.params)
  const rowOf = (results: pg.QueryResult[]) => lastRow<Omit<Meta, 'db'> & { data: Record<string, unknown> }>(results)
  return speculate<GraphqlResponse>({
    client,
    memory,
    last,
    probe,
    text: [...setup, ...call.before, call.execute].join('; '),
    inBlock: false,
    keyRead: rowOf,
    answer: (results) => ({ data: finish(rowOf(results).data) }),
    // Any other error is decided by the ordinary path.
    statementFailed: async () => undefined,
    // A cancelled statement is the answer (PostgreSQL's text, as pg_graphql's).
    failed: (error) => {
      if (isCancelled(error)) return failure([error.message])
      throw error
    },
  })
}
