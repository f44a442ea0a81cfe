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
import { planMutation, planQuery, RequestErrors, runOperation, selectOperation, type MutationRow, type PlannedMutation } from './execute.ts'
import { asks, type ExplainedStatement } from './explain.ts'
import { reportedSchemas, schemaReport } from './schema-report.ts'
import { isCancelled, READ_ONLY_TRANSACTION } from '../../lib/db/database-errors.ts'
import { preparedCall, resync, type Bind } from '../../lib/db/prepared-statements.ts'
import { OWN_TRANSACTION, savepointFrame } from '../../lib/db/request-transaction.ts'
import { keyMoved, lastRow, probeOf, runOrdinary, SchemaKeys, serverOf, speculate, type KeyMemory } from '../../lib/db/schema-keyed-run.ts'
import { quoteText } from '../../lib/pg-catalog/quote.ts'
import { GUARD_FAILURE, keyGuard } from '../../lib/pg-catalog/schema-version.ts'

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
  setup?: string | ((client: pg.ClientBase, guard?: (bind: Bind) => string) => readonly string[])
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

/**
 * The setup statements for `client`; with `guard`, they fail unless the schema
 * key is still the one a mutation was planned on (a select item of the setup
 * when it is a function, else a statement after it).
 */
function setupOf(client: pg.ClientBase, setup: ResolveOptions['setup'], guard?: Meta): readonly string[] {
  const guardItem = guard === undefined ? undefined : (bind: Bind) => keyGuard(guard, undefined, bind)
  if (typeof setup === 'function') return setup(client, guardItem)
  const statements = setup ? [setup] : []
  return guardItem === undefined ? statements : [...statements, `select ${guardItem(quoteText)}`]
}

/** An answer whose `data` is PostgreSQL's JSON text, to be written as it came (resolveBody). */
interface DataText {
  dataText: string
}

export async function resolve(client: pg.ClientBase, request: GraphqlRequest, options: ResolveOptions = {}): Promise<GraphqlResponse> {
  return (await answer(client, request, options, false)) as GraphqlResponse
}

/**
 * resolve()'s answer as the JSON text of the response, for a service that
 * writes it: a query planned on a known schema has its data written as the
 * bytes PostgreSQL built, never parsed and serialised again.
 */
export async function resolveBody(client: pg.ClientBase, request: GraphqlRequest, options: ResolveOptions = {}): Promise<string> {
  const answered = await answer(client, request, options, true)
  return 'dataText' in answered ? `{"data":${answered.dataText}}` : JSON.stringify(answered)
}

async function answer(client: pg.ClientBase, request: GraphqlRequest, options: ResolveOptions, textual: boolean): Promise<GraphqlResponse | DataText> {
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
    const answered = await speculateQuery(client, cache, memory, request, variables, () => setupOf(client, options.setup), probe, textual)
      ?? (await speculateMutation(client, cache, memory, request, variables, options, probe))
    if (answered !== undefined) return answered
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
  // Made only once the message is sure to be sent: making it marks its PREPAREs as done on the connection.
  setup: () => readonly string[],
  probe: Probe,
  textual: boolean,
): Promise<GraphqlResponse | DataText | undefined> {
  const last = memory.keys.last(memory.key)
  const built = last ? cache.peek(serverOf(client), last) : undefined
  if (!last || !built || 'error' in built) return undefined
  // A role held to the allowlist has its document looked up first: the ordinary path.
  if (restricts(built.model.allowlist, last.role)) return undefined
  const planKey = built.plans.keyOf(request.query!, request.operationName, variables)
  const cached = planKey === undefined ? undefined : built.plans.get(planKey)
  if (cached !== undefined && 'fields' in cached) return undefined
  let planned = cached
  if (planned === undefined) {
    try {
      const prepared = built.documents.prepare(built.schema, request.query!, built.model.validation, built.model.introspection)
      if (prepared.errors.length > 0) return undefined
      planned = planQuery(built, prepared.document!, request.operationName, variables)
    } catch {
      return undefined
    }
    if (planned?.data === undefined) return undefined
    if (planKey !== undefined) built.plans.set(planKey, planned)
  }
  const { finish } = planned
  // The data as text when it is the whole answer's: written on as PostgreSQL made it.
  const asText = textual && planned.whole
  const opening = setup()
  const call = preparedCall(client, last.role, `select ${metaColumns(probe.versioned)}, ${planned.data}${asText ? '::text' : ''} as data`, planned.params)
  const rowOf = (results: pg.QueryResult[]) => lastRow<Omit<Meta, 'db'> & { data: Record<string, unknown> | string }>(results)
  return speculate<GraphqlResponse | DataText>({
    client,
    memory,
    last,
    probe,
    text: [...opening, ...call.before, call.execute].join('; '),
    inBlock: false,
    keyRead: rowOf,
    answer: (results) => {
      const data = rowOf(results).data
      return typeof data === 'string' ? { dataText: data } : { data: finish(data) }
    },
    // Any other error is decided by the ordinary path.
    statementFailed: async () => undefined,
    // A cancelled statement is the answer (PostgreSQL's text, as pg_graphql's).
    failed: (error) => {
      if (isCancelled(error)) return failure([error.message])
      throw error
    },
  })
}

