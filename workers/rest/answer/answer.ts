// One data API request answered as `{base_url}/rest/v1` answers it: parse and
// check everything the request says before a connection is taken (PGRST100
// and the limits in milliseconds), then run its one statement as the caller,
// in one transaction (lib/db/request-transaction.ts's identity statement:
// role, claims, the role's timeouts; read-only for GET and HEAD and past the
// project's size quota), and shape the answer (respond.ts).
//
// Round trips: once this thread has seen the project's schema for the
// caller's role, the request is planned against it and sent in one message
// with the identity statement; the statement reads the schema key back
// (lib/pg-catalog/schema-version.ts) and, if the schema moved, the answer is
// dropped and the request planned again on the fresh schema. A read is then
// one round trip (an implicit transaction). A write with nothing to check
// before its commit is one too: its identity statement also guards the key
// (lib/pg-catalog/schema-version.ts keyGuard), so planned on a moved schema it writes nothing. A
// write whose result is checked is its statement inside BEGIN, then COMMIT
// once the result and the key are seen (two round trips), or ROLLBACK when
// the schema moved. A statement that fails is answered once the key, read
// again, shows the schema did not move (so a failing write never runs
// twice). Otherwise (a cold thread, a moved schema, an error): BEGIN with the
// identity and the key, the model from the cache (built on a miss), the
// statement, COMMIT. What SQL set of the reply's status and headers is read
// in the statement's message too (response-settings.ts). A request whose
// transaction is to be rolled back (`Prefer: tx=rollback` where the project
// allows it, lib/rest-tx-end.ts) and that may write is inside BEGIN, ended
// by ROLLBACK once its answer is checked (deferred constraints checked
// first); a plan (plans.ts) takes the ordinary path.
import type pg from 'pg'
import type { Caller, Connection } from '../../../lib/db/caller.ts'
import { classifyDatabaseError, databaseAnswered, isConnectionLost, READ_ONLY_TRANSACTION, reportDatabaseFailure } from '../../../lib/db/database-errors.ts'
import { preparedCall, resync, type Bind } from '../../../lib/db/prepared-statements.ts'
import { identityCall, OWN_TRANSACTION } from '../../../lib/db/request-transaction.ts'
import { keyMoved, lastRow, probeOf, runOrdinary, SchemaKeys, serverOf, speculate, type KeyMemory } from '../../../lib/db/schema-keyed-run.ts'
import { GUARD_FAILURE, keyGuard, metaColumns, type Meta, type Probe } from '../../../lib/pg-catalog/schema-version.ts'
import { preRequestCall } from '../../../lib/pg-catalog/pre-request.ts'
import { quotaRefusal } from '../../../lib/plans.ts'
import type { ServiceResponse } from '../../../lib/service.ts'
import { RestError, restErrors } from '../errors.ts'
import type { ModelCache, RestModel } from '../schema/model.ts'
import { openApiDocument } from './openapi.ts'
import { answerPlan } from './plans.ts'
import type { PlanMedia } from '../request/plan-media.ts'
import { plan, type Planned, type RestCall } from '../plan/plan.ts'
import { profileHeaders, type Profile } from '../request/profiles.ts'
import { responseSettingsCall, withResponseSettings, type ResponseSettings } from './response-settings.ts'
import { honouredTimezone, timezoneCall } from './timezones.ts'
import { requestSettings, type RequestFacts } from './settings.ts'
import { checkResult, resultChecked, isPgError, pgErrorResponse, respond, restErrorResponse, unavailableResponse, type ResultRow } from './respond.ts'

export type { Caller, Connection }

/**
 * A request whose schema-free parts are parsed, its schema chosen among the
 * exposed ones (profiles.ts), with the project's pre-request function (null:
 * none), whether its transaction ends in ROLLBACK (lib/rest-tx-end.ts), and
 * the plan asked for, where the project answers plans (plan-media.ts).
 */
