// The data API's settings of a project (issue 29), as the operator sees and
// sets them through the admin API (admin-api/rest.ts), the CLI (`baseplane
// projects rest`) and the dashboard's REST tab: the exposed schemas,
// PostgREST's `db-schemas`, the max rows, its `db-max-rows` (null: the node's
// BASEPLANE_REST_MAX_ROWS), the pre-request function, its
// `db-pre-request` (null: none), how transactions end, its `db-tx-end`
// (lib/rest-tx-end.ts), and whether plans are answered, its
// `db-plan-enabled` (lib/rest-plans.ts). A change is checked whole before
// anything is saved (lib/pg-catalog/exposed-schemas.ts, readMaxRows,
// lib/pg-catalog/pre-request.ts, readTxEnd, readPlans), saved on the project's row, and the
// operation waits until every node has it, so the next request is served
// with it. A schema that does not exist yet may be named: it serves nothing
// until it is created (and its grants given). A pre-request function must be
// callable when it is named (pre-request-check.ts): one that is not would
// fail every request of the project, as PostgREST's would, so it is refused;
// one dropped or revoked later is shown with what is wrong
// (`pre_request_problem`).
import type { ProjectRecord } from '../lib/catalogue.ts'
import { classifyDatabaseError } from '../lib/db/database-errors.ts'
import { API_ROLES } from '../lib/roles.ts'
import { platformErrors } from '../lib/errors.ts'
import { readExposedSchemas } from '../lib/pg-catalog/exposed-schemas.ts'
import { readPreRequest } from '../lib/pg-catalog/pre-request.ts'
import { readPlans } from '../lib/rest-plans.ts'
import { readTxEnd, type TxEnd } from '../lib/rest-tx-end.ts'
import type { ControlPlane } from './control-plane.ts'
import { preRequestProblem } from './pre-request-check.ts'
import { runInProjectDatabase } from './project-database.ts'
import { getProject } from './projects.ts'
import * as db from './db/rest-settings.ts'

/** A project's data API settings as the admin API, the CLI and the dashboard show them. */
export interface RestSettingsView {
  ref: string
  /** The exposed schemas, the default (a request without a profile header) first. */
  schemas: string[]
  /** The most rows one response carries; null: the node's default (BASEPLANE_REST_MAX_ROWS, 1,000 unless set). */
  max_rows: number | null
  /** The function called as the caller before every request's statement, `schema.fn` or `fn`; null: none. */
  pre_request: string | null
  /** Why the pre-request function cannot be called now (dropped, revoked since it was named), so every request fails; null: none named, or it can be. */
  pre_request_problem: string | null
  /** How a request's transaction ends (PostgREST's db-tx-end): commit, commit-allow-override, rollback or rollback-allow-override. */
  tx_end: TxEnd
  /** Whether Accept: application/vnd.pgrst.plan answers the statement's EXPLAIN (PostgREST's db-plan-enabled). */
  plans: boolean
}

/** What to change: each setting given, the others kept. */
export interface RestSettingsChange {
  schemas?: string[]
  max_rows?: number | null
  pre_request?: string | null
  tx_end?: TxEnd
  plans?: boolean
}

/** The admin API's settings, in the order its messages name them. */
const SETTINGS = ['schemas', 'max_rows', 'pre_request', 'tx_end', 'plans'] as const

/** The largest max rows an operator may set (Supabase's own ceiling). */
export const MAX_MAX_ROWS = 1_000_000

/**
 * A max rows as given (a JSON value): a whole number from 1 to 1,000,000, or
 * null for the node's default. A refusal is the platform's invalid_argument
 * concerning `field`, its message starting with `label`.
 */
export function readMaxRows(value: unknown, field = 'max_rows', label = field, none = 'null'): number | null {
  if (value === null) return null
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_MAX_ROWS) {
    const shown = JSON.stringify(value)?.slice(0, 40) ?? String(value)
    throw platformErrors.invalidArgument(`${label} must be a whole number from 1 to 1,000,000, or ${none} for the node's default, got ${shown}`, field)
  }
  return value
}

/** A max rows as typed on a command line or in a form: digits, or `default` (or nothing, in a form) for the node's. */
export function maxRowsFromText(text: string, field = 'max_rows', label = field): number | null {
  const typed = text.trim().replaceAll(',', '').replaceAll('_', '')
  if (typed === '' || typed.toLowerCase() === 'default') return null
  return readMaxRows(/^\d+$/.test(typed) ? Number(typed) : text.trim(), field, label, 'default')
}

