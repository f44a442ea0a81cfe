// The custom access token hook (GoTrue's internal/hooks, tokens/service.go):
// at every issue of an access token, refresh included, the project's function
// gets {metadata, user_id, claims, authentication_method} and answers
// {claims}, which replace the claims wholesale once they pass GoTrue's
// MinimumViableTokenSchema; or {error: {http_code, message}}, which refuses.
import crypto from 'node:crypto'
import { transaction, type Queryable } from '../db/pool.ts'
import { authErrors } from '../errors.ts'
import type { AuthRequest } from '../request.ts'
import { hookOutputError } from './output.ts'
import { runPgHook } from './pg-hook.ts'
import type { PgHook } from './settings.ts'

const NAME = 'custom_access_token'

/** GoTrue's MinimumViableTokenSchema: required claims, and the types of those it knows. */
const REQUIRED = ['aud', 'exp', 'iat', 'sub', 'email', 'phone', 'role', 'aal', 'session_id', 'is_anonymous'] as const
type Kind = 'string' | 'integer' | 'boolean' | 'object' | 'array' | 'audience'
const TYPES: Record<string, Kind> = {
  aud: 'audience',
  exp: 'integer',
  iat: 'integer',
  nbf: 'integer',
  jti: 'string',
  iss: 'string',
  sub: 'string',
  email: 'string',
  phone: 'string',
  role: 'string',
  aal: 'string',
  session_id: 'string',
  is_anonymous: 'boolean',
  app_metadata: 'object',
  user_metadata: 'object',
  amr: 'array',
}

function fits(value: unknown, kind: Kind): boolean {
  switch (kind) {
    case 'string':
      return typeof value === 'string'
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value)
    case 'boolean':
      return typeof value === 'boolean'
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value)
    case 'array':
      return Array.isArray(value)
    case 'audience':
      return typeof value === 'string' || Array.isArray(value)
  }
}

/** What is wrong with hook output claims, in the manner of GoTrue's schema errors (empty when they conform). */
export function claimsProblems(claims: Record<string, unknown>): string[] {
  const problems: string[] = []
  for (const name of REQUIRED) if (!(name in claims)) problems.push(`${name} is required`)
  for (const [name, kind] of Object.entries(TYPES)) {
    if (name in claims && !fits(claims[name], kind)) problems.push(`${name}: invalid type, expected ${kind === 'audience' ? 'string or array' : kind}`)
  }
  return problems
}

export interface AccessTokenHookInput {
  userId: string
  claims: Record<string, unknown>
  /** GoTrue's authentication_method: password, otp, oauth, totp, token_refresh, anonymous, email/signup... */
  method: string
  ip: string
}

/** The claims to sign: the hook's, validated. `client` is the issue's transaction. */
export async function customAccessTokenClaims(client: Queryable, hook: PgHook, input: AccessTokenHookInput): Promise<Record<string, unknown>> {
  const event = {
    metadata: { uuid: crypto.randomUUID(), time: new Date().toISOString(), name: NAME, ip_address: input.ip },
    user_id: input.userId,
    claims: input.claims,
    authentication_method: input.method,
  }
  const output = await runPgHook(client, hook, NAME, event)
  if (typeof output !== 'object' || output === null || Array.isArray(output)) throw authErrors.hookInvalidOutput(NAME, 'output is not a JSON object')
  const refusal = hookOutputError(NAME, output as Record<string, unknown>)
  if (refusal) throw refusal
  const claims = (output as Record<string, unknown>).claims
  if (claims === undefined || claims === null) throw authErrors.hookInvalidOutput(NAME, 'output claims field is missing')
  if (typeof claims !== 'object' || Array.isArray(claims)) throw authErrors.hookInvalidOutput(NAME, 'output claims do not conform to the expected schema: claims must be an object')
  const problems = claimsProblems(claims as Record<string, unknown>)
  if (problems.length > 0) throw authErrors.hookInvalidOutput(NAME, `output claims do not conform to the expected schema: ${problems.join('; ')}`)
  return claims as Record<string, unknown>
}

/**
 * Runs an issue (a new session, a second factor) in one transaction when the
 * project has a custom access token hook or a monthly active users cap, so
 * that a refused or failed hook, or a sign-in past the cap, leaves no session
 * behind (a refresh undoes its rotation instead: tokens.ts refreshSession).
 * `db` already in a transaction (a checked-out client) is used as it is;
 * without either, nothing changes.
 */
export function inIssueTransaction<T>(db: Queryable, req: AuthRequest, work: (db: Queryable) => Promise<T>): Promise<T> {
  const guarded = req.settings.hooks.customAccessToken !== undefined || req.raw.project.caps.monthly_active_users !== undefined
  if (!guarded || db !== req.pool) return work(db)
  return transaction(req.pool, work)
}
