// GET /.well-known/jwks.json (GoTrue internal/api/jwks.go; auth-clients.md
// section 2): the project's public signing keys, so `supabase.auth.getClaims()`
// and any other verifier check access tokens without calling the server. No
// apikey needed (a verifier may hold none). Keys waiting to sign are listed too,
// so caches hold them before the first token names them; the legacy HS256
// secret is never listed, so a project without a signing key answers `[]`.
import { publishedKeys } from '../../lib/jwt.ts'
import { json, type ServiceResponse } from '../../lib/service.ts'
import type { AuthRequest } from './request.ts'

/** GoTrue's header: verifiers and the edge may keep the answer 10 minutes. */
const CACHE_CONTROL = 'public, max-age=600'

export async function jwks(req: AuthRequest): Promise<ServiceResponse> {
  return json(200, { keys: publishedKeys(req.raw.project.signingKeys) }, { 'cache-control': CACHE_CONTROL })
}
