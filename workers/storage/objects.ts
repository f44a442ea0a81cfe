// Objects (`/object/...`): upload, download, info, remove, move, copy. Every
// statement about a row runs as the caller, so the project's policies decide
// (insert to upload, select to read, update to overwrite and move, delete to
// remove); a bucket's settings are read as the service role, as Supabase reads
// them. Bytes are written before the row that names them and removed after the
// row that named them is gone (blobs.ts), each under a version of its own.
import { quotaRefusal, STORAGE_LIMITS } from '../../lib/plans.ts'
import type { ServiceResponse } from '../../lib/service.ts'
import { isBlobMissing, isStoreUnavailable, type ByteRange } from './blob-store.ts'
import { blobKey, blobWritten, dropBlobs, reserveBlob, storedBytes, VERSION_PATTERN } from './blobs.ts'
import { bodyOf, callerOf, json, jsonBody, ownerOf, streamed, type StorageCall } from './call.ts'
import type { Client } from './database.ts'
import { storageErrors } from './errors.ts'
import { checkBucketName, checkKey, decodedParam, mimeAllowed } from './names.ts'
import { sized, uploadSource } from './upload-body.ts'
import type { RequestIdentity } from '../../lib/roles.ts'

export interface BucketSettings {
  id: string
  public: boolean
  fileSizeLimit: number | null
  allowedMimeTypes: string[] | null
}

/** The bucket's settings, read as the service role (uploads need no policy on storage.buckets, as on Supabase). */
export async function bucketSettings(call: StorageCall, bucket: string): Promise<BucketSettings> {
  const row = await call.database.asService(async (client) => {
    const { rows } = await client.query<{ id: string; public: boolean; file_size_limit: string | null; allowed_mime_types: string[] | null }>(
      'select id, public, file_size_limit, allowed_mime_types from storage.buckets where id = $1',
      [bucket],
    )
    return rows[0]
  })
  if (row === undefined) throw storageErrors.noSuchBucket()
  return { id: row.id, public: row.public, fileSizeLimit: row.file_size_limit === null ? null : Number(row.file_size_limit), allowedMimeTypes: row.allowed_mime_types }
}

export interface ObjectRow {
  id: string
  name: string
  bucket_id: string
  owner: string | null
  owner_id: string | null
  version: string | null
  metadata: Record<string, unknown> | null
  user_metadata: Record<string, unknown> | null
  created_at: Date
  updated_at: Date
  last_accessed_at: Date | null
}

const OBJECT_COLUMNS = 'id, name, bucket_id, owner, owner_id, version, metadata, user_metadata, created_at, updated_at, last_accessed_at'

async function objectRow(client: Client, bucket: string, key: string): Promise<ObjectRow | undefined> {
  const { rows } = await client.query<ObjectRow>(`select ${OBJECT_COLUMNS} from storage.objects where bucket_id = $1 and name = $2`, [bucket, key])
  return rows[0]
}

function paramsOf(call: StorageCall): { bucket: string; key: string } {
  return { bucket: decodedParam(call.params.bucket!, 'bucket'), key: decodedParam(call.params.key!, 'key') }
}

function storeFailure(error: unknown): never {
  if (isStoreUnavailable(error)) throw storageErrors.storeUnavailable()
  if (isBlobMissing(error)) throw storageErrors.noSuchKey()
  throw error
}

/**
 * What the project may still store under a storage size cap (lib/plans.ts; none under `bill`), from
 * the platform's record of its blobs, and the refusal past it; undefined without a cap.
 */
export async function storageRoom(call: StorageCall): Promise<{ bytes: number; refusal: () => Error } | undefined> {
  const cap = call.project.caps.storage_size_bytes
  if (cap === undefined) return undefined
  const refusal = () => storageErrors.quotaExceeded(quotaRefusal('storage_size_bytes', cap))
  const room = cap - (await storedBytes(call.database))
  if (room <= 0) throw refusal()
  return { bytes: room, refusal }
}

/** The largest object this upload may store: the bucket's limit, never past the plan's. */
function sizeLimit(call: StorageCall, bucket: BucketSettings): number {
  const plan = STORAGE_LIMITS[call.project.plan].fileSizeBytes
  return bucket.fileSizeLimit === null ? plan : Math.min(bucket.fileSizeLimit, plan)
}

type WriteMode = 'create' | 'update' | 'upsert'

