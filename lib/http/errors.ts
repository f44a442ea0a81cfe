// One error encoder per wire shape. Plain functions over plain data, so the
// data plane, the admin API and the worker threads all call the same ones.
import { BaseplaneError } from '../errors.ts'
import type { OutgoingResponse } from '../http.ts'

/** Which shape a doorway answers its errors in. */
export type ErrorShape = 'gotrue' | 'platform' | 'postgrest' | 'storage'

const JSON_TYPE = 'application/json'

/** The platform's shape: `{code, message, hint?}`, x-sb-error-code, and Retry-After when the error carries one. */
export function platformErrorResponse(error: BaseplaneError): OutgoingResponse {
  const headers: Record<string, string> = { 'content-type': JSON_TYPE, 'x-sb-error-code': error.code }
  if (error.retryAfter !== undefined) headers['retry-after'] = String(error.retryAfter)
  const body: Record<string, unknown> = { code: error.code, message: error.message }
  if (error.hint) body.hint = error.hint
  return { status: error.status, headers, body: JSON.stringify(body) }
}

/**
 * GoTrue's two shapes: `{code, message}` when the request carries
 * X-Supabase-Api-Version (echoed back), else `{code: <status>, error_code, msg}`.
 * Both set x-sb-error-code, except weak_password in the versioned shape (as
 * GoTrue does). `extra` adds the body fields GoTrue adds for some codes.
 */
export function gotrueErrorResponse(error: BaseplaneError, requestHeaders: Record<string, string>, extra: Record<string, unknown> = {}): OutgoingResponse {
  const headers: Record<string, string> = { 'content-type': JSON_TYPE }
  if (error.retryAfter !== undefined) headers['retry-after'] = String(error.retryAfter)
  const apiVersion = requestHeaders['x-supabase-api-version']
  if (apiVersion) {
    headers['x-supabase-api-version'] = apiVersion
    if (error.code !== 'weak_password') headers['x-sb-error-code'] = error.code
    return { status: error.status, headers, body: JSON.stringify({ code: error.code, message: error.message, ...extra }) }
  }
  headers['x-sb-error-code'] = error.code
  return { status: error.status, headers, body: JSON.stringify({ code: error.status, error_code: error.code, msg: error.message, ...extra }) }
}

/** GoTrue answers a token it cannot verify with 403 and this sentence; the gate's bad_jwt is reworded so. */
function asGotrueRefusal(error: BaseplaneError): BaseplaneError {
  if (error.code !== 'bad_jwt') return error
  const reason = error.message.replace(/^Invalid JWT: /, '')
  return new BaseplaneError('bad_jwt', `invalid JWT: unable to parse or verify signature, ${reason}`, 403, undefined, error.retryAfter)
}

/**
 * PostgREST's shape, `{code, details, hint, message}` (null when absent), for
 * the data API. The platform's own refusals keep their codes (`no_api_key`,
 * `project_suspended`): postgrest-js hands the body to the app as `error`.
 */
export function postgrestErrorResponse(
  status: number,
  body: { code: string; message: string; details?: string | object[] | null; hint?: string | null },
  headers: Record<string, string> = {},
): OutgoingResponse {
  return {
    status,
    headers: { 'content-type': `${JSON_TYPE}; charset=utf-8`, ...headers },
    body: JSON.stringify({ code: body.code, details: body.details ?? null, hint: body.hint ?? null, message: body.message }),
  }
}

/** The data plane's own refusals (before a worker runs), in the shape the concern's manifest names. */
export function refusalResponse(error: BaseplaneError, shape: ErrorShape | undefined, requestHeaders: Record<string, string>): OutgoingResponse {
  if (shape === 'gotrue') return gotrueErrorResponse(asGotrueRefusal(error), requestHeaders)
  if (shape === 'postgrest') {
    const headers: Record<string, string> = { 'x-sb-error-code': error.code }
    if (error.retryAfter !== undefined) headers['retry-after'] = String(error.retryAfter)
    return postgrestErrorResponse(error.status, { code: error.code, message: error.message, hint: error.hint }, headers)
  }
  // Storage's `{statusCode, code, error, message}` (workers/storage/errors.ts makes the same for its own errors).
  if (shape === 'storage') return storageShaped(error)
  return platformErrorResponse(error)
}

function storageShaped(error: BaseplaneError): OutgoingResponse {
  const headers: Record<string, string> = { 'content-type': JSON_TYPE }
  if (error.retryAfter !== undefined) headers['retry-after'] = String(error.retryAfter)
  return { status: error.status, headers, body: JSON.stringify({ statusCode: String(error.status), code: error.code, error: error.code, message: error.message }) }
}

/** pg_graphql's request-level shape: `{"errors":[{"message"}]}` with the given status. */
export function graphqlErrorResponse(status: number, message: string, headers: Record<string, string> = {}): OutgoingResponse {
  return { status, headers: { 'content-type': JSON_TYPE, ...headers }, body: JSON.stringify({ errors: [{ message }] }) }
}

/** pg_graphql's execution-level shape: HTTP 200, `{data: null, errors}`. */
export function graphqlDataErrorResponse(message: string): OutgoingResponse {
  return { status: 200, headers: { 'content-type': JSON_TYPE }, body: JSON.stringify({ data: null, errors: [{ message }] }) }
}
