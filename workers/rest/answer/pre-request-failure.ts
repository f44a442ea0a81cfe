// The answer of a request whose pre-request function (the project's
// `db-pre-request`, lib/pg-catalog/pre-request.ts) could not be called: it
// was dropped, its schema was, or the role lost EXECUTE on it since the
// operator named it (the control plane refuses one that cannot be called
// when it is named: control-plane/pre-request-check.ts). PostgREST passes
// PostgreSQL's error through, `schema "nosuch" does not exist` on a request
// for /notes, which sends the caller looking at their request. Here the
// SQLSTATE and the HTTP status stay PostgREST's (a client branching on them
// sees what it would), and the message names the pre-request function, the
// details say that every request fails until it can be called, the hint what
// to do. Only PostgreSQL's sentences about that very function (or its schema)
// are taken for it: any other error is the request's own and passes through.
import type { ServiceResponse } from '../../../lib/service.ts'
import { parsePreRequest } from '../../../lib/pg-catalog/pre-request.ts'

const DETAILS = "It is called before every request (PostgREST's db-pre-request), so every request fails until it can be called"
const HINT = "Create the function (taking no arguments) and grant execute on it to the API roles, or name another pre-request function (or none) for the project"

/** PostgreSQL's messages that mean the call `select schema.fn()` (or `select fn()`) found nothing to call, or may not call it. */
function sentencesOf(text: string): Map<string, string> {
  const parsed = parsePreRequest(text)
  const sentences = new Map<string, string>()
  if (parsed === undefined) return sentences
  const shown = parsed.schema === undefined ? parsed.name : `${parsed.schema}.${parsed.name}`
  sentences.set(`function ${shown}() does not exist`, '42883')
  sentences.set(`permission denied for function ${parsed.name}`, '42501')
  if (parsed.schema !== undefined) {
    sentences.set(`schema "${parsed.schema}" does not exist`, '3F000')
    sentences.set(`permission denied for schema ${parsed.schema}`, '42501')
  }
  return sentences
}

/** `response`, or, when it is PostgreSQL's refusal of the call of `preRequest` itself, the same refusal naming it. */
export function namingPreRequest(response: ServiceResponse, preRequest: string | null): ServiceResponse {
  if (preRequest === null || response.status < 400 || !response.headers['content-type']?.startsWith('application/json')) return response
  let body: { code?: unknown; message?: unknown; details?: unknown; hint?: unknown }
  try {
    body = JSON.parse(response.body) as typeof body
  } catch {
    return response
  }
  if (typeof body.message !== 'string' || sentencesOf(preRequest).get(body.message) !== body.code) return response
  const named = { code: body.code, details: DETAILS, hint: HINT, message: `The project's pre-request function ${preRequest} cannot be called: ${body.message}` }
  return { ...response, body: JSON.stringify(named) }
}
