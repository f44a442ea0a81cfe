// A project's asymmetric signing keys (issue 15 item 7): made at creation,
// made for projects older than them when the control plane opens, listed and
// rotated by the CLI (`baseplane keys REF --rotate-signing-key`) and the admin
// API (signingKeyRoutes). Rows live in baseplane.signing_keys
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
import crypto from 'node:crypto'
import type pg from 'pg'
import { withPoolTransaction } from '../lib/db/request-transaction.ts'
import { platformErrors } from '../lib/errors.ts'
import { isSigningAlg, SIGNING_ALGS, signingKeyState, type SigningAlg, type SigningKey, type SigningKeyState } from '../lib/jwt.ts'
import { fieldsOf, type JsonObject } from '../lib/http/body.ts'
import { REF_SOURCE } from '../lib/refs.ts'
import { applyDefaults } from '../workers/auth/settings.ts'
import type { AdminRoute } from './admin-api.ts'
import type { ControlPlane } from './control-plane.ts'

/** How long a new key is published before it signs: the JWKS answer's max-age. */
export const STANDBY_SECONDS = 600
/** Added to a retired key's last token expiry before it is dropped, for verifiers whose clocks run behind. */
const CLOCK_SKEW_SECONDS = 60

export const DEFAULT_SIGNING_ALG: SigningAlg = 'ES256'

export function validateSigningAlg(value: string): SigningAlg {
  if (!isSigningAlg(value)) throw platformErrors.invalidArgument(`Unknown signing algorithm "${value}": use ${SIGNING_ALGS.join(' or ')}`)
  return value
}

/** A fresh key pair: ES256 on P-256, RS256 with a 2048-bit modulus (the sizes Supabase's platform offers). */
export function newSigningKey(alg: SigningAlg): { kid: string; alg: SigningAlg; privateJwk: crypto.JsonWebKey } {
  const pair = alg === 'ES256' ? crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }) : crypto.generateKeyPairSync('rsa', { modulusLength: 2048 })
  return { kid: crypto.randomUUID(), alg, privateJwk: pair.privateKey.export({ format: 'jwk' }) }
}

/** One change of a project's keys at a time, whichever process makes it. */
async function lockKeys(client: pg.ClientBase, ref: string): Promise<void> {
  await client.query(`select pg_advisory_xact_lock(hashtext('baseplane.signing_keys'), hashtext($1))`, [ref])
}

async function insertKey(client: pg.ClientBase, ref: string, alg: SigningAlg, leadSeconds: number): Promise<string> {
  const key = newSigningKey(alg)
  await client.query(
    `insert into baseplane.signing_keys (kid, ref, alg, private_jwk, signs_from) values ($1, $2, $3, $4, now() + make_interval(secs => $5))`,
    [key.kid, ref, key.alg, JSON.stringify(key.privateJwk), leadSeconds],
  )
  return key.kid
}

/**
 * The first key of a new project, in the transaction that inserts its row. It
 * signs at once: no token of the project exists yet, nor a cached JWKS.
 */
export async function addFirstSigningKey(client: pg.ClientBase, ref: string, alg: SigningAlg = DEFAULT_SIGNING_ALG): Promise<void> {
  await lockKeys(client, ref)
  await insertKey(client, ref, alg, 0)
}

/**
 * Deletes keys whose last token has expired. Runs whenever the control plane
 * opens; cheap when there is nothing to do. A project made before signing
 * keys existed gets none here: it signs HS256 (lib/jwt.ts signAccessToken),
 * as before, until its operator rotates one in (`baseplane keys REF
 * --rotate-signing-key`), because its own backends may verify its tokens with
 * the JWT secret and an upgrade must not break them unasked.
 */
export async function dropExpiredSigningKeys(catalogue: pg.Pool): Promise<void> {
  await catalogue.query('delete from baseplane.signing_keys where drops_at <= now()')
}

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
  return signingKeysView(ref, (await controlPlane.get(ref)).signingKeys)
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
  const project = await controlPlane.get(ref)
  // Tokens the retiring key signs until it retires live this long.
  const expirySeconds = applyDefaults(project.authSettings).jwtExpirySeconds + CLOCK_SKEW_SECONDS
  await withPoolTransaction(controlPlane.catalogue, async (client) => {
    await lockKeys(client, ref)
    await client.query('delete from baseplane.signing_keys where ref = $1 and drops_at <= now()', [ref])
    const { rows } = await client.query<{ kid: string; alg: SigningAlg; waiting: boolean; signs_from: Date }>(
      `select kid, alg, signs_from > now() as waiting, signs_from from baseplane.signing_keys
        where ref = $1 and retires_at is null`,
      [ref],
    )
    const newest = rows[0]
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
      await client.query(
        `update baseplane.signing_keys set retires_at = now(), drops_at = now() + make_interval(secs => $2)
          where ref = $1 and retires_at is not null and retires_at > now()`,
        [ref, expirySeconds],
      )
      await client.query('update baseplane.signing_keys set signs_from = now() where kid = $1', [newest.kid])
      return
    }
    const lead = options.now ? 0 : STANDBY_SECONDS
    const alg = options.alg ?? newest?.alg ?? DEFAULT_SIGNING_ALG
    // The retiring key's times come from the new key's, set in the same statement's now().
    await client.query(
      `update baseplane.signing_keys
          set retires_at = now() + make_interval(secs => $2), drops_at = now() + make_interval(secs => $2 + $3)
        where ref = $1 and retires_at is null`,
      [ref, lead, expirySeconds],
    )
    await insertKey(client, ref, alg, lead)
  })
  await controlPlane.changed()
  return listSigningKeys(controlPlane, ref)
}

/** The admin API's body for a rotation: `{alg?, now?}`. */
export function rotationFromBody(body: JsonObject): RotateSigningKey {
  const unknown = Object.keys(body).filter((key) => key !== 'alg' && key !== 'now')
  if (unknown.length > 0) throw platformErrors.invalidArgument(`Unknown field "${unknown[0]}": a rotation takes alg (${SIGNING_ALGS.join(' or ')}) and now (true or false)`)
  const fields = fieldsOf(body, platformErrors.invalidArgument)
  const alg = fields.optionalString('alg')
  return { alg: alg === undefined ? undefined : validateSigningAlg(alg), now: fields.optionalBoolean('now') === true }
}

/** Admin API routes (`/platform/v1/projects/{ref}/signing-keys`), the same operations as the CLI. */
export function signingKeyRoutes(controlPlane: ControlPlane): AdminRoute[] {
  const where = { ref: REF_SOURCE }
  return [
    { method: 'GET', path: '/projects/:ref/signing-keys', where, handler: async ({ params }) => [200, await listSigningKeys(controlPlane, params.ref!)] },
    {
      method: 'POST',
      path: '/projects/:ref/signing-keys/rotate',
      where,
      handler: async ({ params, body }) => [200, await rotateSigningKey(controlPlane, params.ref!, rotationFromBody(await body()))],
    },
  ]
}