export type ParsedCall = Omit<RestCall, 'schema'> & { profile: Profile; facts: RequestFacts; preRequest: string | null; rollback?: boolean; plan?: PlanMedia }

/**
 * How a transaction that may have written ends: COMMIT, or for a request
 * that asked for it, ROLLBACK once its deferred constraints were checked (so
 * it is refused as a committed one would be, as PostgREST's).
 */
const endOf = (call: ParsedCall): string => (call.rollback ? `set constraints all immediate; ${OWN_TRANSACTION.rollback}` : OWN_TRANSACTION.commit)

/** The schema key last read per project and role on this thread: what a request is planned against before it is read again. */
const schemaKeys = new SchemaKeys()

/** The request's statement's result: the message's last, or its next-to-last when the response settings' read follows it. */
const statementResult = (results: pg.QueryResult[], settingsFollow: boolean): pg.QueryResult => results[results.length - (settingsFollow ? 2 : 1)]!

/**
 * The text to run for `planned`, `meta` first in its select list (the
 * schema key's columns, or empty), and how its answer row is read: a write
 * that answers only its count, run with no key to read, is its bare
 * statement, its row made of the command's count (plan.ts). Not in a
 * read-only transaction, whose refusal names the top-level command: it
 * says SELECT, as PostgREST's, whose writes are all CTEs.
 */
function statementOf(planned: Planned, meta: string, readOnly: boolean): { sql: string; rowOf: (result: pg.QueryResult) => ResultRow } {
  const bare = meta === '' && !readOnly ? planned.bare : undefined
  if (bare !== undefined) return { sql: bare.sql, rowOf: (result) => bare.row(result.rowCount ?? 0) }
  return { sql: planned.sql(meta), rowOf: (result) => result.rows[0] as ResultRow }
}

/** What a guarded setup checks is still so (lib/pg-catalog/schema-version.ts keyGuard): the key a message was planned on. */
interface PlannedOn {
  meta: Meta
  served: readonly string[]
}

/**
 * The statements that make the transaction the caller's (role, claims,
 * timeouts, the request settings) as a prepared statement of `client`: its
 * PREPARE when new, then its EXECUTE. With `guard`, the setup fails unless
 * the schema key is still that of `guard`.
 */
function setupOf(client: pg.ClientBase, caller: Caller, readOnly: boolean, facts: RequestFacts, guard?: PlannedOn): string[] {
  const { identity, project } = caller
  const returned = (bind: Bind) => (guard ? [keyGuard(guard.meta, guard.served, bind)] : [])
  const call = identityCall(client, identity, project.roleTimeouts, readOnly, (bind) => requestSettings(facts, bind), returned)
  return [...call.before, call.execute]
}

/**
 * Whether the response settings are read after the statement (a write: its
 * AFTER triggers fire once its own columns are computed) rather than as its
 * last columns (reads and functions; response-settings.ts).
 */
const settingsAfter = (planned: Planned): boolean => planned.kind !== 'read' && planned.kind !== 'rpc'

/** The project's pre-request function's call, when it names one, to run after the setup and before the statement. */
const preRequest = (name: string | null): string[] => (name === null ? [] : [preRequestCall(name)])

/** What runs between the setup and the request's statement: the zone it asked for (timezones.ts), then the pre-request function, as PostgREST orders them. */
const beforeStatement = (call: ParsedCall): string[] => [...timezoneCall(call.prefs.timezone), ...preRequest(call.preRequest)]

/** The request planned on the model, for the schema its profile chose (checked again: the model may be of an older list). */
function planFor(model: RestModel, call: ParsedCall): { planned: Planned; full: RestCall } {
  const { schema, named } = call.profile
  if (!model.schemas.includes(schema)) throw restErrors.schema(schema, model.schemas)
  const contentProfile = named ? schema : undefined
  const full: RestCall = { ...call, schema, contentProfile, query: { ...call.query, filters: [...call.query.filters], embedParams: [...call.query.embedParams] } }
  return { planned: plan(model, full), full }
}

