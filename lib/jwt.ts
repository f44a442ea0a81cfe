// JSON Web Tokens of a project: its API keys and the access tokens it verifies.
// HS256 only; jose verifies (and refuses `alg: none` and any other algorithm).
// Signing is node:crypto's HMAC: jose signs through WebCrypto, which costs
// about 45 µs of CPU and a thread-pool trip per token against 3 µs here, and
// an auth worker signs one token per session it issues.
import crypto from 'node:crypto'
import { jwtVerify, errors as joseErrors } from 'jose'
import { platformErrors } from './errors.ts'

const TEN_YEARS = 10 * 365 * 24 * 3600
const encoder = new TextEncoder()
const keyCache = new Map<string, Promise<CryptoKey>>()

/**
 * An HS256 key, imported once per `name`: jose runs on WebCrypto, and given
 * raw bytes it would import them again (one more trip through the thread
 * pool) on every sign and verify, nearly doubling their latency.
 */
export function hs256Key(name: string, material: () => Uint8Array<ArrayBuffer>): Promise<CryptoKey> {
  let key = keyCache.get(name)
  if (key === undefined) {
    key = crypto.subtle.importKey('raw', material(), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify'])
    if (keyCache.size > 10000) keyCache.clear()
    keyCache.set(name, key)
  }
  return key
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

/** Verifies signature and expiry; throws the gate's `bad_jwt` error with the reason. */
export async function verifyJwt(secret: string, token: string): Promise<Record<string, unknown>> {
  try {
    const { payload } = await jwtVerify(token, await keyOf(secret), { algorithms: ['HS256'] })
    return payload as Record<string, unknown>
  } catch (error) {
    if (error instanceof joseErrors.JWTExpired) throw platformErrors.badJwt('token has expired')
    if (error instanceof joseErrors.JWSSignatureVerificationFailed) throw platformErrors.badJwt('signature is invalid')
    if (error instanceof joseErrors.JOSEAlgNotAllowed) throw platformErrors.badJwt('signing algorithm is not allowed')
    if (error instanceof joseErrors.JWTClaimValidationFailed) throw platformErrors.badJwt(error.message)
    throw platformErrors.badJwt('unable to parse token')
  }
}
