// GraphQL's face for the control plane and the CLI: the one module outside
// workers/graphql/ may import (test/platform/layout.test.ts holds it). One
// part, GraphQL's own code:
//
// - Running a document: `runAsRole` answers a request body ({query,
//   variables, operationName, extensions}) exactly as `POST
//   {base_url}/graphql/v1` would for that caller, through the same code as
//   the worker (answer.ts: the large-text precheck, resolve() in one
//   transaction as the caller with lib/db/request-transaction.ts's identity
//   statement, pg_graphql's error shapes), so the dashboard's explorer calls
//   no HTTP endpoint of the platform. The caller (role and verified claims)
//   is made as the data plane's gate makes it (lib/jwt.ts callerOf); the
//   connection is the control plane's own to the project's database, with no
//   transaction open, and a login role that may SET ROLE to the caller's role.
//   Extensions work as on the endpoint (`schemaReport`, `explain`, persisted
//   queries). Built schemas are kept in a small cache of the face's own.
//
// Everything else in workers/graphql/ (the worker, the planner, the schema
// builder) is GraphQL's alone.
import type pg from 'pg'
import type { RequestIdentity } from '../../lib/roles.ts'
import type { RoleTimeouts } from '../../lib/plans.ts'
import { answerGraphql } from './answer.ts'
import { SchemaCache, type GraphqlRequest } from './index.ts'

export type { GraphqlRequest } from './index.ts'

/**
 * Built schemas the control plane keeps: a dashboard looks at a few projects
 * at a time, each as anon, authenticated and service_role.
 */
const cache = new SchemaCache(100)

/** What the endpoint answered: its HTTP status and its JSON body. */
export interface GraphqlAnswer {
  status: number
  headers: Record<string, string>
  body: unknown
}

/**
 * Runs `request` as `identity` on `client` (connected to the project's
 * database, no transaction open; the caller ends the connection) and answers
 * what `POST {base_url}/graphql/v1` would: 200 with `{data, errors}`, or the
 * endpoint's 503 when the database is unavailable. `project` gives the ref
 * (for the logs and the cache) and the role timeouts applied to the request.
 */
export async function runAsRole(
  client: pg.ClientBase,
  request: GraphqlRequest,
  identity: RequestIdentity,
  project: { ref: string; roleTimeouts: RoleTimeouts },
): Promise<GraphqlAnswer> {
  const response = await answerGraphql(request, { identity, project }, cache, {
    firstRoundTrip: async (first) => ({ client, result: await first(client) }),
    // The caller owns the connection and ends it.
    release: () => {},
  })
  return { status: response.status, headers: response.headers, body: JSON.parse(response.body) }
}
