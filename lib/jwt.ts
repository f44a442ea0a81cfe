// JSON Web Tokens of a project: its API keys and the access tokens it issues
// and verifies. Two kinds of key (auth-clients.md section 2):
// - the legacy JWT secret (HS256): API keys, and access tokens issued before
//   the project had a signing key, keep verifying with it;
// - the project's asymmetric signing keys (ES256, or RS256), each named by a
//   UUID `kid`: Auth signs access tokens with the one in use, and every key not
//   yet dropped is published at /auth/v1/.well-known/jwks.json.
// jose verifies (and refuses `alg: none` and every algorithm but these three).
// Signing is node:crypto's, with keys imported once: jose signs through
// WebCrypto, which costs about 45 µs of CPU and a thread-pool trip per token
// against 3 µs for the HMAC here (about 30 µs for ES256), and an auth worker
// signs one token per session it issues.
import crypto from 'node:crypto'
import { jwtVerify, errors as joseErrors, type JWTHeaderParameters } from 'jose'
import { API_ROLES, isApiRole, type RequestIdentity } from './roles.ts'
import { BaseplaneError, platformErrors } from './errors.ts'

const TEN_YEARS = 10 * 365 * 24 * 3600
const encoder = new TextEncoder()
const keyCache = new Map<string, Promise<CryptoKey>>()

/**
 * A key imported once per `name`: jose runs on WebCrypto, and given raw bytes
 * or a JWK it would import them again (one more trip through the thread pool)
 * on every verify, nearly doubling its latency.
 */
function cachedKey(name: string, load: () => Promise<CryptoKey>): Promise<CryptoKey> {
  let key = keyCache.get(name)
  if (key === undefined) {
    key = load()
    if (keyCache.size > 10000) keyCache.clear()
    keyCache.set(name, key)
  }
  return key
}