/** The statement that writes an object's row as the caller: insert, update, or insert-or-update; it answers the row's id and the version it replaced. */
const WRITE_STATEMENTS: Record<WriteMode, string> = {
  create: `insert into storage.objects (bucket_id, name, owner, owner_id, version, metadata, user_metadata)
           values ($1, $2, $3, $4, $5, $6, $7) returning id, null::text as replaced`,
  update: `with old as (select id, version from storage.objects where bucket_id = $1 and name = $2 for update)
           update storage.objects o set owner = $3, owner_id = $4, version = $5, metadata = $6, user_metadata = $7, updated_at = now(), last_accessed_at = now()
             from old where o.id = old.id returning o.id, old.version as replaced`,
  upsert: `with old as (select version from storage.objects where bucket_id = $1 and name = $2 for update)
           insert into storage.objects (bucket_id, name, owner, owner_id, version, metadata, user_metadata)
           values ($1, $2, $3, $4, $5, $6, $7)
           on conflict (bucket_id, name) do update set owner = excluded.owner, owner_id = excluded.owner_id, version = excluded.version,
             metadata = excluded.metadata, user_metadata = excluded.user_metadata, updated_at = now(), last_accessed_at = now()
           returning id, (select version from old) as replaced`,
}

/** Whether the caller's policies would let the row be written: tried and rolled back before a byte is read, as Supabase does. */
export async function checkWritable(call: StorageCall, identity: RequestIdentity, mode: WriteMode, bucket: string, key: string): Promise<void> {
  const { owner, ownerId } = ownerOf(identity)
  await call.database
    .asCaller(identity, async (client) => {
      const { rows } = await client.query(WRITE_STATEMENTS[mode], [bucket, key, owner, ownerId, null, {}, null])
      if (mode === 'update' && rows.length === 0) throw storageErrors.noSuchKey()
      throw ROLLBACK
    })
    .catch((error: unknown) => {
      if (error !== ROLLBACK) throw error
    })
}
const ROLLBACK = Symbol('rollback')

export interface WriteOptions {
  identity: RequestIdentity
  mode: WriteMode
  bucket: string
  key: string
  /** Who the object is recorded as owned by when that is not the identity's `sub` (a signed upload's signer). */
  ownerSub?: string | undefined
}

/**
 * Stores the request's body as the object: the bucket's limits checked, the
 * caller's right to write tried first, the bytes streamed to the store under a
 * new version, then the row written as the caller; what it replaced is removed
 * once that has committed. Nothing is left of a failed upload but a record the
 * collector removes.
 */
export async function writeObject(call: StorageCall, options: WriteOptions): Promise<{ id: string; key: string }> {
  const { identity, mode, bucket, key } = options
  const settings = await bucketSettings(call, bucket)
  const source = await uploadSource(call.request.headers, bodyOf(call))
  const mimetype = source.contentType.split(';')[0]!.trim().toLowerCase()
  if (!mimeAllowed(mimetype, settings.allowedMimeTypes)) throw storageErrors.invalidMimeType(mimetype)
  const declared = call.request.headers['content-length']
  const fileLimit = sizeLimit(call, settings)
  const multipart = /^multipart\//i.test(call.request.headers['content-type'] ?? '')
  if (declared !== undefined && Number(declared) > fileLimit && !multipart) throw storageErrors.entityTooLarge()
  const room = await storageRoom(call)
  if (room !== undefined && declared !== undefined && !multipart && Number(declared) > room.bytes) throw room.refusal()
  const quotaBinds = room !== undefined && room.bytes < fileLimit
  const limit = quotaBinds ? room.bytes : fileLimit
  if (options.ownerSub === undefined) await checkWritable(call, identity, mode, bucket, key)
  const version = await reserveBlob(call.database, bucket, key)
  const seen = { bytes: 0 }
  const rawLength = /^multipart\//i.test(call.request.headers['content-type'] ?? '') || declared === undefined ? undefined : Number(declared)
  const tooLarge = quotaBinds ? room!.refusal : storageErrors.entityTooLarge
  const written = await call.store.put(blobKey(call.project.ref, version), sized(source.body, limit, rawLength, seen, undefined, tooLarge), source.contentType).catch(async (error: unknown) => {
    // Nothing was kept under the key (the store's contract): the reservation goes now rather than at collection.
    await dropBlobs(call.database, call.store, call.project.ref, [version])
    return storeFailure(error)
  })
  await blobWritten(call.database, version, written.size)
  const now = new Date().toISOString()
  const metadata = {
    eTag: written.etag,
    size: written.size,
    mimetype: source.contentType,
    cacheControl: source.cacheControl,
    lastModified: now,
    contentLength: written.size,
    httpStatusCode: 200,
  }
  const { owner, ownerId } = ownerOf(options.ownerSub === undefined ? identity : { role: identity.role, claims: { sub: options.ownerSub } })
  let row: { id: string; replaced: string | null }
  try {
    row = await call.database.asCaller(identity, async (client) => {
      const { rows } = await client.query<{ id: string; replaced: string | null }>(WRITE_STATEMENTS[mode], [bucket, key, owner, ownerId, version, metadata, source.userMetadata])
      if (rows.length === 0) throw storageErrors.noSuchKey()
      return rows[0]!
    })
  } catch (error) {
    await dropBlobs(call.database, call.store, call.project.ref, [version])
    throw error
  }
  if (row.replaced !== null) await dropBlobs(call.database, call.store, call.project.ref, [row.replaced])
  return { id: row.id, key: `${bucket}/${key}` }
}

