// Shared request plumbing of the push HTTP API: body parsing, key checks and
// the mapping of PostgreSQL errors to catalogue errors.
import { classifyDatabaseError } from '../../../lib/db/database-errors.ts'
import { BaseplaneError } from '../../../lib/errors.ts'
import { readJson } from '../../../lib/http/body.ts'
import type { RequestIdentity } from '../../../lib/roles.ts'
import type { ServiceRequest } from '../../../lib/service.ts'
import { pushErrors } from '../errors.ts'

export function parseBody(request: ServiceRequest): unknown {
  return readJson(request.body, { empty: () => pushErrors.validation('A JSON body is required'), invalid: () => pushErrors.invalidJson() })
}

export function requireIdentity(request: ServiceRequest): RequestIdentity {
  if (!request.identity) throw pushErrors.apikeyRequired()
  return request.identity
}

/** Credentials endpoints: only with the service_role key itself (SPEC 5.7). */
export function requireServiceRole(request: ServiceRequest): RequestIdentity {
  const identity = requireIdentity(request)
  if (request.apikeyRole !== 'service_role' || identity.role !== 'service_role') throw pushErrors.serviceRoleRequired()
  return identity
}


interface PgError {
  code?: string
  message?: string
  hint?: string
  constraint?: string
  table?: string
}

/** Turns a database error into a catalogue error; anything unexpected is rethrown for the 500 path. */
export function mapDatabaseError(err: unknown, onRls: () => BaseplaneError): never {
  if (BaseplaneError.is(err)) throw err
  // An unreachable database or a timeout: the worker answers it (and logs the cause).
  if (classifyDatabaseError(err) !== undefined) throw err
  const e = err as PgError
  switch (e.code) {
    case '42501':
      throw onRls()
    case 'BPS01':
      throw pushErrors.sendAtNotOnPlan(e.message ?? 'send_at is in the future', e.hint)
    case 'BPS02':
      throw pushErrors.quotaExceeded(e.message ?? 'This project has reached its monthly quota of push deliveries.')
    case '23514':
    case '22P02':
    case '22007':
    case '22008':
    case '22003':
    case '23502':
      throw pushErrors.validation(`Invalid value: ${e.message ?? 'a check failed'}`)
    case '3F000':
    case '42P01':
    case '42883':
      throw pushErrors.pushNotInstalled()
  }
  throw err
}