/** Whether an upsert's resolution was honoured (a primary key or on_conflict to resolve on). */
function resolutionUsed(model: RestModel, call: RestCall): boolean {
  if (call.prefs.resolution === undefined || call.target !== 'relation') return false
  if (call.query.onConflict !== undefined) return true
  return (model.tables.get(`${call.schema}\0${call.name}`)?.primaryKey?.length ?? 0) > 0
}

export async function answerRest<C extends pg.ClientBase>(call: ParsedCall, caller: Caller, cache: ModelCache, connection: Connection<C>): Promise<ServiceResponse> {
  return guarded(caller, connection, (client) => run(client, call, caller, cache))
}

/** A request for the OpenAPI description (`GET /`): what it needs of the request, and where the project is served. */
export interface RootCall {
  method: 'GET' | 'HEAD'
  profile: Profile
  facts: RequestFacts
  baseUrl: string
  preRequest: string | null
}

/**
 * `GET /rest/v1/`: the description of the exposed schema as the caller's role
 * sees it (openapi.ts), from the model cache (the catalogue query only on a
 * miss), in a transaction set up as any request's, the pre-request function
 * included (PostgREST runs it for the root too).
 */
export async function answerRoot<C extends pg.ClientBase>(call: RootCall, caller: Caller, cache: ModelCache, connection: Connection<C>): Promise<ServiceResponse> {
  return guarded(caller, connection, async (client) => {
    const probe = await probeOf(client)
    return runOrdinary<ServiceResponse>(
      {
        client,
        frame: OWN_TRANSACTION,
        setup: () => setupOf(client, caller, true, call.facts),
        probe,
        served: call.profile.exposed,
        work: async (meta) => {
          const model = await cache.get(client, serverOf(client), meta)
          const { schema } = call.profile
          await client.query([...preRequest(call.preRequest), OWN_TRANSACTION.commit].join('; '))
          const body = call.method === 'HEAD' ? '' : openApiDocument(model, schema, call.baseUrl)
          return { status: 200, headers: { 'content-type': 'application/openapi+json; charset=utf-8', ...profileHeaders(call.profile) }, body }
        },
        failed: (error) => failed(error, { method: call.method }, caller),
      },
      false,
    )
  })
}

/** Runs `work` on a connection of the project and answers what it answers; a failure it lets through is answered here. */
async function guarded<C extends pg.ClientBase>(caller: Caller, connection: Connection<C>, work: (client: C) => Promise<ServiceResponse>): Promise<ServiceResponse> {
  const { identity, project } = caller
  try {
    const { client, result } = await connection.firstRoundTrip(work)
    connection.release(client)
    databaseAnswered(project.database ?? project)
    return result
  } catch (error) {
    if (RestError.is(error)) return restErrorResponse(error)
    // A PostgreSQL error of the request's own (a constraint, a policy) is its answer, not something to log.
    const failure = isPgError(error) && classifyDatabaseError(error) === undefined ? undefined : reportDatabaseFailure(error, project.database ?? project, 'rest request')
    if (failure === 'unavailable') return unavailableResponse()
    if (isPgError(error)) return pgErrorResponse(error, identity.role)
    return restErrorResponse(restErrors.internal())
  }
}

/** The answer to a failure met while the request ran (its transaction already ended); a lost connection is rethrown for `guarded`. */
function failed(error: unknown, call: Pick<ParsedCall, 'method'>, caller: Caller): ServiceResponse {
  if (isConnectionLost(error)) throw error
  if (RestError.is(error)) return restErrorResponse(error)
  if (isPgError(error)) {
    // Past the size quota the API roles' transactions are read-only: a write is refused with the quota's sentence.
    const write = call.method !== 'GET' && call.method !== 'HEAD'
    if (error.code === READ_ONLY_TRANSACTION && write) {
      if (caller.project.readOnly === true) {
        return pgErrorResponse(error, caller.identity.role, { message: quotaRefusal('database_size_bytes', caller.project.caps?.database_size_bytes ?? 0), details: error.message })
      }
      // A write the platform left writable, refused as read-only: the server is (a standby, a promotion under way).
      reportDatabaseFailure(error, caller.project.database ?? caller.project, 'rest request', { readOnlyByPlatform: false })
      return unavailableResponse()
    }
    return pgErrorResponse(error, caller.identity.role)
  }
  throw error
}

