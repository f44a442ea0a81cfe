// POST {base_url}/graphql/v1 (SPEC 4.2), run in the data plane's graphql
// Piscina pool: route and parse the body, then answer through answer.ts (the
// library, in one transaction as the caller, on a connection of the thread's
// pool; the control plane's face runs the same code). As in pg_graphql
// behind PostgREST, GraphQL-level failures are HTTP 200 with
// `{data: null, errors}`; only a body that is not JSON is a 400.
import type pg from 'pg'
import { connectAs } from '../../lib/db/round-trip-deadline.ts'
import { firstRoundTrip } from '../../lib/db/stale-retry.ts'
import { graphqlErrorResponse } from '../../lib/http/errors.ts'
import { readJsonObject } from '../../lib/http/body.ts'
import { Router } from '../../lib/http/router.ts'
import type { ServiceHandler, ServiceRequest } from '../../lib/service.ts'
import { projectPools } from '../../lib/worker-context.ts'
import { answerGraphql } from './answer.ts'
import { GraphqlError, graphqlErrors } from './errors.ts'
import { graphqlManifest } from './manifest.ts'
import { SchemaCache, type GraphqlRequest } from './index.ts'

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
  return answerGraphql<pg.PoolClient>(body, { identity: request.identity!, project: request.project }, cache, {
    firstRoundTrip: (first) => {
      const pool = projectPools().get(request.project.database)
      // Each round trip waits at most the role's statement timeout and a margin for a server that hangs.
      return firstRoundTrip(connectAs(() => pool.connect(), request.project.roleTimeouts, request.identity!.role), first)
    },
    release: (client, broken) => client.release(broken),
  })
}

export default handler
