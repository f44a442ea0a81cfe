// POST /factors, POST /factors/{id}/challenge, POST /factors/{id}/verify,
// DELETE /factors/{id}: TOTP second factors and the aal2 session (GoTrue's
// internal/api/mfa.go; SPEC 3, 5.5, 7, 8.4). Unlike GoTrue, a code is
// accepted once: the factor keeps its last accepted time step.
import type { ServiceResponse } from '../../lib/service.ts'
import { json } from '../../lib/service.ts'
import { currentUser, type CurrentUser } from './current-user.ts'
import {
  acceptTimeStep,
  deleteChallenge,
  deleteFactor as deleteFactorRows,
  deleteUnverifiedFactors,
  insertChallenge,
  insertTotpFactor,
  lockFactorForVerify,
  lockUserFactors,
  MAX_ENROLLED_FACTORS,
  MAX_VERIFIED_FACTORS,
  ownedFactor,
  type FactorRow,
} from './db/factors.ts'
import { transaction } from './db/pool.ts'
import { AuthError, authErrors } from './errors.ts'
import { audit } from './links.ts'
import { isUuid, str, uuidParam, type AuthRequest } from './request.ts'
import { newTotpSecret, qrSvg, totpTimeStep, totpUri } from './totp.ts'
import { upgradeToAal2, type Session } from './tokens.ts'
import { insertWebAuthnFactor } from './db/webauthn.ts'
import { challengeWebAuthnFactor, verifyWebAuthnFactor } from './webauthn-factors.ts'

/** requireAuthentication + requireNotAnonymous (every /factors route), and a session to act on. */
export async function factorCaller(req: AuthRequest): Promise<CurrentUser & { sessionId: string }> {
  const current = await currentUser(req)
  if (current.user.is_anonymous) throw authErrors.anonymousNotAllowed()
  // GoTrue answers 500 for a token without a session; a token without session_id has none to raise.
  if (current.caller.sessionId === null) throw authErrors.sessionNotFound()
  return { ...current, sessionId: current.caller.sessionId }
}

/** GoTrue's loadFactor: the id must be a UUID, and the caller's own factor. */
async function loadFactor(req: AuthRequest, userId: string, id: string): Promise<FactorRow> {
  const factor = await ownedFactor(req.pool, userId, uuidParam(id, 'factor_id'))
  if (factor === undefined) throw authErrors.factorNotFound()
  return factor
}

export async function enrollFactor(req: AuthRequest): Promise<ServiceResponse> {
  const { user, aal } = await factorCaller(req)
  const factorType = str(req.body, 'factor_type')
  if (factorType === 'phone') throw authErrors.mfaPhoneEnrollDisabled()
  if (factorType === 'webauthn' && !req.settings.webauthn.enrollEnabled) throw authErrors.mfaWebAuthnEnrollDisabled()
  if (factorType !== 'totp' && factorType !== 'webauthn') throw authErrors.validation('factor_type needs to be totp, phone, or webauthn')
  const friendlyName = str(req.body, 'friendly_name') ?? ''
  // GoTrue labels factors with its configured issuer: here the project's name, unless the app names one.
  const issuer = str(req.body, 'issuer') || req.raw.project.projectName
  const secret = newTotpSecret()
  const uri = totpUri(issuer, user.email ?? '', secret)
  const factor = await transaction(req.pool, async (client) => {
    const factors = await lockUserFactors(client, user.id)
    // GoTrue compares names in Go, so two empty names conflict too.
    if (factors.some((f) => (f.friendly_name ?? '') === friendlyName)) throw authErrors.factorNameConflict(friendlyName)
    const verified = factors.filter((f) => f.status === 'verified').length
    if (factors.length >= MAX_ENROLLED_FACTORS || verified >= MAX_VERIFIED_FACTORS) throw authErrors.tooManyFactors()
    if (verified > 0 && aal !== 'aal2') throw authErrors.insufficientAal('AAL2 required to enroll a new factor', 403)
    const inserted = factorType === 'webauthn' ? await insertWebAuthnFactor(client, user.id, friendlyName) : await insertTotpFactor(client, user.id, friendlyName, secret)
    await audit(client, req, user.id, 'factor_in_progress', { factor_id: inserted.id })
    return inserted
  })
  // A WebAuthn factor gets its credential options from its first challenge (webauthn-factors.ts).
  if (factorType === 'webauthn') return json(200, { id: factor.id, type: 'webauthn', friendly_name: friendlyName })
  return json(200, { id: factor.id, type: 'totp', friendly_name: friendlyName, totp: { qr_code: await qrSvg(uri), secret, uri } })
}