/**
 * One round trip for a mutation whose schema is (probably) cached, as REST's
 * writes: its statements planned against the key last seen, sent in one
 * message behind the setup's key guard, so they run as one implicit
 * transaction that commits only if every one succeeds and the schema did not
 * move. Not taken when a field's count is checked before the commit
 * (`atMost`). A moved key writes nothing and returns undefined (the ordinary
 * path runs it); a failing statement is the request's own answer unless one
 * cheap look at the key says the schema moved, so a failing write never runs
 * twice on the same schema.
 */
async function speculateMutation(
  client: pg.ClientBase,
  cache: SchemaCache,
  memory: KeyMemory,
  request: GraphqlRequest,
  variables: Record<string, unknown>,
  options: ResolveOptions,
  probe: Probe,
): Promise<GraphqlResponse | undefined> {
  const last = memory.keys.last(memory.key)
  const built = last ? cache.peek(serverOf(client), last) : undefined
  if (!last || !built || 'error' in built || restricts(built.model.allowlist, last.role)) return undefined
  const planKey = built.plans.keyOf(request.query!, request.operationName, variables)
  const cached = planKey === undefined ? undefined : built.plans.get(planKey)
  let fields: PlannedMutation['fields']
  if (cached !== undefined) {
    if (!('fields' in cached)) return undefined
    fields = cached.fields
  } else {
    try {
      const prepared = built.documents.prepare(built.schema, request.query!, built.model.validation, built.model.introspection)
      if (prepared.errors.length > 0) return undefined
      if (selectOperation(prepared.document!, request.operationName).operation !== 'mutation') return undefined
      const planned = planMutation(built, prepared.document!, request.operationName, variables)
      if (planKey !== undefined) built.plans.set(planKey, planned)
      fields = planned.fields
    } catch {
      return undefined
    }
  }
  const statements = fields.flatMap((field) => (field.statement ? [field.statement] : []))
  if (statements.length === 0 || statements.some((statement) => statement.atMost !== undefined)) return undefined
  const setup = setupOf(client, options.setup, last)
  return speculate<GraphqlResponse>({
    client,
    memory,
    last,
    probe,
    text: [...setup, ...statements.map((statement) => statement.sql)].join('; '),
    inBlock: false,
    // The guard held the key: the statements ran on the schema they were planned for.
    keyRead: () => undefined,
    answer: (results) => {
      const data: Record<string, unknown> = {}
      let next = results.length - statements.length
      for (const field of fields) data[field.key] = field.statement ? (results[next++]!.rows[0] as MutationRow).data : field.typename
      return { data }
    },
    statementFailed: async (error) => {
      // A guard that stopped the message before the setup's PREPARE leaves the list of prepared statements wrong.
      if ((error as { code?: unknown }).code === GUARD_FAILURE) await resync(client).catch(() => {})
      if (await keyMoved({ client, memory, last, probe }, setupOf(client, options.setup))) return undefined
      return failed(error, options)
    },
    failed: (error) => {
      if (isCancelled(error)) return failure([(error as Error).message])
      throw error
    },
  })
}
