// POST /verify (code or token hash) and GET /verify (the emailed link).
// Types: signup, invite, magiclink, recovery, email_change (either
// address's code of a secure email change), email (a confirmation or a
// recovery code). A wrong code counts against the user's pending codes of
// that type; after five the code is spent (SPEC 8.2).
import type pg from 'pg'
import { BaseplaneError } from '../../lib/errors.ts'
import type { ServiceResponse } from '../../lib/service.ts'
import { json } from '../../lib/service.ts'
import { tokenHash } from './codes.ts'
import { phoneVerifyRefusal } from './disabled.ts'
import { codeByHash, codesOfUser, countWrongGuess, deleteCode, deleteCodesOfType, deleteCodesOfUser, hasCode, type StoredCode, type TokenType } from './db/one-time-tokens.ts'
import { issueAuthCode } from './db/flow-state.ts'
import { transaction } from './db/pool.ts'
import { confirmEmail, emailChangeState, emailTakenByOther, markEmailChangeHalfConfirmed, setEmail, userById, type UserRow } from './db/users.ts'
import { normalizeEmail } from './email.ts'
import { AuthError, authErrors } from './errors.ts'
import { audit } from './links.ts'
import { resolveRedirect } from './redirects.ts'
import { str, type AuthRequest } from './request.ts'
import { issueSession, sessionFragmentValues, type Session } from './tokens.ts'

const EMAIL_TYPES: Record<string, TokenType[]> = {
  signup: ['confirmation_token'],
  invite: ['confirmation_token'],
  magiclink: ['recovery_token'],
  recovery: ['recovery_token'],
  // Either address's link (secure email change mails both, each with type email_change).
  email_change: ['email_change_token_new', 'email_change_token_current'],
  email: ['confirmation_token', 'recovery_token'],
}

/** `pending`: the first of the two confirmations of a secure email change; no session is issued. */
type Outcome = { ok: true; user: UserRow; code: StoredCode; pending: boolean } | { ok: false; error: AuthError }

/** GoTrue's answer to the first of the two confirmations. */
const EMAIL_CHANGE_PENDING = 'Confirmation link accepted. Please proceed to confirm link sent to the other email'

function checkType(type: string | undefined | null): TokenType[] {
  if (!type) throw authErrors.validation('Verify requires a verification type')
  if (type === 'sms' || type === 'phone_change') throw authErrors.phoneDisabled()
  const types = EMAIL_TYPES[type]
  if (!types) throw authErrors.validation('Unsupported verification type')
  return types
}

/** Applies a matched code: confirms, signs in or changes the address. */
async function consume(client: pg.ClientBase, req: AuthRequest, code: StoredCode): Promise<{ user: UserRow; pending: boolean }> {
  const user = await userById(client, code.user_id)
  if (user === undefined) throw authErrors.otpExpired()
  if (user.banned_until && user.banned_until > new Date()) throw authErrors.userBanned403()
  if (code.token_type === 'confirmation_token') {
    await confirmEmail(client, user.id)
    await deleteCodesOfUser(client, user.id)
    await audit(client, req, user.id, 'user_signedup', { provider: 'email' })
  } else if (code.token_type === 'recovery_token') {
    if (!user.email_confirmed_at) await confirmEmail(client, user.id)
    await deleteCode(client, code.id)
    await audit(client, req, user.id, 'user_recovery_requested')
  } else if (await confirmEmailChange(client, req, user, code)) {
    return { user, pending: true }
  }
  return { user: (await userById(client, user.id))!, pending: false }
}

/**
 * One address's confirmation of an email change. The change applies when
 * the new address has confirmed and, if a code went to the current address
 * (secure email change), that one too, in either order. Which addresses are
 * still to confirm is read from the codes themselves (a code is removed only
 * by its use or by a new request), so turning the setting off or on between
 * the request and the links cannot let one address alone make the change.
 * True: the first of two confirmations, recorded, nothing changed yet.
 */
async function confirmEmailChange(client: pg.ClientBase, req: AuthRequest, user: UserRow, code: StoredCode): Promise<boolean> {
  const state = await emailChangeState(client, user.id)
  if (state.email_change === null) throw authErrors.otpExpired()
  const isNew = code.token_type === 'email_change_token_new'
  const otherPending = await hasCode(client, user.id, isNew ? 'email_change_token_current' : 'email_change_token_new')
  // The current address alone: the new one has not confirmed since the change was asked (GoTrue's confirm status 1 records that it has).
  const newStillToConfirm = !isNew && !otherPending && state.email_change_confirm_status !== 1
  if (otherPending || newStillToConfirm) {
    await deleteCode(client, code.id)
    await markEmailChangeHalfConfirmed(client, user.id)
    await audit(client, req, user.id, 'user_modified', { email_change_confirmed: isNew ? 'new' : 'current' })
    return true
  }
  if (await emailTakenByOther(client, state.email_change, user.id)) throw authErrors.emailExists()
  await setEmail(client, user.id, state.email_change)
  await deleteCodesOfType(client, user.id, ['email_change_token_new', 'email_change_token_current'])
  await audit(client, req, user.id, 'user_modified', { email_change: true })
  return false
}