export async function challengeFactor(req: AuthRequest, id: string): Promise<ServiceResponse> {
  const { user } = await factorCaller(req)
  const factor = await loadFactor(req, user.id, id)
  if (factor.factor_type === 'webauthn') return challengeWebAuthnFactor(req, user, factor)
  const challenge = await insertChallenge(req.pool, factor.id, req.ip)
  await audit(req.pool, req, user.id, 'challenge_created', { factor_id: factor.id, factor_status: factor.status })
  return json(200, { id: challenge.id, type: factor.factor_type, expires_at: challenge.expires_at })
}

type Outcome = { ok: true; session: Session } | { ok: false; error: AuthError }

export async function verifyFactor(req: AuthRequest, id: string): Promise<ServiceResponse> {
  const { user, sessionId } = await factorCaller(req)
  const factor = await loadFactor(req, user.id, id)
  if (factor.factor_type === 'webauthn') return verifyWebAuthnFactor(req, user, sessionId, factor)
  const rawChallenge = req.body.challenge_id
  if (rawChallenge !== undefined && rawChallenge !== null && !isUuid(rawChallenge)) {
    throw authErrors.badJson('challenge_id must be a UUID')
  }
  const challengeId = (rawChallenge as string | undefined | null) ?? null
  const code = str(req.body, 'code') ?? ''
  if (code === '') throw authErrors.validation('Code needs to be non-empty')
  const outcome = await transaction(req.pool, async (client): Promise<Outcome> => {
    const check = await lockFactorForVerify(client, user.id, factor.id, challengeId, req.ip)
    if (check === undefined) return { ok: false, error: authErrors.factorNotFound() }
    if (check.challenge_id === null) return { ok: false, error: authErrors.factorNotFound('MFA factor with the provided challenge ID not found', 422) }
    // GoTrue: a challenge is used once, from the address that asked for it.
    if (check.challenge_verified || !check.same_ip) return { ok: false, error: authErrors.mfaIpMismatch() }
    if (check.expired) {
      await deleteChallenge(client, check.challenge_id)
      return { ok: false, error: authErrors.mfaChallengeExpired(check.challenge_id) }
    }
    const step = totpTimeStep(check.secret, code)
    if (step === undefined) return { ok: false, error: authErrors.mfaVerificationFailed() }
    // The factor row is locked: of two verifications with one code, the second sees the first's step.
    if (!(await acceptTimeStep(client, factor.id, check.challenge_id, step))) return { ok: false, error: authErrors.mfaVerificationRejected() }
    const session = await upgradeToAal2(client, req, user.id, sessionId, factor.id, 'totp')
    if (session === undefined) throw authErrors.sessionNotFound()
    await deleteUnverifiedFactors(client, user.id, check.factor_type)
    return { ok: true, session }
  })
  if (!outcome.ok) throw outcome.error
  return json(200, outcome.session)
}

export async function deleteFactor(req: AuthRequest, id: string): Promise<ServiceResponse> {
  const { user, aal } = await factorCaller(req)
  const factor = await loadFactor(req, user.id, id)
  if (factor.status === 'verified' && aal !== 'aal2') throw authErrors.insufficientAal('AAL2 required to unenroll verified factor', 422)
  await transaction(req.pool, async (client) => {
    await deleteFactorRows(client, factor.id)
    await audit(client, req, user.id, 'factor_unenrolled', { factor_id: factor.id, factor_status: factor.status })
  })
  return json(200, { id: factor.id })
}
