// One GraphQL request answered as `POST {base_url}/graphql/v1` answers it, for
// both of GraphQL's doors: the data plane's worker (worker.ts, on a connection
// of its thread's pool) and the control plane's face (face.ts, on a connection
// the control plane opened). Given the request body as an object and the
// caller, it measures a large text before touching the database, runs the
// document through the library in one transaction as the caller
// (lib/db/request-transaction.ts's identity statement, sent in resolve()'s
// first round trip) and answers the endpoint's status and body: 200 with
// `{data, errors}` for anything GraphQL-level (as pg_graphql behind
// PostgREST), PostgreSQL's text for a cancelled statement, 503 when the
// database is unavailable. Routing and the body's parsing stay in worker.ts.
import type pg from 'pg'
import type { Caller, Connection } from '../../lib/db/caller.ts'
import { classifyDatabaseError, databaseAnswered, isConnectionLost, reportDatabaseFailure, RETRY_AFTER_SECONDS } from '../../lib/db/database-errors.ts'
import { identityCall } from '../../lib/db/request-transaction.ts'
import { quotaRefusal } from '../../lib/plans.ts'
import { graphqlDataErrorResponse, graphqlErrorResponse } from '../../lib/http/errors.ts'
import { log } from '../../lib/log.ts'
import type { ServiceResponse } from '../../lib/service.ts'
import { graphqlErrors } from './errors.ts'
import { checkText } from './limits.ts'
import { resolveBody, type GraphqlRequest, type SchemaCache } from './index.ts'

/** Texts longer than this are measured before a connection is taken (a 15,000-token document is far longer). */
const PRECHECK_TEXT_LENGTH = 4096

export type { Caller, Connection }

/** Answers `body` as the endpoint would, run as `caller` on `connection` with built schemas from `cache`. */
export async function answerGraphql<C extends pg.ClientBase>(
  body: GraphqlRequest,
  caller: Caller,
  cache: SchemaCache,
  connection: Connection<C>,
): Promise<ServiceResponse> {
  const { identity, project } = caller
  // A large text is measured before it takes a connection: a document built to
  // cost (thousands of aliases) is refused without touching the database.
  // Small ones are measured with the cached document, where it costs nothing.
  if (typeof body.query === 'string' && body.query.length > PRECHECK_TEXT_LENGTH) {
    const tooLarge = checkText(body.query)
    if (tooLarge) return graphqlDataErrorResponse(tooLarge.message)
  }
  let internal: unknown
  let serverReadOnly: Error | undefined
  try {
    // resolve() sets the caller's role and claims (the request-transaction
    // helper's identity statement) in the same round trip as the query: one
    // round trip per query once the schema is known (see speculationKey),
    // mutations in one transaction. Any failure rolls everything back. It
    // throws only when its first round trips fail (anything later becomes
    // `{data: null, errors}`), so a connection found dead can be replaced once.
    const { client, result } = await connection.firstRoundTrip((client) => {
      internal = undefined
      serverReadOnly = undefined
      return resolveBody(client, body, {
        cache,
        transaction: 'none',
        // Prepared on the connection, as REST's: PostgreSQL plans the caller's settings once per connection.
        setup: (client, guard) => {
          const call = identityCall(client, identity, project.roleTimeouts, project.readOnly === true, () => [], guard ? (bind) => [guard(bind)] : undefined)
          return [...call.before, call.execute]
        },
        readOnlyMessage: project.readOnly === true ? quotaRefusal('database_size_bytes', project.caps?.database_size_bytes ?? 0) : undefined,
        // The schema depends on the project and the caller's role.
        speculationKey: `${project.ref}\0${identity.role}`,
        onInternalError: (error) => {
          internal = error
          log.error('graphql: internal error', error, { ref: project.ref })
        },
        onServerReadOnly: (error) => {
          serverReadOnly = error
        },
      })
    })
    connection.release(client, isConnectionLost(internal) ? (internal as Error) : undefined)
    // The connection broke mid-request: the database is unavailable, not the query wrong.
    if (classifyDatabaseError(internal) === 'unavailable') return unavailable()
    if (serverReadOnly !== undefined) {
      reportDatabaseFailure(serverReadOnly, project.database ?? project, 'graphql request', { readOnlyByPlatform: false })
      return unavailable()
    }
    databaseAnswered(project.database ?? project)
    return { status: 200, headers: { 'content-type': 'application/json' }, body: result }
  } catch (error) {
    const failure = reportDatabaseFailure(error, project.database ?? project, 'graphql request')
    // pg_graphql answers PostgreSQL's own text for a cancelled statement.
    if (failure === 'timeout') return graphqlDataErrorResponse((error as Error).message)
    if (failure === 'unavailable') return unavailable()
    throw error
  }
}

/** A 503 in this service's error style, with Retry-After. */
function unavailable(): ServiceResponse {
  return graphqlErrorResponse(503, graphqlErrors.databaseUnavailable().message, {
    'retry-after': String(RETRY_AFTER_SECONDS),
    'x-sb-error-code': 'database_unavailable',
  })
}
