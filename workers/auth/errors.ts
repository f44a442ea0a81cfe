// Auth's error catalogue: GoTrue's wire codes (internal/api/apierrors), each
// with its status and message. Handlers throw only these. An AuthError is a
// BaseplaneError, so it crosses the worker boundary as data like every other.
import { RETRY_AFTER_SECONDS } from '../../lib/db/database-errors.ts'
import { BaseplaneError } from '../../lib/errors.ts'
import { gotrueErrorResponse } from '../../lib/http/errors.ts'
import type { ServiceResponse } from '../../lib/service.ts'

export class AuthError extends BaseplaneError {
  /** Extra body fields GoTrue adds for some codes (weak_password.reasons). */
  readonly extra: Record<string, unknown> | undefined

  constructor(code: string, message: string, status: number, extra?: Record<string, unknown>, retryAfter?: number) {
    super(code, message, status, undefined, retryAfter)
    this.name = 'AuthError'
    this.extra = extra
  }
}

/**
 * GoTrue's OAuthError (apierrors.NewOAuthError): HTTP 400 with
 * `{"error", "error_description"}` and no error code, in either API version;
 * auth-js shows error_description as the message. `code` holds `error`.
 */
export class OAuthError extends AuthError {
  constructor(error: string, description: string) {
    super(error, description, 400)
    this.name = 'OAuthError'
  }
}

const e = (status: number, code: string) => (message: string) => new AuthError(code, message, status)

