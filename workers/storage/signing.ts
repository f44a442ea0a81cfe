// Signed URLs as storage-js asks for them: creating one needs what reading
// needs (the caller's select policy sees the object), using one needs only the
// URL. Signed uploads: creating one needs the insert policy; the upload itself
// then runs as the one who signed it (`owner`), with the token's upsert.
import type { RequestIdentity } from '../../lib/roles.ts'
import type { ServiceResponse } from '../../lib/service.ts'
import { callerOf, json, jsonBody, type StorageCall } from './call.ts'
import { storageErrors } from './errors.ts'
import { checkKey, decodedParam } from './names.ts'
import { bucketSettings, checkWritable, objectRow, paramsOf, serveObject, writeObject } from './objects.ts'
import { signObject, signUpload as signUploadToken, verifyObject, verifyUpload } from './signed-urls.ts'

function expiresInOf(value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) throw storageErrors.invalidRequest('expiresIn must be a whole number of seconds, at least 1')
  return value
}

/** storage-js's transform options as the query string a rendering reads (workers/storage/render.ts). */
export function transformQuery(transform: unknown): string | undefined {
  if (transform === undefined || transform === null) return undefined
  if (typeof transform !== 'object' || Array.isArray(transform)) throw storageErrors.invalidRequest('transform must be an object')
  const query = new URLSearchParams()
  for (const [name, value] of Object.entries(transform as Record<string, unknown>)) {
    if (value !== undefined && value !== null) query.set(name, String(value))
  }
  const text = query.toString()
  return text === '' ? undefined : text
}

export async function sign(call: StorageCall): Promise<ServiceResponse> {
  const { bucket, key } = paramsOf(call)
  const body = jsonBody(call)
  const expiresIn = expiresInOf(body.expiresIn)
  const transformations = transformQuery(body.transform)
  const row = await call.database.asCaller(callerOf(call), (client) => objectRow(client, bucket, key))
  if (row === undefined) throw storageErrors.noSuchKey()
  const token = await signObject(call.project.jwtSecret, bucket, key, expiresIn, transformations)
  const route = transformations === undefined ? 'object/sign' : 'render/image/sign'
  return json(200, { signedURL: `/${route}/${bucket}/${key}?token=${token}` })
}

export async function signMany(call: StorageCall): Promise<ServiceResponse> {
  const bucket = decodedParam(call.params.bucket!, 'bucket')
  const body = jsonBody(call)
  const expiresIn = expiresInOf(body.expiresIn)
  const paths = body.paths
  if (!Array.isArray(paths) || paths.length === 0 || paths.length > 1000 || !paths.every((path) => typeof path === 'string')) {
    throw storageErrors.invalidRequest('paths must be a list of 1 to 1000 object keys')
  }
  // The ones the caller may read are signed; each other is answered with its error, as Supabase does.
  const visible = await call.database.asCaller(callerOf(call), async (client) => {
    const { rows } = await client.query<{ name: string }>('select name from storage.objects where bucket_id = $1 and name = any($2::text[])', [bucket, paths])
    return new Set(rows.map((row) => row.name))
  })
  const answers = await Promise.all(
    (paths as string[]).map(async (path) => {
      let valid = true
      try {
        checkKey(path)
      } catch {
        valid = false
      }
      if (!valid || !visible.has(path)) return { error: 'Either the object does not exist or you do not have access to it', path, signedURL: null }
      const token = await signObject(call.project.jwtSecret, bucket, path, expiresIn)
      return { error: null, path, signedURL: `/object/sign/${bucket}/${path}?token=${token}` }
    }),
  )
  return json(200, answers)
}

/** GET /object/sign/<bucket>/<key>?token=: the token is the authorization; the object is read as the service role. */
export async function signedDownload(call: StorageCall): Promise<ServiceResponse> {
  const { bucket, key } = paramsOf(call)
  await verifyObject(call.project.jwtSecret, call.query.get('token'), bucket, key)
  const row = await call.database.asService((client) => objectRow(client, bucket, key))
  if (row === undefined) throw storageErrors.noSuchKey()
  return serveObject(call, row, key)
}

export async function signUpload(call: StorageCall): Promise<ServiceResponse> {
  const { bucket, key } = paramsOf(call)
  const identity = callerOf(call)
  const upsert = call.request.headers['x-upsert'] === 'true'
  // The caller must be one who may upload there now; the upload checks again, as the signer, when it comes.
  // Whoever signs must be one who may write there: the policies are checked now, as on Supabase, not when the URL is used.
  await bucketSettings(call, bucket)
  await checkWritable(call, identity, upsert ? 'upsert' : 'create', bucket, key)
  const sub = identity.claims.sub
  const token = await signUploadToken(call.project.jwtSecret, bucket, key, typeof sub === 'string' ? sub : undefined, upsert)
  return json(200, { url: `/object/upload/sign/${bucket}/${key}?token=${token}`, token })
}

/**
 * PUT /object/upload/sign/<bucket>/<key>?token=: the token is the permission
 * (checked when it was signed), so the row is written as the service role,
 * owned by the signer, as Supabase does.
 */
export async function signedUpload(call: StorageCall): Promise<ServiceResponse> {
  const { bucket, key } = paramsOf(call)
  const claims = await verifyUpload(call.project.jwtSecret, call.query.get('token'), bucket, key)
  const identity: RequestIdentity = { role: 'service_role', claims: { role: 'service_role' } }
  const written = await writeObject(call, { identity, mode: claims.upsert ? 'upsert' : 'create', bucket, key, ownerSub: claims.owner ?? '' })
  return json(200, { Id: written.id, Key: written.key })
}
