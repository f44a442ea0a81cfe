// The answer of a data API request as PostgREST writes it
// (shared/reference/postgrest.md sections 2, 3 and 5): statuses,
// Content-Range, Location, Preference-Applied, the three media, and errors,
// PostgreSQL's mapped to HTTP statuses as PostgREST maps them.
import { postgrestErrorResponse } from '../../../lib/http/errors.ts'
import { RETRY_AFTER_SECONDS } from '../../../lib/db/database-errors.ts'
import type { ServiceResponse } from '../../../lib/service.ts'
import { RestError, restErrors } from '../errors.ts'
import type { Planned, RestCall } from '../plan/plan.ts'
import type { ResponseSettings } from './response-settings.ts'

/** What the statement answered: one row (with the response settings, when it reads them: response-settings.ts). */
export interface ResultRow extends ResponseSettings {
  rows: string | number
  body: string | null
  total: string | number | null
  location?: string | null
  inserted?: string | number | null
}

const CONTENT_TYPES = { json: 'application/json; charset=utf-8', object: 'application/vnd.pgrst.object+json; charset=utf-8', csv: 'text/csv; charset=utf-8' }

export function restErrorResponse(error: RestError, headers: Record<string, string> = {}): ServiceResponse {
  return postgrestErrorResponse(error.status, { code: error.code, message: error.message, details: error.details, hint: error.hint }, { ...headers, 'proxy-status': `PostgREST; error=${error.code}` })
}

export function unavailableResponse(): ServiceResponse {
  return restErrorResponse(restErrors.unavailable(), { 'retry-after': String(RETRY_AFTER_SECONDS) })
}

interface PgError {
  code: string
  message: string
  detail?: string
  hint?: string
}

export function isPgError(error: unknown): error is PgError & Error {
  return error instanceof Error && typeof (error as { code?: unknown }).code === 'string' && 'severity' in error
}

/** PostgREST's SQLSTATE to HTTP status. */
export function statusOf(code: string, message: string, role: string): number {
  if (/^PT\d{3}$/.test(code)) return Number(code.slice(2))
  if (code === '23503' || code === '23505') return 409
  if (code === '42501') return role === 'anon' ? 401 : 403
  if (code === '42P01' || code === '42883') return 404
  if (code === '25006') return 405
  if (code === 'P0001') return 400
  if (code === '22023') return /^role .* does not exist$/.test(message) ? 401 : 400
  if (code === '21000') return message.endsWith('requires a WHERE clause') ? 400 : 500
  if (code === '53400' || code === '42P17') return 500
  const cls = code.slice(0, 2)
  if (['08', '53'].includes(cls) || code === '57P01') return 503
  if (['0L', '0P', '28'].includes(cls)) return 403
  if (['09', '25', '2D', '38', '39', '3B', '40', '54', '55', '57', '58', 'F0', 'HV', 'P0', 'XX'].includes(cls)) return 500
  return 400
}

/** A PostgreSQL error as PostgREST passes it through: SQLSTATE, message, DETAIL, HINT. */
export function pgErrorResponse(error: PgError, role: string, override?: { message: string; details: string }): ServiceResponse {
  const status = statusOf(error.code, error.message, role)
  const headers: Record<string, string> = {}
  if (status === 401) headers['www-authenticate'] = 'Bearer'
  return restErrorResponse(new RestError(error.code, status, override?.message ?? error.message, override?.details ?? error.detail ?? null, error.hint ?? null), headers)
}

function contentRange(first: number, rows: number, total: number | undefined): string {
  const all = total === undefined ? '*' : String(total)
  return rows > 0 ? `${first}-${first + rows - 1}/${all}` : `*/${all}`
}

/** `Preference-Applied`: the honoured preferences, in PostgREST's order, as this method echoes them. */
function preferenceApplied(call: RestCall, planned: Pick<Planned, 'kind'>, resolutionUsed: boolean): string | undefined {
  const p = call.prefs
  const m = call.method
  const out: string[] = []
  const write = m === 'POST' || m === 'PATCH' || m === 'PUT' || m === 'DELETE'
  const rpcPost = planned.kind === 'rpc'
  if (m === 'POST' && !rpcPost && p.resolution && resolutionUsed) out.push(`resolution=${p.resolution}`)
  if ((m === 'POST' || m === 'PATCH') && !rpcPost && p.missing) out.push(`missing=${p.missing}`)
  if (write && !rpcPost && p.return) out.push(`return=${p.return}`)
  if (p.count) out.push(`count=${p.count}`)
  if (p.tx) out.push(`tx=${p.tx}`)
  if (p.handling) out.push(`handling=${p.handling}`)
  if (p.timezone !== undefined) out.push(`timezone=${p.timezone}`)
  if (p.handling === 'strict' && p.maxAffected !== undefined && (m === 'PATCH' || m === 'DELETE' || planned.kind === 'rpc')) out.push(`max-affected=${p.maxAffected}`)
  return out.length > 0 ? out.join(', ') : undefined
}

function csvOf(header: readonly string[], rows: number, body: string): string {
  if (rows === 0) return ''
  return `${header.join(',')}\n${body}`
}