export async function upload(call: StorageCall, mode: 'create' | 'update'): Promise<ServiceResponse> {
  const { bucket, key } = paramsOf(call)
  const upsert = mode === 'create' && call.request.headers['x-upsert'] === 'true'
  const written = await writeObject(call, { identity: callerOf(call), mode: upsert ? 'upsert' : mode, bucket, key })
  return json(200, { Id: written.id, Key: written.key })
}

/** `Range: bytes=a-b` (one range; `a-`, `-n`) against an object of `size` bytes; undefined when absent. */
export function rangeOf(header: string | undefined, size: number): ByteRange | undefined {
  if (header === undefined) return undefined
  const found = /^bytes=(\d*)-(\d*)$/.exec(header.trim())
  if (found === null || (found[1] === '' && found[2] === '')) throw storageErrors.invalidRange()
  let start: number
  let end: number
  if (found[1] === '') {
    const suffix = Number(found[2])
    if (suffix === 0) throw storageErrors.invalidRange()
    start = Math.max(0, size - suffix)
    end = size - 1
  } else {
    start = Number(found[1])
    end = found[2] === '' ? size - 1 : Math.min(Number(found[2]), size - 1)
  }
  if (start > end || start >= size) throw storageErrors.invalidRange()
  return { start, end }
}

/** The headers an object is served with, as Supabase serves them. */
function objectHeaders(row: ObjectRow): Record<string, string> {
  const metadata = row.metadata ?? {}
  const headers: Record<string, string> = {
    'content-type': String(metadata.mimetype ?? 'application/octet-stream'),
    'cache-control': String(metadata.cacheControl ?? 'no-cache'),
    'last-modified': new Date(String(metadata.lastModified ?? row.updated_at.toISOString())).toUTCString(),
    'accept-ranges': 'bytes',
  }
  if (typeof metadata.eTag === 'string') headers.etag = metadata.eTag
  return headers
}

/** `download=` (a name, or empty for the object's own) as a Content-Disposition of the object. */
function dispositionOf(query: URLSearchParams, key: string): string | undefined {
  if (!query.has('download')) return undefined
  const name = query.get('download') || key.split('/').pop()!
  return `attachment; filename="${name.replace(/["\\\r\n]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(name)}`
}

/** Past the month's storage egress cap (the control plane's quota watch says so), no stored byte is sent. */
export function checkEgress(call: StorageCall): void {
  if (call.project.egressCapped) throw storageErrors.quotaExceeded(quotaRefusal('storage_egress_bytes', call.project.caps.storage_egress_bytes ?? 0))
}

