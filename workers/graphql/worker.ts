// POST {base_url}/graphql/v1 (SPEC 4.2), run in the data plane's graphql
// Piscina pool: parse the body, then answer through the library in one
// transaction as the caller (lib/db/request-transaction.ts's identity
// statement, sent in resolve()'s first round trip). As in
// pg_graphql behind PostgREST, GraphQL-level failures are HTTP 200 with
// `{data: null, errors}`; only a body that is not JSON is a 400.
import { identityStatement } from '../../lib/db/request-transaction.ts'
import { json, type ServiceHandler, type ServiceRequest } from '../../lib/service.ts'
import { projectPools } from '../../lib/worker-context.ts'
import { graphqlErrors } from './errors.ts'
import { resolve, SchemaCache, type GraphqlRequest } from './index.ts'

const cache = new SchemaCache()

function parseBody(request: ServiceRequest): GraphqlRequest | { error: string } {
  let body: unknown
  try {
    body = JSON.parse(request.body)
  } catch {
    return { error: graphqlErrors.badJsonBody().message }
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { error: graphqlErrors.badBody().message }
  return body as GraphqlRequest
}

const handler: ServiceHandler = async (request) => {
  if (request.path !== '' && request.path !== '/') return json(404, { errors: [{ message: `No route for ${request.path}` }] })
  if (request.method !== 'POST') return json(405, { errors: [{ message: 'Use POST with a JSON body' }] }, { allow: 'POST' })
  const body = parseBody(request)
  if ('error' in body) return json(400, { errors: [{ message: body.error }] })
  const client = await projectPools().get(request.project.database).connect()
  let broken: Error | undefined
  try {
    // resolve() sets the caller's role and claims (the request-transaction
    // helper's identity statement) in the same round trip as the query: one
    // round trip per query once the schema is known (see speculationKey),
    // mutations in one transaction. Any failure rolls everything back.
    const result = await resolve(client, body, {
      cache,
      setup: identityStatement(request.identity!),
      // The schema depends on the project and the caller's role.
      speculationKey: `${request.project.ref}\0${request.identity!.role}`,
      onInternalError: (error) => console.error('graphql: internal error', error),
    })
    return json(200, result)
  } catch (error) {
    broken = error as Error
    throw error
  } finally {
    client.release(broken)
  }
}

export default handler
