// Signed URLs: a token, signed with the project's JWT secret (HS256, as
// Supabase signs them), that names one object (`url`: `<bucket>/<key>`) and
// an expiry; for an upload, also who uploads (`owner`) and whether it may
// overwrite (`upsert`). Whoever holds the URL may do that one thing until it
// expires; an altered URL (another key, another token) is refused.
import { jwtVerify, SignJWT, errors as joseErrors } from 'jose'
import { storageErrors } from './errors.ts'

/** Supabase's signed upload URLs last two hours. */
export const SIGNED_UPLOAD_SECONDS = 2 * 60 * 60

const keys = new Map<string, Uint8Array>()
function keyOf(secret: string): Uint8Array {
  let key = keys.get(secret)
  if (key === undefined) {
    key = new TextEncoder().encode(secret)
    if (keys.size > 1000) keys.clear()
    keys.set(secret, key)
  }
  return key
}

export interface ObjectClaims {
  url: string
  /** The transformation the URL renders (workers/storage/image-transform.ts options, as a query string). */
  transformations?: string
}

export interface UploadClaims {
  url: string
  owner: string | undefined
  upsert: boolean
}

export function signObject(secret: string, bucket: string, key: string, expiresIn: number, transformations?: string): Promise<string> {
  const claims: ObjectClaims = { url: `${bucket}/${key}`, ...(transformations ? { transformations } : {}) }
  return new SignJWT({ ...claims }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setIssuedAt().setExpirationTime(Math.floor(Date.now() / 1000) + expiresIn).sign(keyOf(secret))
}

export function signUpload(secret: string, bucket: string, key: string, owner: string | undefined, upsert: boolean): Promise<string> {
  const claims: UploadClaims = { url: `${bucket}/${key}`, owner, upsert }
  return new SignJWT({ ...claims })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + SIGNED_UPLOAD_SECONDS)
    .sign(keyOf(secret))
}

async function verified(secret: string, token: string | null, bucket: string, key: string): Promise<Record<string, unknown>> {
  if (token === null || token === '') throw storageErrors.missingToken()
  let payload: Record<string, unknown>
  try {
    ;({ payload } = await jwtVerify(token, keyOf(secret), { algorithms: ['HS256'] }))
  } catch (error) {
    if (error instanceof joseErrors.JWTExpired) throw storageErrors.invalidJwt('jwt expired')
    throw storageErrors.invalidJwt('invalid signature')
  }
  if (payload.url !== `${bucket}/${key}`) throw storageErrors.invalidSignature()
  return payload
}

export async function verifyObject(secret: string, token: string | null, bucket: string, key: string): Promise<ObjectClaims> {
  const payload = await verified(secret, token, bucket, key)
  // An upload token opens no download (it has `owner`/`upsert`, not the reader's claims).
  if ('upsert' in payload) throw storageErrors.invalidSignature()
  return { url: payload.url as string, ...(typeof payload.transformations === 'string' ? { transformations: payload.transformations } : {}) }
}

export async function verifyUpload(secret: string, token: string | null, bucket: string, key: string): Promise<UploadClaims> {
  const payload = await verified(secret, token, bucket, key)
  if (!('upsert' in payload)) throw storageErrors.invalidSignature()
  return { url: payload.url as string, owner: typeof payload.owner === 'string' ? payload.owner : undefined, upsert: payload.upsert === true }
}