export async function getRestSettings(controlPlane: ControlPlane, ref: string): Promise<RestSettingsView> {
  const project = await getProject(controlPlane, ref)
  return { ref: project.ref, schemas: project.restSchemas, max_rows: project.restMaxRows, pre_request: project.restPreRequest, pre_request_problem: await currentPreRequestProblem(controlPlane, project), tx_end: project.restTxEnd, plans: project.restPlans }
}

/** Why `name` cannot be called before the requests of `project` exposing `schemas`, as its API roles; undefined when it can (pre-request-check.ts). */
async function preRequestProblemOf(controlPlane: ControlPlane, project: ProjectRecord, name: string, schemas: readonly string[]): Promise<string | undefined> {
  const roles = [...API_ROLES, ...project.projectRoles]
  return runInProjectDatabase(await controlPlane.serverUrl(project.dbServer), project.dbName, (client) => preRequestProblem(client, name, schemas, roles))
}

/** The saved pre-request function's problem now, for the view; null when none is named or it can be called. */
export async function currentPreRequestProblem(controlPlane: ControlPlane, project: ProjectRecord): Promise<string | null> {
  if (project.restPreRequest === null) return null
  try {
    return (await preRequestProblemOf(controlPlane, project, project.restPreRequest, project.restSchemas)) ?? null
  } catch (error) {
    // Showing the settings does not need the project's database: a server that does not answer leaves it unchecked, said so.
    if (classifyDatabaseError(error) === undefined) throw error
    return "not checked: the project's database did not answer"
  }
}

/** The admin API's body, `{schemas?: [...], max_rows?: n | null, pre_request?: name | null, tx_end?: value, plans?: boolean}`, checked whole before anything is saved. */
export function restSettingsChangeFromBody(body: Record<string, unknown>): RestSettingsChange {
  const unknown = Object.keys(body).find((key) => !(SETTINGS as readonly string[]).includes(key))
  if (unknown !== undefined) throw platformErrors.invalidArgument(`Unknown setting "${unknown.slice(0, 40)}": use schemas, max_rows, pre_request, tx_end or plans`, unknown)
  if (!SETTINGS.some((setting) => setting in body)) {
    throw platformErrors.invalidArgument(
      'Give schemas (the list of exposed schemas, such as ["public", "api"]), max_rows (a whole number, or null for the default), pre_request (a function as schema.function, or null for none), tx_end (commit, commit-allow-override, rollback or rollback-allow-override) or plans (true or false)',
      'schemas',
    )
  }
  const change: RestSettingsChange = {}
  if ('schemas' in body) change.schemas = readExposedSchemas(body.schemas)
  if ('max_rows' in body) change.max_rows = readMaxRows(body.max_rows)
  if ('pre_request' in body) change.pre_request = readPreRequest(body.pre_request)
  if ('tx_end' in body) change.tx_end = readTxEnd(body.tx_end)
  if ('plans' in body) change.plans = readPlans(body.plans)
  return change
}

/** Saves a checked change and waits until every node has it. */
export async function setRestSettings(controlPlane: ControlPlane, ref: string, change: RestSettingsChange): Promise<RestSettingsView> {
  const project = await getProject(controlPlane, ref)
  // Checked again whoever calls: nothing is saved unless all of it holds.
  const schemas = change.schemas === undefined ? undefined : readExposedSchemas(change.schemas)
  const maxRows = change.max_rows === undefined ? undefined : readMaxRows(change.max_rows)
  const preRequest = change.pre_request === undefined ? undefined : readPreRequest(change.pre_request)
  const txEnd = change.tx_end === undefined ? undefined : readTxEnd(change.tx_end)
  const plans = change.plans === undefined ? undefined : readPlans(change.plans)
  if (preRequest !== undefined && preRequest !== null) {
    // Named, it runs before every request: one that cannot be called would fail them all (a server that does not answer refuses the change too).
    const problem = await preRequestProblemOf(controlPlane, project, preRequest, schemas ?? project.restSchemas)
    if (problem !== undefined) throw platformErrors.invalidArgument(`The pre-request function ${preRequest} cannot be called: ${problem}`, 'pre_request')
  }
  if (!(await db.writeRestSettings(controlPlane.catalogue, project.ref, { schemas, maxRows, preRequest, txEnd, plans }))) throw platformErrors.unknownProject(ref)
  await controlPlane.changed()
  return getRestSettings(controlPlane, ref)
}
