// Auth's doorway (GoTrue's routes under /auth/v1): read by the data plane to
// find the concern and its open routes, and by worker.ts to route.
import type { ConcernManifest } from '../../lib/http/manifest.ts'

const routes = [
  { method: 'GET', path: '/health', name: 'health' },
  { method: 'POST', path: '/signup', name: 'signup', throttled: true },
  // Sign-in grants count; a failed refresh is not a sign-in attempt.
  { method: 'POST', path: '/token', name: 'token', throttled: (r) => new URLSearchParams(r.query).get('grant_type') !== 'refresh_token' },
  { method: 'GET', path: '/user', name: 'getUser' },
  { method: 'PUT', path: '/user', name: 'putUser' },
  { method: 'POST', path: '/logout', name: 'logout' },
  { method: 'POST', path: '/recover', name: 'recover', throttled: true },
  { method: 'POST', path: '/otp', name: 'otp', throttled: true },
  { method: 'POST', path: '/magiclink', name: 'otp', throttled: true },
  { method: 'POST', path: '/verify', name: 'verifyPost', throttled: true },
  // The emailed link: the browser sends no apikey.
  { method: 'GET', path: '/verify', name: 'verifyGet', throttled: true, open: true },
  { method: 'POST', path: '/resend', name: 'resend', throttled: true },
  { method: 'GET', path: '/settings', name: 'settings' },
  // Public keys for local verification (getClaims): GoTrue asks no apikey for them.
  { method: 'GET', path: '/.well-known/jwks.json', name: 'jwks', open: true },
  { method: 'GET', path: '/admin/users', name: 'listUsers' },
  { method: 'POST', path: '/admin/users', name: 'createUser' },
  { method: 'GET', path: '/admin/users/:id', name: 'getUserById' },
  { method: 'PUT', path: '/admin/users/:id', name: 'updateUser' },
  { method: 'DELETE', path: '/admin/users/:id', name: 'deleteUser' },
  { method: 'GET', path: '/admin/users/:id/factors', name: 'listUserFactors' },
  { method: 'DELETE', path: '/admin/users/:id/factors/:factorId', name: 'deleteUserFactor' },
  { method: 'GET', path: '/reauthenticate', name: 'reauthenticate' },
  { method: 'POST', path: '/invite', name: 'invite' },
  { method: 'POST', path: '/admin/generate_link', name: 'generateLink' },
  // Baseplane's own (GoTrue has none): the project's mail record for its service_role, where a
  // developer without an SMTP server reads the confirmation links the outbox kept.
  { method: 'GET', path: '/admin/mail', name: 'listMail' },
  { method: 'POST', path: '/factors', name: 'enrollFactor' },
  // MFA recovery codes (auth-js 2.119's mfa.recoveryCodes): not offered (disabled.ts).
  // Before /factors/:id, which would take them. Refusing a feature is not a guess, so not throttled.
  { method: 'GET', path: '/factors/recovery-codes', name: 'recoveryCodesStatus' },
  { method: 'POST', path: '/factors/recovery-codes', name: 'recoveryCodesEnroll' },
  { method: 'POST', path: '/factors/recovery-codes/regenerate', name: 'recoveryCodesEnroll' },
  { method: 'POST', path: '/factors/recovery-codes/verify', name: 'recoveryCodesVerify' },
  { method: 'DELETE', path: '/factors/recovery-codes', name: 'recoveryCodesDelete' },
  { method: 'POST', path: '/factors/:id/challenge', name: 'challengeFactor', throttled: true },
  { method: 'POST', path: '/factors/:id/verify', name: 'verifyFactor', throttled: true },
  { method: 'DELETE', path: '/factors/:id', name: 'deleteFactor' },
  // The provider redirects: a top-level navigation, no apikey.
  { method: 'GET', path: '/authorize', name: 'authorize', throttled: true, open: true },
  { method: 'GET', path: '/callback', name: 'callback', throttled: true, open: true },
  { method: 'POST', path: '/callback', name: 'callback', throttled: true },
  // Not offered (disabled.ts): each answers GoTrue's "disabled" error. The SAML IdP posts and reads without an apikey.
  { method: 'POST', path: '/sso', name: 'sso' },
  { method: 'GET', path: '/sso/saml/metadata', name: 'sso', open: true },
  { method: 'POST', path: '/sso/saml/acs', name: 'sso', open: true },
  // linkIdentity() and unlinkIdentity(): behind the project's manual linking switch (identities.ts).
  { method: 'GET', path: '/user/identities/authorize', name: 'linkIdentity' },
  { method: 'DELETE', path: '/user/identities/:id', name: 'unlinkIdentity' },
  { method: 'POST', path: '/passkeys/registration/options', name: 'passkeys' },
  { method: 'POST', path: '/passkeys/registration/verify', name: 'passkeys' },
  { method: 'POST', path: '/passkeys/authentication/options', name: 'passkeys' },
  { method: 'POST', path: '/passkeys/authentication/verify', name: 'passkeys' },
  { method: 'GET', path: '/passkeys', name: 'passkeys' },
  { method: 'PATCH', path: '/passkeys/:id', name: 'passkeys' },
  { method: 'DELETE', path: '/passkeys/:id', name: 'passkeys' },
  { method: 'GET', path: '/oauth/authorizations/:id', name: 'oauthServer' },
  { method: 'POST', path: '/oauth/authorizations/:id/consent', name: 'oauthServer' },
  { method: 'GET', path: '/user/oauth/grants', name: 'oauthServer' },
  { method: 'DELETE', path: '/user/oauth/grants', name: 'oauthServer' },
  // auth-js admin.oauth.*: GoTrue's admin group (admin credentials first), then requireOAuthServerEnabled.
  { method: 'GET', path: '/admin/oauth/clients', name: 'oauthServer' },
  { method: 'POST', path: '/admin/oauth/clients', name: 'oauthServer' },
  { method: 'GET', path: '/admin/oauth/clients/:id', name: 'oauthServer' },
  { method: 'PUT', path: '/admin/oauth/clients/:id', name: 'oauthServer' },
  { method: 'DELETE', path: '/admin/oauth/clients/:id', name: 'oauthServer' },
  { method: 'POST', path: '/admin/oauth/clients/:id/regenerate_secret', name: 'oauthServer' },
] as const satisfies ConcernManifest['routes']

export type AuthRouteName = (typeof routes)[number]['name']

export const authManifest: ConcernManifest<AuthRouteName> = {
  concern: 'auth',
  prefix: '/auth/v1',
  routes,
  refusals: 'gotrue',
  enabledBy: 'authEnabled',
}
