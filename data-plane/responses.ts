// Error bodies the data plane writes itself (before a request reaches a
// worker), in the shape of the service the request was for.
import { BaseplaneError } from '../lib/errors.ts'
import type { Concern } from '../lib/service.ts'

export interface OutgoingResponse {
  status: number
  headers: Record<string, string>
  body: string
}

/**
 * Auth answers as GoTrue does: `{code, message}` when the client sends
 * X-Supabase-Api-Version (echoed back), `{code: <status>, error_code, msg}`
 * otherwise; both carry x-sb-error-code. Other services get `{code, message, hint?}`.
 */
export function errorResponse(error: BaseplaneError, concern: Concern | undefined, headers: Record<string, string>): OutgoingResponse {
  const responseHeaders: Record<string, string> = { 'content-type': 'application/json', 'x-sb-error-code': error.code }
  if (concern === 'auth') {
    if (error.code === 'bad_jwt') {
      // GoTrue answers a token it cannot verify with 403 and this sentence.
      const reason = error.message.replace(/^Invalid JWT: /, '')
      error = new BaseplaneError('bad_jwt', `invalid JWT: unable to parse or verify signature, ${reason}`, 403)
    }
    const apiVersion = headers['x-supabase-api-version']
    if (apiVersion) {
      responseHeaders['x-supabase-api-version'] = apiVersion
      return { status: error.status, headers: responseHeaders, body: JSON.stringify({ code: error.code, message: error.message }) }
    }
    return { status: error.status, headers: responseHeaders, body: JSON.stringify({ code: error.status, error_code: error.code, msg: error.message }) }
  }
  const body: Record<string, unknown> = { code: error.code, message: error.message }
  if (error.hint) body.hint = error.hint
  return { status: error.status, headers: responseHeaders, body: JSON.stringify(body) }
}
