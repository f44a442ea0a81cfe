// What Baseplane's Auth does not offer (SPEC: email and password, and Google
// as the one external provider), answered as GoTrue answers with each feature
// switched off rather than with 404 not_found, so supabase-js apps get the
// error code they can act on. Codes and statuses: reference/auth-clients.md §7.
// The refusals that sit inside an offered endpoint (phone sign-up, phone
// OTP, phone and WebAuthn factors, web3 and phone grants) are thrown by that
// endpoint; the routes here exist only to refuse. Anonymous sign-ins are a
// per-project switch (anonymous.ts).
import type { ServiceResponse } from '../../lib/service.ts'
import { authErrors } from './errors.ts'
import { factorCaller } from './factors.ts'
import { requireAdmin, type AuthRequest } from './request.ts'

/** What GET /settings reports as off (GoTrue's fields; web3, linking and MFA have none there). */
export const NOT_OFFERED = {
  phone: false,
  phoneAutoconfirm: false,
  smsProvider: '',
  saml: false,
  passkeys: false,
} as const

/** POST /sso, GET /sso/saml/metadata, POST /sso/saml/acs: GoTrue's requireSAMLEnabled. */
export async function sso(): Promise<ServiceResponse> {
  throw authErrors.samlDisabled()
}

/** /passkeys/*: passkeys as a first factor (GoTrue's requirePasskeyEnabled). */
export async function passkeys(): Promise<ServiceResponse> {
  throw authErrors.passkeysDisabled()
}

// /factors/recovery-codes/*: MFA recovery codes (auth-js 2.119's
// mfa.recoveryCodes), answered as GoTrue's recovery_codes.go answers with its
// MFA.RecoveryCodes.EnrollEnabled and VerifyEnabled off. Like every
// /factors route, behind requireAuthentication and requireNotAnonymous. No
// user has codes, so the status and the removal find none.
const NOT_ENROLLED = 'The user has not enrolled recovery codes'

/** GET /factors/recovery-codes: the status, at any assurance level. */
export async function recoveryCodesStatus(req: AuthRequest): Promise<ServiceResponse> {
  await factorCaller(req)
  throw authErrors.factorNotFound(NOT_ENROLLED)
}

/** POST /factors/recovery-codes and /factors/recovery-codes/regenerate: GoTrue checks the switch before the body and the aal. */
export async function recoveryCodesEnroll(req: AuthRequest): Promise<ServiceResponse> {
  await factorCaller(req)
  throw authErrors.mfaRecoveryCodesEnrollDisabled()
}

/** POST /factors/recovery-codes/verify */
export async function recoveryCodesVerify(req: AuthRequest): Promise<ServiceResponse> {
  await factorCaller(req)
  throw authErrors.mfaRecoveryCodesVerifyDisabled()
}

/** DELETE /factors/recovery-codes: aal2 first (403), then the codes to remove. */
export async function recoveryCodesDelete(req: AuthRequest): Promise<ServiceResponse> {
  const { aal } = await factorCaller(req)
  if (aal !== 'aal2') throw authErrors.insufficientAal('AAL2 required to delete recovery codes', 403)
  throw authErrors.factorNotFound(NOT_ENROLLED)
}

/** /oauth/authorizations/*, /user/oauth/grants and /admin/oauth/clients/*: Auth as an OAuth server. */
export async function oauthServer(req: AuthRequest): Promise<ServiceResponse> {
  // The client registry sits in GoTrue's admin group, whose requireAdminCredentials runs before the switch is read.
  if (req.raw.path.startsWith('/admin/')) requireAdmin(req)
  throw authErrors.oauthServerDisabled()
}

/** GoTrue's validatePhone: `+` and spaces dropped, then E.164 digits. */
function isE164(phone: string): boolean {
  return /^[1-9]\d{1,14}$/.test(phone.replace(/^\+/, '').replace(/ /g, ''))
}

/**
 * POST /verify with type sms or phone_change. GoTrue checks the number's
 * format, then looks for the user with that phone; with phones not offered
 * there is none, so any code is "expired or invalid" (403).
 */
export function phoneVerifyRefusal(phone: string | undefined, email: string | undefined) {
  if (phone && !email && !isE164(phone)) return authErrors.invalidPhone()
  return authErrors.otpExpired()
}
