// A plan on request (PostgREST's `db-plan-enabled`; the media in
// request/plan-media.ts): the EXPLAIN of the very statement the request would
// run, as the request's prepared statement (`explain (...) execute ...`), in
// the request's own transaction, so it is planned (and with `analyze` run) as
// the caller: its role, claims, policies, timeouts, read-only for reads, the
// pre-request function before it. That transaction is always rolled back
// (deferred constraints are not checked): the answer is a plan, never the
// statement's effect, so `options=analyze` on a write keeps nothing.
// PostgREST commits it unless `Prefer: tx=rollback`; docs/rest.md says so.
// The reply is PostgREST's: 200, the plan media's Content-Type, the profile,
// no Content-Range or Preference-Applied, nothing of `response.headers`.
import type pg from 'pg'
import { preparedCall } from '../../../lib/db/prepared-statements.ts'
import { OWN_TRANSACTION } from '../../../lib/db/request-transaction.ts'
import { resultsOf } from '../../../lib/db/schema-keyed-run.ts'
import type { ServiceResponse } from '../../../lib/service.ts'
import { planContentType, type PlanMedia } from '../request/plan-media.ts'
import { profileHeaders, type Profile } from '../request/profiles.ts'

/** What a request without a statement (an empty write) is planned as: PostgreSQL's plan of no rows. */
const NO_STATEMENT = 'select where false'

/** The EXPLAIN of `statement` as the plan asks (EXPLAIN's options in PostgREST's order, then the format). */
export function explainOf(plan: PlanMedia, statement: string): string {
  return `explain (${[...plan.options, `format ${plan.format}`].join(', ')}) ${statement}`
}

/** The plan as PostgREST writes it: JSON's one document, or text's lines each ended by a newline. */
function bodyOf(plan: PlanMedia, rows: Array<{ 'QUERY PLAN': unknown }>): string {
  if (plan.format === 'json') return JSON.stringify(rows[0]?.['QUERY PLAN'] ?? [])
  return rows.map((row) => `${String(row['QUERY PLAN'])}\n`).join('')
}

export interface PlanRun {
  client: pg.ClientBase
  /** The role the statement is prepared for (the transaction's, from the schema key). */
  role: string
  plan: PlanMedia
  method: string
  profile: Profile
  /** The statement's text and parameters; undefined when the request needs none. */
  statement: { sql: string; params: Array<string | null> } | undefined
  /** What runs before the statement in its message (the zone, the pre-request function). */
  before: readonly string[]
}

/** Runs the EXPLAIN in the open transaction, rolls the transaction back, and answers the plan. */
export async function answerPlan(run: PlanRun): Promise<ServiceResponse> {
  const { client, plan } = run
  const prepared = run.statement === undefined ? undefined : preparedCall(client, run.role, run.statement.sql, run.statement.params)
  const text = [...(prepared?.before ?? []), ...run.before, explainOf(plan, prepared?.execute ?? NO_STATEMENT)].join('; ')
  const results = resultsOf(await client.query(text))
  const rows = results[results.length - 1]!.rows as Array<{ 'QUERY PLAN': unknown }>
  await client.query(OWN_TRANSACTION.rollback)
  const headers = { 'content-type': planContentType(plan), ...profileHeaders(run.profile) }
  return { status: 200, headers, body: run.method === 'HEAD' ? '' : bodyOf(plan, rows) }
}
