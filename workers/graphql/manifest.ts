// GraphQL's doorway: one endpoint, POST {base_url}/graphql/v1 (SPEC 4.2).
import type { ConcernManifest } from '../../lib/http/manifest.ts'

export const graphqlManifest: ConcernManifest<'query'> = {
  concern: 'graphql',
  prefix: '/graphql/v1',
  routes: [
    { method: 'POST', path: '', name: 'query' },
    { method: 'POST', path: '/', name: 'query' },
  ],
  // As pg_graphql behind Supabase's gateway: a refused key is the gateway's JSON, not a GraphQL body.
  refusals: 'platform',
}