/** An HS256 key, imported once per `name`. */
export function hs256Key(name: string, material: () => Uint8Array<ArrayBuffer>): Promise<CryptoKey> {
  return cachedKey(name, () => crypto.subtle.importKey('raw', material(), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']))
}

/** The project's JWT secret as a key. */
function keyOf(secret: string): Promise<CryptoKey> {
  return hs256Key(`jwt\0${secret}`, () => encoder.encode(secret))
}

const HEADER = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url')

/** A compact HS256 JWS of `claims` (RFC 7515/7519), header `{"alg":"HS256","typ":"JWT"}`. */
export function signJwt(secret: string, claims: Record<string, unknown>): string {
  const input = `${HEADER}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`
  return `${input}.${crypto.createHmac('sha256', secret).update(input).digest('base64url')}`
}

/** A project API key, in the shape of Supabase's legacy anon and service_role keys. */
export async function signApiKey(secret: string, ref: string, role: 'anon' | 'service_role', now = Date.now()): Promise<string> {
  const iat = Math.floor(now / 1000)
  return signJwt(secret, { iss: 'baseplane', ref, role, iat, exp: iat + TEN_YEARS })
}

// --- Asymmetric signing keys ---------------------------------------------

export const SIGNING_ALGS = ['ES256', 'RS256'] as const
export type SigningAlg = (typeof SIGNING_ALGS)[number]

export function isSigningAlg(value: unknown): value is SigningAlg {
  return (SIGNING_ALGS as readonly unknown[]).includes(value)
}

/** A project's asymmetric signing key as the catalogue holds it (baseplane.signing_keys). */
export interface SigningKey {
  /** A UUID, as Supabase's platform names its keys. */
  kid: string
  alg: SigningAlg
  /** The private JWK (RFC 7517), public members included; never leaves the platform. */
  privateJwk: crypto.JsonWebKey
  /** Milliseconds since the epoch from which it signs (before then it is standby: published, not signing). */
  signsFrom: number
  /** When the next key takes over; undefined while it is the newest. */
  retiresAt: number | undefined
  /** When its last tokens have expired: from then on it is neither accepted nor published. */
  dropsAt: number | undefined
  createdAt: number
}

/** Supabase's key states (signing-keys.mdx); `dropped` keys are gone from the JWKS and refused. */
export type SigningKeyState = 'standby' | 'in_use' | 'previously_used' | 'dropped'

export function signingKeyState(key: SigningKey, now = Date.now()): SigningKeyState {
  if (key.dropsAt !== undefined && key.dropsAt <= now) return 'dropped'
  if (key.signsFrom > now) return 'standby'
  if (key.retiresAt !== undefined && key.retiresAt <= now) return 'previously_used'
  return 'in_use'
}

/** The key that signs at `now`: the latest whose time has come. Undefined when the project has none (it signs HS256). */
export function signerOf(keys: readonly SigningKey[], now = Date.now()): SigningKey | undefined {
  let signer: SigningKey | undefined
  for (const key of keys) if (signingKeyState(key, now) === 'in_use' && (signer === undefined || key.signsFrom > signer.signsFrom)) signer = key
  return signer
}

/** A public JWK as GoTrue publishes it: `use: "sig"`, `key_ops: ["verify"]`, never a private member. */
export interface PublicJwk {
  kty: string
  kid: string
  alg: SigningAlg
  use: 'sig'
  key_ops: ['verify']
  crv?: string
  x?: string
  y?: string
  n?: string
  e?: string
}

export function publicJwkOf(key: SigningKey): PublicJwk {
  const { kty, crv, x, y, n, e } = key.privateJwk
  const common = { kty: kty!, kid: key.kid, alg: key.alg, use: 'sig' as const, key_ops: ['verify'] as ['verify'] }
  return kty === 'EC' ? { ...common, crv, x, y } : { ...common, n, e }
}

/** What /.well-known/jwks.json lists at `now`: every key not dropped, standby ones included (published before they sign). */
export function publishedKeys(keys: readonly SigningKey[], now = Date.now()): PublicJwk[] {
  return keys.filter((key) => signingKeyState(key, now) !== 'dropped').map(publicJwkOf)
}

interface Signer {
  header: string
  key: crypto.KeyObject
  /** ECDSA signatures in JWS are r || s (RFC 7518 3.4), not DER. */
  dsaEncoding: 'ieee-p1363' | undefined
}

const signers = new Map<string, Signer>()

function signerFor(key: SigningKey): Signer {
  // Keyed by the private material too: a kid is only a name.
  const name = `${key.kid}\0${key.privateJwk.d}`
  let signer = signers.get(name)
  if (signer === undefined) {
    signer = {
      header: Buffer.from(JSON.stringify({ alg: key.alg, kid: key.kid, typ: 'JWT' })).toString('base64url'),
      key: crypto.createPrivateKey({ key: key.privateJwk, format: 'jwk' }),
      dsaEncoding: key.alg === 'ES256' ? 'ieee-p1363' : undefined,
    }
    if (signers.size > 10000) signers.clear()
    signers.set(name, signer)
  }
  return signer
}

/** A compact JWS of `claims` signed with `key`, header `{"alg","kid","typ":"JWT"}`. */
export function signWithKey(key: SigningKey, claims: Record<string, unknown>): string {
  const signer = signerFor(key)
  const input = `${signer.header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`
  const signature = crypto.sign('sha256', Buffer.from(input), { key: signer.key, dsaEncoding: signer.dsaEncoding })
  return `${input}.${signature.toString('base64url')}`
}

/** What a project verifies tokens with: its legacy secret and its signing keys. A ProjectRecord is one. */
export interface VerificationKeys {
  jwtSecret: string
  signingKeys: readonly SigningKey[]
}

/**
 * An access token of the project: signed with the key in use, or with the
 * legacy secret when the project has none yet.
 */
export function signAccessToken(keys: VerificationKeys, claims: Record<string, unknown>, now = Date.now()): string {
  const signer = signerOf(keys.signingKeys, now)
  return signer ? signWithKey(signer, claims) : signJwt(keys.jwtSecret, claims)
}

const VERIFY_PARAMS: Record<SigningAlg, EcKeyImportParams | RsaHashedImportParams> = {
  ES256: { name: 'ECDSA', namedCurve: 'P-256' },
  RS256: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' },
}

function publicKeyOf(key: SigningKey): Promise<CryptoKey> {
  const jwk = publicJwkOf(key)
  // The material is part of the name: a kid means one key, but the cache must not take a kid's word for it.
  return cachedKey(`${key.kid}\0${jwk.x ?? jwk.n}`, () => crypto.subtle.importKey('jwk', { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y, n: jwk.n, e: jwk.e }, VERIFY_PARAMS[key.alg], false, ['verify']))
}

/**
 * GoTrue's lookup (internal/api/auth.go parseJWTClaims): a kid naming one of
 * the project's asymmetric keys selects it, and the token's alg must be that
 * key's (so an HS256 token "signed" with a public key's bytes is refused);
 * otherwise an HS256 token is checked against the legacy secret; anything
 * else is refused.
 */
function keyFor(keys: VerificationKeys, header: JWTHeaderParameters): Promise<CryptoKey> {
  const now = Date.now()
  if (header.kid !== undefined) {
    const key = keys.signingKeys.find((candidate) => candidate.kid === header.kid && signingKeyState(candidate, now) !== 'dropped')
    if (key !== undefined) {
      if (header.alg !== key.alg) throw platformErrors.badJwt(`signing algorithm ${header.alg} does not match key ${key.kid} (${key.alg})`)
      return publicKeyOf(key)
    }
  }
  if (header.alg === 'HS256') return keyOf(keys.jwtSecret)
  if (header.kid === undefined) throw platformErrors.badJwt(`a ${header.alg} token must name its signing key (kid)`)
  throw platformErrors.badJwt(`signing key ${header.kid} is unknown`)
}

const ALGORITHMS = ['HS256', ...SIGNING_ALGS]

/**
 * A compact JWS is three base64url parts (RFC 7515 sections 2 and 7.1: no
 * padding, no `+` or `/`). jose's decoder tolerates padding, so an HS256
 * token with `=` appended verified while an ES256 one did not: checked here,
 * before any algorithm, so every one refuses alike.
 */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/

/**
 * Verifies form, signature and expiry; throws the gate's `bad_jwt` error with
 * the reason. `exp` is required: every token the platform issues carries one
 * (access tokens, and the anon and service_role keys, ten years out as
 * Supabase's), so a token without it was made elsewhere with the project's
 * secret and must not live forever. Given only a secret (a string), accepts
 * HS256 tokens only.
 */
export async function verifyJwt(keys: VerificationKeys | string, token: string): Promise<Record<string, unknown>> {
  const known: VerificationKeys = typeof keys === 'string' ? { jwtSecret: keys, signingKeys: [] } : keys
  if (!COMPACT_JWS.test(token)) throw platformErrors.badJwt('unable to parse token')
  try {
    const { payload } = await jwtVerify(token, (header) => keyFor(known, header), { algorithms: ALGORITHMS, requiredClaims: ['exp'] })
    return payload as Record<string, unknown>
  } catch (error) {
    if (BaseplaneError.is(error)) throw error
    if (error instanceof joseErrors.JWTExpired) throw platformErrors.badJwt('token has expired')
    if (error instanceof joseErrors.JWSSignatureVerificationFailed) throw platformErrors.badJwt('signature is invalid')
    if (error instanceof joseErrors.JOSEAlgNotAllowed) throw platformErrors.badJwt('signing algorithm is not allowed')
    // golang-jwt's words, as GoTrue's answer carries them.
    if (error instanceof joseErrors.JWTClaimValidationFailed && error.claim === 'exp' && error.reason === 'missing') {
      throw platformErrors.badJwt('token is missing required claim: exp claim is required')
    }
    if (error instanceof joseErrors.JWTClaimValidationFailed) throw platformErrors.badJwt(error.message)
    throw platformErrors.badJwt('unable to parse token')
  }
}

/** What a project admits a caller with: its keys, and its own roles besides the API roles. A ProjectRecord is one. */
export interface CallerKeys extends VerificationKeys {
  projectRoles: readonly string[]
}

/**
 * The caller a token names, as the data plane's gate admits it (the Bearer
 * token, or the apikey when none is sent): its verified claims, and their
 * `role` when it is one of the API roles or one of the project's own; else
 * the gate's `bad_jwt`, naming the roles that would pass. The dashboard's
 * GraphQL explorer makes its callers with it too, so RLS sees the same.
 */
export async function callerOf(project: CallerKeys, token: string): Promise<RequestIdentity> {
  const claims = await verifyJwt(project, token)
  const role = claims.role
  if (!isApiRole(role) && !(typeof role === 'string' && project.projectRoles.includes(role))) throw platformErrors.badJwt(roleRefusal(project))
  return { role, claims }
}

/** Names every role a token of the project may carry, so a refused caller knows what would pass. */
function roleRefusal(project: CallerKeys): string {
  const accepted = [...API_ROLES, ...project.projectRoles]
  return `role claim must be ${accepted.slice(0, -1).join(', ')} or ${accepted.at(-1)}`
}
