// The admin API's signing keys (`/platform/v1/projects/{ref}/signing-keys`),
// the operations of signing-keys.ts, as the CLI's `keys --signing-keys` and
// `--rotate-signing-key`.
import { platformErrors } from '../../lib/errors.ts'
import type { JsonObject } from '../../lib/http/body.ts'
import { SIGNING_ALGS } from '../../lib/jwt.ts'
import type { ControlPlane } from '../control-plane.ts'
import { listSigningKeys, rotateSigningKey, validateSigningAlg, type RotateSigningKey } from '../signing-keys.ts'
import { adminFields, REF_PARAM, type AdminRoute } from './route.ts'

/** The body of a rotation: `{alg?, now?}`. */
export function rotationFromBody(body: JsonObject): RotateSigningKey {
  const unknown = Object.keys(body).filter((key) => key !== 'alg' && key !== 'now')
  if (unknown.length > 0) throw platformErrors.invalidArgument(`Unknown field "${unknown[0]}": a rotation takes alg (${SIGNING_ALGS.join(' or ')}) and now (true or false)`)
  const fields = adminFields(body)
  const alg = fields.optionalString('alg')
  return { alg: alg === undefined ? undefined : validateSigningAlg(alg), now: fields.optionalBoolean('now') === true }
}

export function signingKeyRoutes(controlPlane: ControlPlane): AdminRoute[] {
  return [
    { method: 'GET', access: 'read', path: '/projects/:ref/signing-keys', where: REF_PARAM, handler: async ({ params }) => [200, await listSigningKeys(controlPlane, params.ref!)] },
    {
      method: 'POST', access: 'owner',
      path: '/projects/:ref/signing-keys/rotate',
      where: REF_PARAM,
      handler: async ({ params, body }) => [200, await rotateSigningKey(controlPlane, params.ref!, rotationFromBody(await body()))],
    },
  ]
}
