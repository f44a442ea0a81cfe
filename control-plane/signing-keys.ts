// A project's asymmetric signing keys (issue 15 item 7): made at creation
// and dropped once expired (signing-key-pairs.ts, which ControlPlane uses),
// listed and rotated by the CLI (`baseplane keys REF --rotate-signing-key`)
// and the admin API (admin-api/signing-keys.ts). Rows live in baseplane.signing_keys
// (sql/catalogue/0008); what a key does at a given moment follows from its
// timestamps (lib/jwt.ts signingKeyState), so no one has to write when a key
// starts or stops signing.
//
// Rotation publishes the new key STANDBY_SECONDS before it signs: GoTrue's
// JWKS answer may be cached that long (`Cache-Control: public, max-age=600`),
// so by the time a token names the new kid every cache has seen it. The key it
// replaces keeps being published and accepted until the last token it signed
// has expired (the project's JWT expiry after it retires), then it is dropped.
// `now` skips the wait (a key that leaked): auth-js fetches the JWKS again
// when it meets an unknown kid, but a verifier behind a cache may refuse the
// new tokens for up to 10 minutes.
import { withPoolTransaction } from '../lib/db/request-transaction.ts'
import { platformErrors } from '../lib/errors.ts'
import { signingKeyState, type SigningAlg, type SigningKey, type SigningKeyState } from '../lib/jwt.ts'
import { applyDefaults } from '../workers/auth/face.ts'
import type { ControlPlane } from './control-plane.ts'
import { getProject } from './projects.ts'
import * as db from './db/signing-keys.ts'
import { DEFAULT_SIGNING_ALG, insertKey } from './signing-key-pairs.ts'

export { addFirstSigningKey, DEFAULT_SIGNING_ALG, dropExpiredSigningKeys, newSigningKey, validateSigningAlg } from './signing-key-pairs.ts'

/** How long a new key is published before it signs: the JWKS answer's max-age. */
export const STANDBY_SECONDS = 600
/** Added to a retired key's last token expiry before it is dropped, for verifiers whose clocks run behind. */
const CLOCK_SKEW_SECONDS = 60

export interface SigningKeyView {
  kid: string
  alg: SigningAlg
  state: Exclude<SigningKeyState, 'dropped'>
  created_at: string
  /** When it starts (or started) signing. */
  signs_from: string
  /** When the next key takes over (null while it is the newest). */
  retires_at: string | null
  /** When it stops being published and accepted (null while it is the newest). */
  drops_at: string | null
}

export interface SigningKeysView {
  ref: string
  keys: SigningKeyView[]
}

const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString())

export function signingKeysView(ref: string, keys: readonly SigningKey[], now = Date.now()): SigningKeysView {
  const shown: SigningKeyView[] = []
  for (const key of keys) {
    const state = signingKeyState(key, now)
    if (state === 'dropped') continue
    shown.push({ kid: key.kid, alg: key.alg, state, created_at: iso(key.createdAt)!, signs_from: iso(key.signsFrom)!, retires_at: iso(key.retiresAt), drops_at: iso(key.dropsAt) })
  }
  return { ref, keys: shown }
}

export async function listSigningKeys(controlPlane: ControlPlane, ref: string): Promise<SigningKeysView> {
  return signingKeysView(ref, (await getProject(controlPlane, ref)).signingKeys)
}

export interface RotateSigningKey {
  /** The new key's algorithm; by default the current key's. */
  alg?: SigningAlg
  /** Sign with the new key at once instead of STANDBY_SECONDS from now (or promote the key already waiting). */
  now?: boolean
}

/**
 * A new signing key, published now and signing from STANDBY_SECONDS on (or at
 * once with `now`); the key in use retires then and is dropped once its last
 * token has expired. A second rotation while a key waits is refused, unless
 * `now`, which makes the waiting key sign at once.
 */
export async function rotateSigningKey(controlPlane: ControlPlane, ref: string, options: RotateSigningKey = {}): Promise<SigningKeysView> {
  const project = await getProject(controlPlane, ref)
  // Tokens the retiring key signs until it retires live this long.
  const expirySeconds = applyDefaults(project.authSettings).jwtExpirySeconds + CLOCK_SKEW_SECONDS
  await withPoolTransaction(controlPlane.catalogue, async (client) => {
    await db.lockSigningKeys(client, ref)
    await db.deleteDroppedKeysOf(client, ref)
    const newest = await db.newestSigningKey(client, ref)
    if (newest?.waiting) {
      if (!options.now) {
        throw platformErrors.invalidArgument(
          `Signing key ${newest.kid} already waits to sign (from ${newest.signs_from.toISOString()}); rotate with "now" (--now) to make it sign at once`,
        )
      }
      if (options.alg !== undefined && options.alg !== newest.alg) {
        throw platformErrors.invalidArgument(`Signing key ${newest.kid} waiting to sign is ${newest.alg}, not ${options.alg}; rotate with "now" (--now) and no algorithm to promote it`)
      }
      // Promote the waiting key: it and its predecessor's retirement move to now.
      await db.retireWaitingPredecessorNow(client, ref, expirySeconds)
      await db.signFromNow(client, newest.kid)
      return
    }
    const lead = options.now ? 0 : STANDBY_SECONDS
    const alg = options.alg ?? newest?.alg ?? DEFAULT_SIGNING_ALG
    // The retiring key's times come from the new key's, set in the same statement's now().
    await db.retireNewestKey(client, ref, lead, expirySeconds)
    await insertKey(client, ref, alg, lead)
  })
  await controlPlane.changed()
  return listSigningKeys(controlPlane, ref)
}