/** The checks PostgREST makes on a result before it commits: one row for an object, max-affected. */
export function checkResult(call: RestCall, planned: Planned, row: ResultRow): void {
  const rows = Number(row.rows)
  if (singularChecked(call, planned) && rows !== 1) throw restErrors.singular(rows)
  if (maxAffectedChecked(call, planned)) {
    if (planned.kind === 'rpc' && planned.result !== undefined) throw restErrors.maxAffectedScalar()
    if (rows > call.prefs.maxAffected!) throw restErrors.maxAffected(rows)
  }
}

/** Whether the answer must be exactly one row (`Accept: application/vnd.pgrst.object+json`). */
function singularChecked(call: RestCall, planned: Planned): boolean {
  const scalarish = planned.result === 'scalar' || planned.result === 'void'
  return call.media === 'object' && !scalarish && planned.kind !== 'put' && (planned.kind !== 'insert' && planned.kind !== 'update' && planned.kind !== 'delete' || call.prefs.return === 'representation')
}

/** Whether the rows a write touched are held to `Prefer: handling=strict, max-affected=N`. */
function maxAffectedChecked(call: RestCall, planned: Planned): boolean {
  const strict = call.prefs.handling === 'strict' && call.prefs.maxAffected !== undefined
  return strict && (planned.kind === 'update' || planned.kind === 'delete' || planned.kind === 'rpc')
}

/** Whether checkResult may refuse the request's result, so that a write must not commit before it is seen. */
export function resultChecked(call: RestCall, planned: Planned): boolean {
  return singularChecked(call, planned) || maxAffectedChecked(call, planned)
}

/** The answer to a request whose statement ran (or that needed none: `planned.empty`). */
export function respond(call: RestCall, planned: Planned, row: ResultRow, resolutionUsed: boolean): ServiceResponse {
  const rows = Number(row.rows)
  const counted = call.prefs.count !== undefined && row.total !== null && row.total !== undefined
  const total = counted ? Number(row.total) : undefined
  const headers: Record<string, string> = call.contentProfile === undefined ? {} : { 'content-profile': call.contentProfile }
  const applied = preferenceApplied(call, planned, resolutionUsed)
  if (applied) headers['preference-applied'] = applied
  const head = call.method === 'HEAD'
  const media = planned.result === 'object' ? 'object' : call.media
  const bodyOf = (text: string | null): string => {
    if (text === null) return ''
    if (call.media === 'csv' && planned.result === undefined) return csvOf(planned.csvHeader, rows, text)
    // A function's one composite value that filters removed is `null`, as PostgREST's single-object aggregate gives.
    if (planned.result === 'object' && rows === 0) return 'null'
    if (media === 'object' && planned.result !== 'scalar') return rows === 1 ? text.slice(1, -1).trim() : text
    return text
  }
  const withBody = (status: number, text: string | null, type = CONTENT_TYPES[media]): ServiceResponse => {
    if (head || text === null) return { status, headers, body: '' }
    headers['content-type'] = type
    return { status, headers, body: bodyOf(text) }
  }
  switch (planned.kind) {
    case 'read':
    case 'rpc': {
      if (planned.result === 'void') return { status: 204, headers, body: '' }
      const offset = planned.offset
      if (total !== undefined && offset > total && !(planned.result === 'scalar')) {
        throw restErrors.range(`An offset of ${offset} was requested, but there are only ${total} rows.`)
      }
      headers['content-range'] = planned.result === 'scalar' ? `0-0/${total ?? '*'}` : contentRange(offset, rows, total)
      const status = total !== undefined && planned.result === undefined && rows < total && !(offset === 0 && rows === total) ? 206 : 200
      return withBody(status, row.body ?? (planned.result === 'scalar' ? 'null' : '[]'))
    }
    case 'insert': {
      headers['content-range'] = `*/${total ?? '*'}`
      if (call.prefs.return === 'headers-only' && planned.location && row.location) {
        const pk = JSON.parse(row.location) as Record<string, unknown>
        const query = planned.location.pk.map((c) => `${encodeURIComponent(c)}=eq.${encodeURIComponent(String(pk[c]))}`).join('&')
        headers.location = `/${encodeURIComponent(planned.location.table)}?${query}`
      }
      const insertedNone = row.inserted !== null && row.inserted !== undefined && Number(row.inserted) === 0 && rows > 0
      const status = call.prefs.resolution === 'merge-duplicates' && insertedNone ? 200 : 201
      return call.prefs.return === 'representation' ? withBody(status, row.body ?? '[]') : { status, headers, body: '' }
    }
    case 'update':
    case 'delete': {
      headers['content-range'] = planned.kind === 'update' ? contentRange(0, rows, total) : `*/${total ?? '*'}`
      return call.prefs.return === 'representation' ? withBody(200, row.body ?? '[]') : { status: 204, headers, body: '' }
    }
    case 'put': {
      if (call.prefs.return !== 'representation') return { status: 204, headers, body: '' }
      const inserted = row.inserted !== null && row.inserted !== undefined && Number(row.inserted) > 0
      return withBody(inserted ? 201 : 200, row.body ?? '[]')
    }
  }
}
