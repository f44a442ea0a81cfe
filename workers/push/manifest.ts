// Push's doorway: {base_url}/push/v1. Credentials need the service_role key
// (checked in api/credentials.ts); the rest run as the caller under RLS.
import type { ConcernManifest } from '../../lib/http/manifest.ts'

const routes = [
  { method: 'POST', path: '/devices', name: 'postDevice' },
  { method: 'GET', path: '/devices', name: 'getDevices' },
  { method: 'DELETE', path: '/devices/:id', name: 'removeDevice' },
  { method: 'POST', path: '/messages', name: 'postMessages' },
  { method: 'GET', path: '/messages/:id', name: 'getMessage' },
  { method: 'GET', path: '/credentials', name: 'getCredentials' },
  { method: 'PUT', path: '/credentials/:platform', name: 'putCredentials' },
  { method: 'DELETE', path: '/credentials/:platform', name: 'removeCredentials' },
  { method: 'GET', path: '/vapid', name: 'getVapid' },
] as const satisfies ConcernManifest['routes']

export type PushRouteName = (typeof routes)[number]['name']

export const pushManifest: ConcernManifest<PushRouteName> = {
  concern: 'push',
  prefix: '/push/v1',
  routes,
  refusals: 'platform',
  enabledBy: 'pushEnabled',
}
