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
  { method: 'GET', path: '/admin/users', name: 'listUsers' },
  { method: 'POST', path: '/admin/users', name: 'createUser' },
  { method: 'GET', path: '/admin/users/:id', name: 'getUserById' },
  { method: 'PUT', path: '/admin/users/:id', name: 'updateUser' },
  { method: 'DELETE', path: '/admin/users/:id', name: 'deleteUser' },
  { method: 'POST', path: '/invite', name: 'invite' },
  { method: 'POST', path: '/admin/generate_link', name: 'generateLink' },
  { method: 'POST', path: '/factors', name: 'enrollFactor' },
  { method: 'POST', path: '/factors/:id/challenge', name: 'challengeFactor', throttled: true },
  { method: 'POST', path: '/factors/:id/verify', name: 'verifyFactor', throttled: true },
  { method: 'DELETE', path: '/factors/:id', name: 'deleteFactor' },
  // The provider redirects: a top-level navigation, no apikey.
  { method: 'GET', path: '/authorize', name: 'authorize', throttled: true, open: true },
  { method: 'GET', path: '/callback', name: 'callback', throttled: true, open: true },
  { method: 'POST', path: '/callback', name: 'callback', throttled: true },
] as const satisfies ConcernManifest['routes']

export type AuthRouteName = (typeof routes)[number]['name']

export const authManifest: ConcernManifest<AuthRouteName> = {
  concern: 'auth',
  prefix: '/auth/v1',
  routes,
  refusals: 'gotrue',
  enabledBy: 'authEnabled',
}