async function run(client: pg.ClientBase, call: ParsedCall, caller: Caller, cache: ModelCache): Promise<ServiceResponse> {
  const probe = await probeOf(client)
  // The zone asked for, kept only if the server knows it (echoed in Preference-Applied only then).
  if (call.prefs.timezone !== undefined) call.prefs.timezone = await honouredTimezone(client, serverOf(client), call.prefs)
  const { identity, project } = caller
  const readOnly = project.readOnly === true || call.method === 'GET' || call.method === 'HEAD'
  const memory: KeyMemory = { keys: schemaKeys, key: schemaKeys.keyOf(client, `${project.ref}\0${identity.role}`) }
  const last = schemaKeys.last(memory.key)
  const model = last && probe.versioned ? cache.peek(serverOf(client), last) : undefined
  if (last && model && call.prefs.count !== 'planned' && call.prefs.count !== 'estimated' && call.plan === undefined) {
    const answer = await speculateRest(client, call, caller, readOnly, memory, last, model, probe)
    if (answer !== undefined) return answer
  }
  return ordinary(client, call, caller, cache, readOnly, memory, probe)
}

/** One message planned against the schema last seen; undefined when the schema moved or the plan did not fit it. */
async function speculateRest(client: pg.ClientBase, call: ParsedCall, caller: Caller, readOnly: boolean, memory: KeyMemory, last: Meta, model: RestModel, probe: Probe): Promise<ServiceResponse | undefined> {
  let planned: Planned
  let full: RestCall
  try {
    ;({ planned, full } = planFor(model, call))
  } catch (error) {
    // Parse errors are the same on any schema; schema errors are decided on the current one.
    if (RestError.is(error) && error.code === 'PGRST100') throw error
    return undefined
  }
  if (planned.empty) return undefined
  // A write with nothing to check before its commit is one implicit transaction behind a guard on the key
  // (one round trip; the guard is part of the setup, so the statement needs no key of its own); any other
  // write is inside BEGIN, committed once its result and the key are seen.
  // A transaction to roll back that may write (not read-only) is a block too: an implicit one would commit.
  const rollsBack = call.rollback === true && !readOnly
  const guarded = planned.write && !resultChecked(full, planned) && !rollsBack
  const sent = statementOf(planned, guarded ? '' : `${metaColumns(true, call.profile.exposed)}, `, readOnly)
  const statement = preparedCall(client, caller.identity.role, sent.sql, planned.params)
  // What SQL set of the reply's status and headers: a write's, read right after its statement in the same message.
  const response = settingsAfter(planned) ? responseSettingsCall(client) : undefined
  // The pre-request function is called in the same message, after the PREPAREs, so its refusal does not leave
  // our list of prepared statements wrong; a guard that stops the message before them does, and is followed by a resync.
  const setup = setupOf(client, caller, readOnly, call.facts, guarded ? { meta: last, served: call.profile.exposed } : undefined)
  const inBlock = (planned.write && !guarded) || rollsBack
  const opening = [...(inBlock ? [OWN_TRANSACTION.open] : []), ...setup]
  const rowOf = (results: pg.QueryResult[]) => sent.rowOf(statementResult(results, response !== undefined))
  return speculate<ServiceResponse>({
    client,
    memory,
    last,
    probe,
    text: [...opening, ...statement.before, ...(response?.before ?? []), ...beforeStatement(call), statement.execute, ...(response ? [response.execute] : [])].join('; '),
    inBlock,
    end: endOf(call),
    // A guarded write is committed: its guard held, so it ran on the key it was planned for.
    keyRead: (results) => (guarded ? undefined : (rowOf(results) as ResultRow & Omit<Meta, 'db'>)),
    check: (results) => checkResult(full, planned, rowOf(results)),
    answer: (results) => {
      const row = rowOf(results)
      const settings: ResponseSettings = response ? lastRow(results) : row
      return withResponseSettings(respond(full, planned, row, resolutionUsed(model, full)), settings)
    },
    statementFailed: async (error) => {
      if (isConnectionLost(error)) throw error
      // The guard (or the statement) divided by zero: if it was the guard, the PREPAREs after it never ran.
      if (guarded && isPgError(error) && error.code === GUARD_FAILURE && (statement.before.length > 0 || (response?.before.length ?? 0) > 0)) await resync(client)
      // The error is the request's own unless the schema moved: one cheap look at the key decides,
      // so a failing write is never run twice.
      if (await keyMoved({ client, memory, last, probe }, setupOf(client, caller, readOnly, call.facts), call.profile.exposed)) return undefined
      return failed(error, call, caller)
    },
    failed: (error) => failed(error, call, caller),
  })
}

