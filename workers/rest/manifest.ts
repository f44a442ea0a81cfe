// The data API's doorway: PostgREST's routes under {base_url}/rest/v1
// (shared/reference/postgrest.md section 1): `/<table|view>`, `/rpc/<fn>`, and
// `/` (the OpenAPI description, GET and HEAD). The worker answers every method itself, in
// PostgREST's words (405 PGRST117 for an unknown one, PGRST101 on /rpc).
import type { ConcernManifest } from '../../lib/http/manifest.ts'

export type RestRoute = 'root' | 'relation' | 'rpc'

const METHODS = ['GET', 'HEAD', 'POST', 'PATCH', 'PUT', 'DELETE'] as const

export const restManifest: ConcernManifest<RestRoute> = {
  concern: 'rest',
  prefix: '/rest/v1',
  routes: [
    ...METHODS.map((method) => ({ method, path: '', name: 'root' as const })),
    ...METHODS.map((method) => ({ method, path: '/', name: 'root' as const })),
    ...METHODS.map((method) => ({ method, path: '/rpc/:fn', name: 'rpc' as const })),
    ...METHODS.map((method) => ({ method, path: '/:relation', name: 'relation' as const })),
  ],
  // postgrest-js hands a refusal's body to the app as `error`: the data plane's own refusals
  // (no key, throttled, suspended) come in PostgREST's shape too, with the platform's codes.
  refusals: 'postgrest',
}