async function byCode(client: pg.ClientBase, req: AuthRequest, email: string, code: string, types: TokenType[]): Promise<Outcome> {
  const s = req.settings
  const { rows } = await client.query<{ id: string }>('select id from auth.users where email = $1 or email_change = $1', [email])
  // A code is checked against the address it was mailed to (an email change's two codes went to two addresses).
  const candidates = (await Promise.all(rows.map((row) => codesOfUser(client, row.id, types, s.otpExpirySeconds, s.otpMaxAttempts)))).flat().filter((c) => c.relates_to === email)
  const match = candidates.find((c) => c.token_hash === tokenHash(c.relates_to, code))
  if (match === undefined) {
    await countWrongGuess(client, candidates.filter((c) => !c.expired && !c.spent).map((c) => c.id))
    return { ok: false, error: authErrors.otpExpired() }
  }
  if (match.expired || match.spent) return { ok: false, error: authErrors.otpExpired() }
  return { ok: true, code: match, ...(await consume(client, req, match)) }
}

async function byHash(client: pg.ClientBase, req: AuthRequest, hash: string, types: TokenType[]): Promise<Outcome> {
  const s = req.settings
  // PostgreSQL text cannot hold a NUL: such a hash matches nothing, so it is answered like any unknown one.
  if (hash.includes('\0')) return { ok: false, error: authErrors.linkExpired() }
  const code = await codeByHash(client, hash.startsWith('pkce_') ? hash.slice(5) : hash, s.otpExpirySeconds, s.otpMaxAttempts)
  if (code === undefined || !types.includes(code.token_type) || code.expired || code.spent) return { ok: false, error: authErrors.linkExpired() }
  return { ok: true, code, ...(await consume(client, req, code)) }
}

export async function verifyPost(req: AuthRequest): Promise<ServiceResponse> {
  const body = req.body
  const type = str(body, 'type')
  const token = str(body, 'token')
  const hash = str(body, 'token_hash')
  const email = str(body, 'email')
  const phone = str(body, 'phone')
  if (type === 'sms' || type === 'phone_change') throw phoneVerifyRefusal(phone, email)
  const types = checkType(type)
  if (!token && !hash) throw authErrors.validation('Verify requires either a token or a token hash')
  if (hash && (email || phone)) throw authErrors.validation('Only the token_hash and type should be provided')
  let address: string | undefined
  if (!hash) {
    if (phone && !email) throw authErrors.phoneDisabled()
    if (!email || phone) throw authErrors.validation('Only an email address or phone number should be provided on verify')
    address = normalizeEmail(email, 422)
  }
  const outcome = await transaction(req.pool, async (client): Promise<{ ok: false; error: AuthError } | { ok: true; session: Session | undefined }> => {
    const result = hash ? await byHash(client, req, hash, types) : await byCode(client, req, address!, token!, types)
    if (!result.ok) return result
    if (result.pending) return { ok: true, session: undefined }
    return { ok: true, session: await issueSession(client, req, result.user, { method: 'otp' }) }
  })
  if (!outcome.ok) throw outcome.error
  // GoTrue writes this code as a string.
  return json(200, outcome.session ?? { msg: EMAIL_CHANGE_PENDING, code: '200' })
}

function redirect(location: string): ServiceResponse {
  return { status: 303, headers: { location, 'content-type': 'text/plain' }, body: '' }
}

function sorted(values: Record<string, string>): string {
  const params = new URLSearchParams()
  for (const key of Object.keys(values).sort()) params.set(key, values[key]!)
  return params.toString()
}

function withQuery(url: string, values: Record<string, string>): string {
  const parsed = new URL(url)
  for (const [key, value] of Object.entries(values)) parsed.searchParams.set(key, value)
  parsed.hash = ''
  return parsed.toString()
}

function withFragment(url: string, values: Record<string, string>): string {
  return `${url.split('#')[0]}#${sorted(values)}`
}

const OAUTH_ERROR: Record<number, string> = { 400: 'invalid_request', 401: 'unauthorized_client', 403: 'access_denied', 500: 'server_error', 503: 'temporarily_unavailable' }

/** An error redirect as GoTrue writes it: fragment, and query too for PKCE flows. */
export function errorRedirect(to: string, error: BaseplaneError, pkce: boolean): ServiceResponse {
  const values = { error: OAUTH_ERROR[error.status] ?? 'server_error', error_code: error.code, error_description: error.message }
  const base = pkce ? withQuery(to, values) : to
  return { ...redirect(withFragment(base, { ...values, sb: '' })), throttleFailure: true }
}

export async function verifyGet(req: AuthRequest): Promise<ServiceResponse> {
  const type = req.query.get('type')
  const hash = req.query.get('token') ?? ''
  const to = resolveRedirect(req.settings, req.query.get('redirect_to'))
  const pkce = hash.startsWith('pkce_')
  try {
    const types = checkType(type)
    if (hash === '') throw authErrors.validation('Verify requires either a token or a token hash')
    const outcome = await transaction(req.pool, async (client) => {
      const result = await byHash(client, req, hash, types)
      if (!result.ok) return result
      if (result.pending) {
        const message = { message: EMAIL_CHANGE_PENDING }
        return { ok: true as const, location: withFragment(pkce ? withQuery(to, message) : to, { ...message, sb: '' }) }
      }
      if (pkce && result.code.flow_state_id) {
        const authCode = await issueAuthCode(client, result.code.flow_state_id, result.user.id)
        if (authCode === undefined) return { ok: false as const, error: authErrors.linkExpired() }
        return { ok: true as const, location: withQuery(to, { code: authCode }) }
      }
      const session = await issueSession(client, req, result.user, { method: 'otp' })
      const values = sessionFragmentValues(session, { type: type! })
      return { ok: true as const, location: withFragment(to, values) }
    })
    if (!outcome.ok) throw outcome.error
    return redirect(outcome.location)
  } catch (error) {
    if (!BaseplaneError.is(error)) throw error
    return errorRedirect(to, error, pkce)
  }
}
