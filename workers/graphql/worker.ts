// POST {base_url}/graphql/v1 (SPEC 4.2), run in the data plane's graphql
// Piscina pool: parse the body, then answer through the library in one
// transaction as the caller (lib/db/request-transaction.ts's identity
// statement, sent in resolve()'s first round trip). As in
// pg_graphql behind PostgREST, GraphQL-level failures are HTTP 200 with
// `{data: null, errors}`; only a body that is not JSON is a 400.
import { classifyDatabaseError, isConnectionLost, RETRY_AFTER_SECONDS } from '../../lib/db/database-errors.ts'
import { identityStatement } from '../../lib/db/request-transaction.ts'
import { firstRoundTrip } from '../../lib/db/stale-retry.ts'
import { graphqlDataErrorResponse, graphqlErrorResponse } from '../../lib/http/errors.ts'
import { readJsonObject } from '../../lib/http/body.ts'
import { Router } from '../../lib/http/router.ts'
import { log } from '../../lib/log.ts'
import { json, type ServiceHandler, type ServiceRequest, type ServiceResponse } from '../../lib/service.ts'
import { projectPools } from '../../lib/worker-context.ts'
import { GraphqlError, graphqlErrors } from './errors.ts'
import { checkText } from './limits.ts'
import { graphqlManifest } from './manifest.ts'
import { resolve, SchemaCache, type GraphqlRequest } from './index.ts'

/**
 * Built schemas this thread keeps (one per project, role and search path). A
 * project's requests stay on one thread (data-plane/fair-share.ts), so a thread
 * holds the schemas of the projects placed on it: room for 1,000 active
 * projects a node serves, each with its anon, authenticated and service_role
 * schemas, on one thread. Smaller, a round of requests over more projects than
 * fit would rebuild every schema on every request.
 */
const SCHEMAS_PER_THREAD = 3000

const cache = new SchemaCache(SCHEMAS_PER_THREAD)

/** Texts longer than this are measured before a connection is taken (a 15,000-token document is far longer). */
const PRECHECK_TEXT_LENGTH = 4096

const router = new Router(graphqlManifest.routes)

/** A JSON object; its fields are checked by resolve(), in pg_graphql's words. */
function parseBody(request: ServiceRequest): GraphqlRequest {
  const body: object = readJsonObject(request.body, {
    empty: () => graphqlErrors.badJsonBody(),
    invalid: () => graphqlErrors.badJsonBody(),
    notObject: () => graphqlErrors.badBody(),
  })
  return body as GraphqlRequest
}

const handler: ServiceHandler = async (request) => {
  const match = router.match(request.method, request.path)
  if (match.kind === 'not_found') return graphqlErrorResponse(404, `No route for ${request.path}`)
  if (match.kind === 'method_not_allowed') return graphqlErrorResponse(405, 'Use POST with a JSON body', { allow: match.allow.join(', ') })
  let body: GraphqlRequest
  try {
    body = parseBody(request)
  } catch (error) {
    if (!GraphqlError.is(error)) throw error
    return graphqlErrorResponse(400, error.message)
  }
  // A large text is measured before it takes a connection: a document built to
  // cost (thousands of aliases) is refused without touching the database.
  // Small ones are measured with the cached document, where it costs nothing.
  if (typeof body.query === 'string' && body.query.length > PRECHECK_TEXT_LENGTH) {
    const tooLarge = checkText(body.query)
    if (tooLarge) return graphqlDataErrorResponse(tooLarge.message)
  }
  const pool = projectPools().get(request.project.database)
  let internal: unknown
  try {
    // resolve() sets the caller's role and claims (the request-transaction
    // helper's identity statement) in the same round trip as the query: one
    // round trip per query once the schema is known (see speculationKey),
    // mutations in one transaction. Any failure rolls everything back. It
    // throws only when its first round trips fail (anything later becomes
    // `{data: null, errors}`), so a connection found dead is replaced once.
    const { client, result } = await firstRoundTrip(
      () => pool.connect(),
      (client) => {
        internal = undefined
        return resolve(client, body, {
          cache,
          transaction: 'none',
          setup: identityStatement(request.identity!, request.project.roleTimeouts),
          // The schema depends on the project and the caller's role.
          speculationKey: `${request.project.ref}\0${request.identity!.role}`,
          onInternalError: (error) => {
            internal = error
            log.error('graphql: internal error', error, { ref: request.project.ref })
          },
        })
      },
    )
    client.release(isConnectionLost(internal) ? (internal as Error) : undefined)
    // The connection broke mid-request: the database is unavailable, not the query wrong.
    if (classifyDatabaseError(internal) === 'unavailable') return unavailable()
    return json(200, result)
  } catch (error) {
    const failure = classifyDatabaseError(error)
    log.error(failure === 'unavailable' ? 'project database unavailable' : 'graphql request failed', error, { ref: request.project.ref })
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

export default handler
