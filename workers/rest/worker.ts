// {base_url}/rest/v1, run in the data plane's rest Piscina pool: route,
// parse what the request says (request.ts: query string, Prefer, Accept,
// Range; profiles.ts: the schema among the project's exposed ones) and answer
// it through answer.ts on a connection of the thread's pool for the project.
import type pg from 'pg'
import { connectAs } from '../../lib/db/round-trip-deadline.ts'
import { firstRoundTrip } from '../../lib/db/stale-retry.ts'
import { DEFAULT_EXPOSED_SCHEMAS } from '../../lib/pg-catalog/exposed-schemas.ts'
import { Router } from '../../lib/http/router.ts'
import { DEFAULT_TX_END, transactionEnd, type TxEnd } from '../../lib/rest-tx-end.ts'
import type { RestProjectContext, ServiceHandler, ServiceRequest, ServiceResponse } from '../../lib/service.ts'
import { projectPools, workerOptions } from '../../lib/worker-context.ts'
import { answerRest, answerRoot, type ParsedCall, type RootCall } from './answer/answer.ts'
import { decodeBody } from './request/bodies.ts'
import { RestError, restErrors } from './errors.ts'
import { restManifest } from './manifest.ts'
import { ModelCache } from './schema/model.ts'
import { namingPreRequest } from './answer/pre-request-failure.ts'
import { profileOf } from './request/profiles.ts'
import { parseAccept, parsePrefer, parseQuery, parseRange } from './request/request.ts'
import { restErrorResponse } from './answer/respond.ts'

/** Models this thread keeps: one per project, role and search path (as GraphQL's schemas per thread). */
const MODELS_PER_THREAD = 3000
const DEFAULT_MAX_ROWS = 1000

const cache = new ModelCache(MODELS_PER_THREAD)
const router = new Router(restManifest.routes)

/** What the project allows a request to ask of its transaction: its end (PostgREST's db-tx-end) and a plan (db-plan-enabled). */
export interface TransactionSettings {
  txEnd: TxEnd
  plans: boolean
}

const NO_OVERRIDES: TransactionSettings = { txEnd: DEFAULT_TX_END, plans: false }

/** Everything the request says that needs no schema, and its schema among `exposed`, checked before a connection is taken. */
export function parseCall(
  request: Pick<ServiceRequest, 'method' | 'path' | 'query' | 'headers' | 'body'>,
  maxRows: number,
  aggregates = false,
  exposed: readonly string[] = DEFAULT_EXPOSED_SCHEMAS,
  preRequest: string | null = null,
  transaction: TransactionSettings = NO_OVERRIDES,
): ParsedCall {
  const match = router.match(request.method, request.path)
  if (match.kind === 'not_found') throw restErrors.invalidPath()
  if (match.kind === 'method_not_allowed') throw restErrors.method(request.method)
  // The root is the OpenAPI description's (parseRoot); a caller of this function alone has it disabled.
  if (match.route.name === 'root') throw restErrors.rootDisabled()
  const rpc = match.route.name === 'rpc'
  const method = request.method
  if (rpc && method !== 'GET' && method !== 'HEAD' && method !== 'POST') throw restErrors.rpcMethod(method)
  const read = method === 'GET' || method === 'HEAD'
  const headers = request.headers
  // PostgREST decides the schema before it reads the body, the preferences or the query string.
  const profile = profileOf(read ? headers['accept-profile'] : headers['content-profile'], exposed)
  // A DELETE's body is never read (PostgREST parses none for it), so its Content-Type does not matter.
  const body = read || method === 'DELETE' ? { media: 'json' as const } : decodeBody(headers['content-type'], request.body, rpc)
  const prefs = parsePrefer(headers.prefer)
  // Prefer: tx= counts (and is echoed) only where the project allows the override.
  const end = transactionEnd(transaction.txEnd, prefs.tx)
  prefs.tx = end.honoured
  const { media, stripNulls, plan } = parseAccept(headers.accept, transaction.plans)
  const query = parseQuery(request.query)
  let name: string
  try {
    name = decodeURIComponent(rpc ? match.params.fn! : match.params.relation!)
  } catch {
    throw restErrors.invalidPath()
  }
  return {
    method,
    target: rpc ? 'rpc' : 'relation',
    name,
    query,
    prefs,
    media,
    stripNulls,
    range: method === 'GET' ? parseRange(headers.range) : undefined,
    body: request.body,
    bodyMedia: body.media,
    payload: body.payload,
    maxRows,
    aggregates,
    profile,
    facts: { method, path: request.path, headers, schema: profile.schema },
    preRequest,
    rollback: end.rollback,
    plan,
  }
}

/** The media the OpenAPI description answers in (PostgREST: its own, JSON, or anything). */
const OPENAPI_MEDIA = new Set(['application/openapi+json', 'application/json', 'application/*', '*/*'])

/** `GET /` and `HEAD /`: what the OpenAPI description needs of the request, checked before a connection is taken. */
export function parseRoot(
  request: Pick<ServiceRequest, 'method' | 'path' | 'headers'>,
  baseUrl: string,
  exposed: readonly string[] = DEFAULT_EXPOSED_SCHEMAS,
  preRequest: string | null = null,
): RootCall {
  const method = request.method
  if (method !== 'GET' && method !== 'HEAD') throw restErrors.method(method)
  const accept = request.headers.accept
  if (accept && accept.trim() !== '' && !accept.split(',').some((part) => OPENAPI_MEDIA.has(part.split(';')[0]!.trim().toLowerCase()))) {
    throw restErrors.mediaType(accept)
  }
  const profile = profileOf(request.headers['accept-profile'], exposed)
  return { method, profile, facts: { method, path: request.path, headers: request.headers, schema: profile.schema }, baseUrl, preRequest }
}

const connectionOf = (request: ServiceRequest<RestProjectContext>) => ({
  firstRoundTrip: <T>(first: (client: pg.PoolClient) => Promise<T>) => {
    const pool = projectPools().get(request.project.database)
    // Each round trip waits at most the role's statement timeout and a margin for a server that hangs.
    return firstRoundTrip(connectAs(() => pool.connect(), request.project.roleTimeouts, request.identity!.role), first)
  },
  release: (client: pg.PoolClient, broken?: Error) => client.release(broken),
})

const handler: ServiceHandler<RestProjectContext> = async (request): Promise<ServiceResponse> => {
  if (request.path === '' || request.path === '/') {
    let root: RootCall
    try {
      root = parseRoot(request, request.project.baseUrl, request.project.schemas, request.project.preRequest)
    } catch (error) {
      if (!RestError.is(error)) throw error
      return restErrorResponse(error)
    }
    return namingPreRequest(await answerRoot<pg.PoolClient>(root, { identity: request.identity!, project: request.project }, cache, connectionOf(request)), root.preRequest)
  }
  let call: ParsedCall
  try {
    const options = workerOptions().rest
    // The project's own max rows when the operator set one, else the node's (BASEPLANE_REST_MAX_ROWS).
    const maxRows = request.project.maxRows ?? options?.maxRows ?? DEFAULT_MAX_ROWS
    const { txEnd, plans } = request.project
    call = parseCall(request, maxRows, options?.aggregates ?? false, request.project.schemas, request.project.preRequest, { txEnd, plans })
  } catch (error) {
    if (!RestError.is(error)) throw error
    return restErrorResponse(error)
  }
  // A pre-request function that cannot be called fails every request: the answer says it is that function (pre-request-failure.ts).
  return namingPreRequest(await answerRest<pg.PoolClient>(call, { identity: request.identity!, project: request.project }, cache, connectionOf(request)), call.preRequest)
}

export default handler
