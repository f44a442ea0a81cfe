// A hook's refusal: `{error: {http_code, message}}` with a non-empty message
// (GoTrue's HookError), answered with status http_code. GoTrue's default
// status is a bare 500; here 502, as a hook's failure (DECISIONS, round 3).
import { authErrors, type AuthError } from '../errors.ts'

export function hookOutputError(name: string, output: Record<string, unknown>): AuthError | undefined {
  const error = output.error
  if (error === undefined || error === null) return undefined
  if (typeof error !== 'object' || Array.isArray(error)) return authErrors.hookInvalidOutput(name, 'output error field must be an object {http_code, message}')
  const { http_code: code, message } = error as Record<string, unknown>
  if (typeof message !== 'string' || message === '') return undefined
  if (code === undefined || code === null || code === 0) return authErrors.hookError(name, 502, message)
  if (typeof code !== 'number' || !Number.isInteger(code) || code < 400 || code > 599) {
    return authErrors.hookInvalidOutput(name, `output error http_code must be a status from 400 to 599, got ${JSON.stringify(code)}`)
  }
  return authErrors.hookError(name, code, message)
}