/** Sends the object's bytes (a range of them, 206), or 304 when the client's ETag is current. */
export async function serveObject(call: StorageCall, row: ObjectRow, key: string): Promise<ServiceResponse> {
  checkEgress(call)
  const headers = objectHeaders(row)
  const disposition = dispositionOf(call.query, key)
  if (disposition !== undefined) headers['content-disposition'] = disposition
  const match = call.request.headers['if-none-match']
  if (match !== undefined && headers.etag !== undefined && match.split(',').some((tag) => tag.trim().replace(/^W\//, '') === headers.etag)) {
    return { status: 304, headers: { etag: headers.etag, 'cache-control': headers['cache-control']!, 'last-modified': headers['last-modified']! }, body: '' }
  }
  if (row.version === null || !VERSION_PATTERN.test(row.version)) throw storageErrors.noSuchKey()
  const size = Number(row.metadata?.size ?? 0)
  const range = rangeOf(call.request.headers.range, size)
  // A HEAD's answer has the GET's headers and length and no body: the bytes are not read.
  if (call.request.head) return streamed(call, range === undefined ? 200 : 206, headers, (async function* () {})(), range === undefined ? size : range.end - range.start + 1)
  const stream = await call.store.get(blobKey(call.project.ref, row.version), range).catch(storeFailure)
  if (range === undefined) return streamed(call, 200, headers, stream, size)
  headers['content-range'] = `bytes ${range.start}-${range.end}/${size}`
  return streamed(call, 206, headers, stream, range.end - range.start + 1)
}

export async function download(call: StorageCall): Promise<ServiceResponse> {
  const { bucket, key } = paramsOf(call)
  const row = await call.database.asCaller(callerOf(call), (client) => objectRow(client, bucket, key))
  if (row === undefined) throw storageErrors.noSuchKey()
  return serveObject(call, row, key)
}

/** A public bucket's object, for anyone: read as the service role once the bucket is public. */
export async function publicObject(call: StorageCall): Promise<{ row: ObjectRow; key: string }> {
  const { bucket, key } = paramsOf(call)
  const row = await call.database.asService(async (client) => {
    const { rows } = await client.query<ObjectRow & { public: boolean }>(
      `select ${OBJECT_COLUMNS.split(', ').map((column) => `o.${column}`).join(', ')}, b.public from storage.objects o join storage.buckets b on b.id = o.bucket_id where o.bucket_id = $1 and o.name = $2`,
      [bucket, key],
    )
    return rows[0]
  })
  // A private bucket's object is "not found" here, as on Supabase: the URL tells nothing of what exists.
  if (row === undefined || !row.public) throw storageErrors.noSuchKey()
  return { row, key }
}

export async function publicDownload(call: StorageCall): Promise<ServiceResponse> {
  const { row, key } = await publicObject(call)
  return serveObject(call, row, key)
}

/** storage-js's info(): the row as Supabase's object info shows it (camelCased by the client). */
export function infoJson(row: ObjectRow) {
  const metadata = row.metadata ?? {}
  return {
    id: row.id,
    name: row.name,
    bucket_id: row.bucket_id,
    version: row.version,
    size: metadata.size ?? null,
    content_type: metadata.mimetype ?? null,
    cache_control: metadata.cacheControl ?? null,
    etag: metadata.eTag ?? null,
    metadata: row.user_metadata,
    last_modified: metadata.lastModified ?? null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  }
}

export async function info(call: StorageCall, isPublic: boolean): Promise<ServiceResponse> {
  if (isPublic) return json(200, infoJson((await publicObject(call)).row))
  const { bucket, key } = paramsOf(call)
  const row = await call.database.asCaller(callerOf(call), (client) => objectRow(client, bucket, key))
  if (row === undefined) throw storageErrors.noSuchKey()
  return json(200, infoJson(row))
}

/** Deletes the rows the caller may delete (all of the bucket when `keys` is undefined, up to `limit`), then their bytes; answers the rows. */
async function deleteRows(call: StorageCall, bucket: string, keys: readonly string[] | undefined, limit: number): Promise<ObjectRow[]> {
  const rows = await call.database.asCaller(callerOf(call), async (client) => {
    const { rows } =
      keys === undefined
        ? await client.query<ObjectRow>(
            `delete from storage.objects where id in (select id from storage.objects where bucket_id = $1 limit $2) returning ${OBJECT_COLUMNS}`,
            [bucket, limit],
          )
        : await client.query<ObjectRow>(`delete from storage.objects where bucket_id = $1 and name = any($2::text[]) returning ${OBJECT_COLUMNS}`, [bucket, keys])
    return rows
  })
  await dropBlobs(
    call.database,
    call.store,
    call.project.ref,
    rows.flatMap((row) => (row.version === null ? [] : [row.version])),
  )
  return rows
}

/** Removes objects of `bucket` (empties it when `keys` is undefined): answers how many rows went. */
export async function removeObjects(call: StorageCall, bucket: string, keys: readonly string[] | undefined, limit: number): Promise<number> {
  return (await deleteRows(call, bucket, keys, limit)).length
}

function listedJson(row: ObjectRow) {
  return {
    name: row.name,
    bucket_id: row.bucket_id,
    owner: row.owner ?? '',
    owner_id: row.owner_id ?? undefined,
    id: row.id,
    updated_at: row.updated_at.toISOString(),
    created_at: row.created_at.toISOString(),
    last_accessed_at: row.last_accessed_at?.toISOString() ?? null,
    metadata: row.metadata,
    user_metadata: row.user_metadata,
    version: row.version,
  }
}

export async function removeMany(call: StorageCall): Promise<ServiceResponse> {
  const bucket = decodedParam(call.params.bucket!, 'bucket')
  const prefixes = jsonBody(call).prefixes
  if (!Array.isArray(prefixes) || prefixes.length === 0 || prefixes.length > 1000) throw storageErrors.invalidRequest('prefixes must be a list of 1 to 1000 object keys')
  const keys = prefixes.map((key) => checkKey(key))
  await bucketSettings(call, bucket)
  const rows = await deleteRows(call, bucket, keys, keys.length)
  return json(200, rows.map(listedJson))
}

export async function removeOne(call: StorageCall): Promise<ServiceResponse> {
  const { bucket, key } = paramsOf(call)
  const rows = await deleteRows(call, bucket, [key], 1)
  if (rows.length === 0) throw storageErrors.noSuchKey()
  return json(200, { message: 'Successfully deleted' })
}

function moveTarget(call: StorageCall) {
  const body = jsonBody(call)
  const sourceBucket = checkBucketName(body.bucketId)
  const destinationBucket = body.destinationBucket === undefined || body.destinationBucket === null ? sourceBucket : checkBucketName(body.destinationBucket)
  return { sourceBucket, sourceKey: checkKey(body.sourceKey), destinationBucket, destinationKey: checkKey(body.destinationKey), body }
}

/** Renames the row (its bytes stay where they are): the caller needs to update the source and see it, as on Supabase. */
export async function move(call: StorageCall): Promise<ServiceResponse> {
  const { sourceBucket, sourceKey, destinationBucket, destinationKey } = moveTarget(call)
  if (destinationBucket !== sourceBucket) await bucketSettings(call, destinationBucket)
  const moved = await call.database.asCaller(callerOf(call), async (client) => {
    const { rowCount } = await client.query(
      `update storage.objects set bucket_id = $3, name = $4, updated_at = now() where bucket_id = $1 and name = $2`,
      [sourceBucket, sourceKey, destinationBucket, destinationKey],
    )
    return rowCount ?? 0
  })
  if (moved === 0) throw storageErrors.noSuchKey()
  return json(200, { message: 'Successfully moved' })
}

/** Copies the bytes to a new version and inserts the copy's row as the caller (select on the source, insert on the target). */
export async function copy(call: StorageCall): Promise<ServiceResponse> {
  const { sourceBucket, sourceKey, destinationBucket, destinationKey, body } = moveTarget(call)
  const identity = callerOf(call)
  const source = await call.database.asCaller(identity, (client) => objectRow(client, sourceBucket, sourceKey))
  if (source === undefined || source.version === null || !VERSION_PATTERN.test(source.version)) throw storageErrors.noSuchKey()
  await bucketSettings(call, destinationBucket)
  const upsert = call.request.headers['x-upsert'] === 'true'
  const mode: WriteMode = upsert ? 'upsert' : 'create'
  await checkWritable(call, identity, mode, destinationBucket, destinationKey)
  const room = await storageRoom(call)
  if (room !== undefined && Number(source.metadata?.size ?? 0) > room.bytes) throw room.refusal()
  const version = await reserveBlob(call.database, destinationBucket, destinationKey)
  await call.store.copy(blobKey(call.project.ref, source.version), blobKey(call.project.ref, version)).catch(storeFailure)
  await blobWritten(call.database, version, Number(source.metadata?.size ?? 0))
  const { owner, ownerId } = ownerOf(identity)
  const metadata = { ...(source.metadata ?? {}), lastModified: new Date().toISOString() }
  const userMetadata = body.copyMetadata === false ? null : source.user_metadata
  let row: { id: string; replaced: string | null }
  try {
    row = await call.database.asCaller(identity, async (client) => {
      const { rows } = await client.query<{ id: string; replaced: string | null }>(WRITE_STATEMENTS[mode], [destinationBucket, destinationKey, owner, ownerId, version, metadata, userMetadata])
      return rows[0]!
    })
  } catch (error) {
    await dropBlobs(call.database, call.store, call.project.ref, [version])
    throw error
  }
  if (row.replaced !== null) await dropBlobs(call.database, call.store, call.project.ref, [row.replaced])
  return json(200, { Id: row.id, Key: `${destinationBucket}/${destinationKey}` })
}

export { objectRow, paramsOf, listedJson, storeFailure }
