// POST /factors/{id}/challenge and POST /factors/{id}/verify for WebAuthn
// factors (GoTrue >= 2.190's internal/api/mfa.go; shared/reference/gotrue-round3.md
// section 3). factors.ts routes here by the factor's type. The relying party
// is the project's settings; the rpId and rpOrigins auth-js sends are
// ignored. Unlike GoTrue, a refused attestation or assertion is 422
// mfa_verification_failed, not a bare 500.
import type { RegistrationResponseJSON, AuthenticationResponseJSON } from '@simplewebauthn/server'
import type { ServiceResponse } from '../../lib/service.ts'
import { json } from '../../lib/service.ts'
import type { CurrentUser } from './current-user.ts'
import { deleteChallenge, deleteUnverifiedFactors, type FactorRow } from './db/factors.ts'
import { transaction } from './db/pool.ts'
import { acceptAssertion, insertWebAuthnChallenge, lockWebAuthnChallenge, saveCredential, verifiedCredentials } from './db/webauthn.ts'
import { AuthError, authErrors } from './errors.ts'
import { audit } from './links.ts'
import { isUuid, type AuthRequest } from './request.ts'
import { upgradeToAal2, type Session } from './tokens.ts'
import { CeremonyRefused, creationOptions, requestOptions, verifyCreation, verifyRequest, wellFormedResponse, type CeremonyOptions } from './webauthn.ts'

/** GoTrue's AMR method for a WebAuthn factor (models.MFAWebAuthn). */
export const WEBAUTHN_AMR = 'mfa/webauthn'

export async function challengeWebAuthnFactor(req: AuthRequest, user: CurrentUser['user'], factor: FactorRow): Promise<ServiceResponse> {
  if (!req.settings.webauthn.verifyEnabled) throw authErrors.mfaWebAuthnVerifyDisabled()
  const credentials = (await verifiedCredentials(req.pool, user.id)).map((c) => c.credential)
  const name = user.email || user.phone || user.id
  const options: CeremonyOptions =
    factor.status === 'verified'
      ? await requestOptions(req.settings.webauthn, credentials)
      : await creationOptions(req.settings.webauthn, { id: user.id, name, displayName: name }, credentials)
  const challenge = await insertWebAuthnChallenge(req.pool, factor.id, req.ip, { type: options.type, challenge: options.publicKey.challenge })
  await audit(req.pool, req, user.id, 'challenge_created', { factor_id: factor.id, factor_status: factor.status })
  return json(200, {
    id: challenge.id,
    type: 'webauthn',
    expires_at: challenge.expires_at,
    webauthn: { type: options.type, credential_options: { publicKey: options.publicKey } },
  })
}

/** GoTrue's checks of the body, in its order and words (400 validation_failed). */
function parseVerifyBody(body: Record<string, unknown>): { challengeId: string | null; type: 'create' | 'request'; response: Record<string, unknown> } {
  const rawChallenge = body.challenge_id
  if (rawChallenge !== undefined && rawChallenge !== null && !isUuid(rawChallenge)) throw authErrors.badJson('challenge_id must be a UUID')
  const webauthn = body.webauthn
  if (typeof webauthn !== 'object' || webauthn === null || Array.isArray(webauthn)) throw authErrors.validation('WebAuthn config required')
  const { type, credential_response: response } = webauthn as Record<string, unknown>
  if (type !== 'create' && type !== 'request') throw authErrors.validation('WebAuthn type must be create or request')
  if (response === undefined || response === null) throw authErrors.validation('credential_response required')
  if (typeof response !== 'object' || Array.isArray(response) || !wellFormedResponse(type, response as Record<string, unknown>)) {
    throw authErrors.validation('Invalid credential_response')
  }
  return { challengeId: (rawChallenge as string | undefined | null) ?? null, type, response: response as Record<string, unknown> }
}

type Outcome = { ok: true; session: Session } | { ok: false; error: AuthError }

export async function verifyWebAuthnFactor(req: AuthRequest, user: CurrentUser['user'], sessionId: string, factor: FactorRow): Promise<ServiceResponse> {
  if (!req.settings.webauthn.verifyEnabled) throw authErrors.mfaWebAuthnVerifyDisabled()
  const body = parseVerifyBody(req.body)
  const rp = req.settings.webauthn
  const outcome = await transaction(req.pool, async (client): Promise<Outcome> => {
    const check = await lockWebAuthnChallenge(client, user.id, factor.id, body.challengeId, req.ip)
    if (check === undefined) return { ok: false, error: authErrors.factorNotFound() }
    if (check.challenge_id === null || check.state === null) return { ok: false, error: authErrors.factorNotFound('MFA factor with the provided challenge ID not found', 422) }
    // GoTrue: a challenge is used once, from the address that asked for it.
    if (check.challenge_verified || !check.same_ip) return { ok: false, error: authErrors.mfaIpMismatch() }
    if (check.expired) {
      await deleteChallenge(client, check.challenge_id)
      return { ok: false, error: authErrors.mfaChallengeExpired(check.challenge_id) }
    }
    // The challenge says which ceremony it began: options to create a credential, or to use one.
    if (body.type !== check.state.type) {
      return { ok: false, error: authErrors.validation(`WebAuthn type must be ${check.state.type} for this challenge (the factor is ${check.status})`) }
    }
    let verifiedWith = factor.id
    try {
      if (check.state.type === 'create') {
        const { credential, aaguid } = await verifyCreation(rp, check.state, body.response as unknown as RegistrationResponseJSON)
        if (!(await saveCredential(client, factor.id, check.challenge_id, credential, aaguid))) {
          return { ok: false, error: authErrors.mfaWebAuthnVerificationFailed('the factor is already verified; ask for a new challenge') }
        }
      } else {
        // Any of the user's verified credentials may answer (they were all allowed); the one that did is the session's factor.
        const owned = (await verifiedCredentials(client, user.id)).find((c) => c.credential.id === body.response.rawId)
        if (owned === undefined) return { ok: false, error: authErrors.mfaWebAuthnVerificationFailed('the credential is not one of this user\'s WebAuthn factors') }
        const signCount = await verifyRequest(rp, check.state, owned.credential, body.response as unknown as AuthenticationResponseJSON)
        await acceptAssertion(client, owned.factor_id, check.challenge_id, signCount)
        verifiedWith = owned.factor_id
      }
    } catch (error) {
      if (error instanceof CeremonyRefused) return { ok: false, error: authErrors.mfaWebAuthnVerificationFailed(error.message) }
      throw error
    }
    const session = await upgradeToAal2(client, req, user.id, sessionId, verifiedWith, WEBAUTHN_AMR)
    if (session === undefined) throw authErrors.sessionNotFound()
    await deleteUnverifiedFactors(client, user.id, 'webauthn')
    return { ok: true, session }
  })
  if (!outcome.ok) throw outcome.error
  return json(200, outcome.session)
}