export const authErrors = {
  validation: e(400, 'validation_failed'),
  validation404: e(404, 'validation_failed'),
  validation422: e(422, 'validation_failed'),
  badJson: (detail: string) => new AuthError('bad_json', `Could not parse request body as JSON: ${detail}`, 400),
  notFound: () => new AuthError('not_found', 'Not found', 404),
  noAuthorization: () => new AuthError('no_authorization', 'This endpoint requires a valid Bearer token', 401),
  missingSub: () => new AuthError('bad_jwt', 'invalid claim: missing sub claim', 403),
  badSub: () => new AuthError('bad_jwt', 'invalid claim: sub claim must be a UUID', 400),
  userFromSubMissing: () => new AuthError('user_not_found', 'User from sub claim in JWT does not exist', 403),
  sessionNotFound: () => new AuthError('session_not_found', 'Session from session_id claim in JWT does not exist', 403),
  userBanned403: () => new AuthError('user_banned', 'User is banned', 403),
  userBanned: () => new AuthError('user_banned', 'User is banned', 400),
  notAdmin: () => new AuthError('not_admin', 'User not allowed', 403),
  anonymousNotAllowed: () => new AuthError('no_authorization', 'Anonymous user not allowed to perform these actions', 403),

  signupDisabled: () => new AuthError('signup_disabled', 'Signups not allowed for this instance', 422),
  userAlreadyExists: () => new AuthError('user_already_exists', 'User already registered', 422),
  emailExists: () => new AuthError('email_exists', 'A user with this email address has already been registered', 422).concerning('email'),
  weakPassword: (message: string, reasons: string[]) =>
    new AuthError('weak_password', message, 422, { weak_password: { message, reasons } }).concerning('password'),
  samePassword: () => new AuthError('same_password', 'New password should be different from the old password.', 422),
  anonymousDisabled: () => new AuthError('anonymous_provider_disabled', 'Anonymous sign-ins are disabled', 422),
  /** GoTrue's limitHandler, here for GOTRUE_RATE_LIMIT_ANONYMOUS_USERS. */
  overRequestRateLimit: () => new AuthError('over_request_rate_limit', 'Request rate limit reached', 429),
  anonymousPasswordWithoutEmail: () =>
    new AuthError('validation_failed', 'Updating password of an anonymous user without an email or phone is not allowed', 422),
  phoneDisabled: (message = 'Unsupported phone provider') => new AuthError('phone_provider_disabled', message, 400),
  emailProviderDisabled: (message: string, status = 400) => new AuthError('email_provider_disabled', message, status),
  otpDisabled: () => new AuthError('otp_disabled', 'Signups not allowed for otp', 422),

  invalidCredentials: (message = 'Invalid login credentials') => new AuthError('invalid_credentials', message, 400),
  emailNotConfirmed: () => new AuthError('email_not_confirmed', 'Email not confirmed', 400),

  refreshTokenInvalid: () => new AuthError('validation_failed', 'Refresh token is not valid', 400),
  refreshTokenNotFound: () => new AuthError('refresh_token_not_found', 'Invalid Refresh Token: Refresh Token Not Found', 400),
  refreshTokenAlreadyUsed: () => new AuthError('refresh_token_already_used', 'Invalid Refresh Token: Already Used', 400),
  refreshSessionNotFound: () => new AuthError('session_not_found', 'Invalid Refresh Token: No Valid Session Found', 400),
  refreshSessionExpired: (why = '') => new AuthError('session_expired', `Invalid Refresh Token: Session Expired${why}`, 400),

  flowStateNotFound: () => new AuthError('flow_state_not_found', 'invalid flow state, no valid flow state found', 404),
  flowStateExpired: () => new AuthError('flow_state_expired', 'invalid flow state, flow state has expired', 422),
  badCodeVerifier: () => new AuthError('bad_code_verifier', 'code challenge does not match previously saved code verifier', 400),

  otpExpired: () => new AuthError('otp_expired', 'Token has expired or is invalid', 403),
  linkExpired: () => new AuthError('otp_expired', 'Email link is invalid or has expired', 403),

  overEmailRateLimit: () => new AuthError('over_email_send_rate_limit', 'Email rate limit exceeded', 429),
  /** Past a monthly cap of the project's plan (lib/plans.ts): the sentence names the quota, its figure and when it resets. */
  overQuota: (message: string) => new AuthError('quota_exceeded', message, 403),
  emailTooSoon: (seconds: number) =>
    new AuthError('over_email_send_rate_limit', `For security purposes, you can only request this after ${seconds} seconds.`, 429),
  userNotFound: (message = 'User not found') => new AuthError('user_not_found', message, 404),
  // Reauthentication and secure password change (GoTrue's reauthenticate.go, user.go)
  verifyEmailFirst: () => new AuthError('email_not_confirmed', 'Please verify your email first.', 422),
  reauthenticationNeeded: () => new AuthError('reauthentication_needed', 'Password update requires reauthentication', 400),
  reauthenticationNotValid: () => new AuthError('reauthentication_not_valid', 'Nonce has expired or is invalid', 422),
  insufficientAal: (message: string, status: number) => new AuthError('insufficient_aal', message, status),

  // Factors (issue 6)
  factorNotFound: (message = 'Factor not found', status = 404) => new AuthError('mfa_factor_not_found', message, status),
  factorNameConflict: (name: string) =>
    new AuthError('mfa_factor_name_conflict', `A factor with the friendly name "${name}" for this user already exists`, 422),
  tooManyFactors: () => new AuthError('too_many_enrolled_mfa_factors', 'Maximum number of verified factors reached, unenroll to continue', 422),
  mfaVerificationFailed: () => new AuthError('mfa_verification_failed', 'Invalid TOTP code entered', 422),
  mfaVerificationRejected: () =>
    new AuthError('mfa_verification_rejected', 'This TOTP code was already accepted; wait for the next code', 422),
  mfaIpMismatch: () => new AuthError('mfa_ip_address_mismatch', 'Challenge and verify IP addresses mismatch.', 422),
  mfaChallengeExpired: (id: string) =>
    new AuthError('mfa_challenge_expired', `MFA challenge ${id} has expired, verify against another challenge or create a new challenge.`, 422),

  mfaPhoneEnrollDisabled: () => new AuthError('mfa_phone_enroll_not_enabled', 'MFA enroll is disabled for Phone', 422),
  mfaWebAuthnEnrollDisabled: () => new AuthError('mfa_webauthn_enroll_not_enabled', 'MFA enroll is disabled for WebAuthn', 422),
  mfaWebAuthnVerifyDisabled: () => new AuthError('mfa_webauthn_verify_not_enabled', 'MFA verification is disabled for WebAuthn', 422),
  /** GoTrue answers a refused attestation or assertion with a bare 500; ours says what did not match (webauthn-factors.ts). */
  mfaWebAuthnVerificationFailed: (why: string) => new AuthError('mfa_verification_failed', `Failed to validate WebAuthn MFA response: ${why}`, 422),
  mfaRecoveryCodesEnrollDisabled: () => new AuthError('mfa_recovery_codes_enroll_not_enabled', 'MFA enroll is disabled for recovery codes', 422),
  mfaRecoveryCodesVerifyDisabled: () => new AuthError('mfa_recovery_codes_verify_not_enabled', 'MFA verification is disabled for recovery codes', 422),

  // Sign-in with Google (issue 6): GoTrue's external.go codes
  providerDisabled: () => new AuthError('validation_failed', 'Unsupported provider: provider is not enabled', 400),
  badOAuthState: (message: string) => new AuthError('bad_oauth_state', message, 400),
  badOAuthCallback: (message: string) => new AuthError('bad_oauth_callback', message, 400),
  flowStateAlreadyUsed: () => new AuthError('flow_state_already_used', 'State has already been used', 400),
  /** GoTrue signs such a user up unconfirmed and mails them; we refuse, since Google has not verified the address. */
  providerEmailNeedsVerification: () =>
    new AuthError('provider_email_needs_verification', 'Unverified email with google. Verify the address with Google, then sign in again.', 422),
  // Features not offered (issue 15; GoTrue's answers with them switched off, reference/auth-clients.md §7)
  phoneLoginDisabled: () => new AuthError('phone_provider_disabled', 'Phone logins are disabled', 422),
  invalidPhone: () => new AuthError('validation_failed', 'Invalid phone number format (E.164 required)', 400),
  samlDisabled: () => new AuthError('saml_provider_disabled', 'SAML 2.0 is disabled', 404),
  web3Disabled: () => new AuthError('web3_provider_disabled', 'Web3 provider is disabled', 422),
  manualLinkingDisabled: () => new AuthError('manual_linking_disabled', 'Manual linking is disabled', 404),
  // Identity linking (GoTrue's identity.go, and linkIdentityToUser in external.go)
  identityAlreadyLinked: () => new AuthError('identity_already_exists', 'Identity is already linked', 422),
  identityLinkedToAnother: () => new AuthError('identity_already_exists', 'Identity is already linked to another user', 422),
  /** A linked identity whose address another user has (GoTrue: 400 here, unlike the sign-up's 422). */
  linkedEmailExists: () => new AuthError('email_exists', 'A user with this email address has already been registered', 400),
  singleIdentityNotDeletable: () => new AuthError('single_identity_not_deletable', 'User must have at least 1 identity after unlinking', 422),
  identityNotFound: () => new AuthError('identity_not_found', "Identity doesn't exist", 422),
  emailConflictIdentityNotDeletable: () => new AuthError('email_conflict_identity_not_deletable', 'Unable to unlink identity due to email conflict', 422),
  passkeysDisabled: () => new AuthError('passkey_disabled', 'Passkeys are disabled', 404),
  oauthServerDisabled: () => new AuthError('feature_disabled', 'OAuth server is disabled', 404),
  // POST /token?grant_type=id_token (token_oidc.go)
  idTokenProviderDisabled: (issuer: string) => new AuthError('provider_disabled', `Provider (issuer ${JSON.stringify(issuer)}) is not enabled`, 400),
  idTokenProviderNotAllowed: (provider: string) => new AuthError('validation_failed', `Custom OIDC provider ${JSON.stringify(provider)} not allowed`, 400),
  /** GoTrue's OAuthError: always 400, `{error, error_description}`, no error code. */
  oauth: (error: string, description: string) => new OAuthError(error, description),
  unexpected: (message = 'Unexpected failure, please check server logs for more information') =>
    new AuthError('unexpected_failure', message, 500),
  // Auth hooks (hooks/; reference/gotrue-round3.md §4). GoTrue's codes where it has one (HTTP hooks); where
  // GoTrue answers a bare 500, 502 for a bad answer and 504 for a timeout, with a code naming the hook
  // (DECISIONS, round 3). `hook` is custom_access_token or send_email.
  hookError: (hook: string, status: number, message: string) => new AuthError(`hook_${hook}_error`, message, status),
  hookInvalidOutput: (hook: string, message: string) => new AuthError(`hook_${hook}_invalid_output`, message, 502),
  hookFailed: (hook: string, uri: string) => new AuthError(`hook_${hook}_failed`, `Error running hook URI: ${uri}`, 502),
  hookTimeout: (hook: string, uri: string, seconds: number) =>
    new AuthError(`hook_${hook}_timeout`, `Hook URI ${uri} did not answer within ${seconds} seconds`, 504),
  hookTimeoutAfterRetry: () => new AuthError('hook_timeout_after_retry', 'failed to reach hook after maximum retries', 422),
  hookPayloadOverSizeLimit: (bytes: number) => new AuthError('hook_payload_over_size_limit', `Payload size exceeded size limit of ${bytes} bytes`, 422),
  hookPayloadInvalidContentType: () => new AuthError('hook_payload_invalid_content_type', 'Invalid Content-Type: Expected application/json', 400),
  // The project database (workers/auth/db/pool.ts): GoTrue's timeout middleware text; our code for a database it cannot reach.
  requestTimeout: () => new AuthError('request_timeout', 'Processing this request timed out, please retry after a moment.', 504),
  databaseUnavailable: () =>
    new AuthError('database_unavailable', 'The project database is unavailable, please retry after a moment.', 503, undefined, RETRY_AFTER_SECONDS),
}

/** GoTrue's error shapes (lib/http/errors.ts), with the body fields some codes add. */
export function authErrorResponse(error: BaseplaneError, headers: Record<string, string>): ServiceResponse {
  if (error instanceof OAuthError) {
    const apiVersion = headers['x-supabase-api-version']
    return {
      status: 400,
      headers: { 'content-type': 'application/json', ...(apiVersion ? { 'x-supabase-api-version': apiVersion } : {}) },
      body: JSON.stringify({ error: error.code, error_description: error.message }),
    }
  }
  return gotrueErrorResponse(error, headers, error instanceof AuthError && error.extra ? error.extra : {})
}