function ordinary(client: pg.ClientBase, call: ParsedCall, caller: Caller, cache: ModelCache, readOnly: boolean, memory: KeyMemory, probe: Probe): Promise<ServiceResponse> {
  const pre = beforeStatement(call)
  return runOrdinary<ServiceResponse>({
    client,
    frame: OWN_TRANSACTION,
    setup: () => setupOf(client, caller, readOnly, call.facts),
    probe,
    served: call.profile.exposed,
    memory,
    work: async (meta) => {
      const model = await cache.get(client, serverOf(client), meta)
      const { planned, full } = planFor(model, call)
      if (call.plan !== undefined) {
        const statement = planned.empty ? undefined : { sql: statementOf(planned, '', readOnly).sql, params: planned.params }
        return answerPlan({ client, role: meta.role, plan: call.plan, method: call.method, profile: call.profile, statement, before: pre })
      }
      let row: ResultRow
      let settings: ResponseSettings | undefined
      if (planned.empty) {
        row = { rows: 0, body: '[]', total: call.prefs.count ? 0 : null }
        // Only the pre-request function ran: what it set of the reply is read in its message.
        if (call.preRequest !== null) {
          const response = responseSettingsCall(client)
          settings = lastRow([await client.query([...response.before, ...pre, response.execute].join('; '))].flat())
        }
      } else {
        // The pre-request call and the response settings' read ride in the statement's message (after the PREPAREs): no round trip of their own.
        const text = statementOf(planned, '', readOnly)
        const statement = preparedCall(client, meta.role, text.sql, planned.params)
        const response = settingsAfter(planned) ? responseSettingsCall(client) : undefined
        const results = [await client.query([...statement.before, ...(response?.before ?? []), ...pre, statement.execute, ...(response ? [response.execute] : [])].join('; '))].flat()
        row = text.rowOf(statementResult(results, response !== undefined))
        settings = response ? lastRow(results) : row
        if (planned.countSql && (call.prefs.count === 'planned' || Number(row.total) > full.maxRows)) row.total = await plannedCount(client, meta.role, planned.countSql)
      }
      checkResult(full, planned, row)
      await client.query(endOf(call))
      return withResponseSettings(respond(full, planned, row, resolutionUsed(model, full)), settings)
    },
    failed: (error) => failed(error, call, caller),
  })
}

/** PostgreSQL's estimate of the rows a count statement would count (`count=planned`). */
async function plannedCount(client: pg.ClientBase, role: string, count: { sql: string; params: Array<string | null> }): Promise<number> {
  const statement = preparedCall(client, role, count.sql, count.params)
  const results = [await client.query([...statement.before, `explain (format json) ${statement.execute}`].join('; '))].flat()
  const plan = lastRow<{ 'QUERY PLAN': Array<{ Plan: { 'Plan Rows': number } }> }>(results)['QUERY PLAN']
  return plan[0]!.Plan['Plan Rows']
}
