// Resumable uploads: TUS 1.0 at `/upload/resumable`, as storage-js's docs and
// tus-js-client use it (metadata bucketName, objectName, contentType,
// cacheControl; `x-upsert`; 6 MB chunks), served by @tus/server. Its data
// store writes the bytes straight under the object's new version (local disk:
// @tus/file-store in the project's folder of the blob store; S3: @tus/s3-store
// under the same key the S3 blob store uses), so a finished upload is already
// where a download reads it; the row is written as the caller when the last
// chunk has arrived, with the same checks and bookkeeping as a simple upload
// (objects.ts, blobs.ts). An upload that never finishes is garbage once its
// URL has expired.
import { createHash } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import path from 'node:path'
import { Readable } from 'node:stream'
import { FileConfigstore, FileStore } from '@tus/file-store'
import { MemoryLocker, Server, type DataStore, type Upload } from '@tus/server'
import { LRUCache } from 'lru-cache'
import { BaseplaneError } from '../../lib/errors.ts'
import { log } from '../../lib/log.ts'
import { receiveFromPort } from '../../lib/port-stream.ts'
import { STORAGE_LIMITS } from '../../lib/plans.ts'
import type { RequestIdentity } from '../../lib/roles.ts'
import type { ServiceResponse, StorageBackendConfig } from '../../lib/service.ts'
import { workerSection } from '../../lib/worker-context.ts'
import { blobKey, blobWritten, dropBlobs, reserveBlob, VERSION_PATTERN } from './blobs.ts'
import { callerOf, ownerOf, type StorageCall } from './call.ts'
import { storageErrorResponse, storageErrors } from './errors.ts'
import { checkBucketName, checkKey, mimeAllowed } from './names.ts'
import { bucketSettings, checkWritable, storageRoom, storeFailure } from './objects.ts'
import { cacheControlOf } from './upload-body.ts'

/** How long an upload's URL serves, from its creation (Supabase's TUS_URL_EXPIRY_MS default). */
export const RESUMABLE_URL_SECONDS = 60 * 60
/** Supabase's chunk size for resumable uploads: every part but the last is 6 MB. */
export const RESUMABLE_CHUNK_BYTES = 6 * 1024 * 1024

/** Uploads in progress on this thread share one locker, so two requests of one upload never write at once. */
const locker = new MemoryLocker()

interface ProjectStores {
  store: DataStore
  /** The tus id of a version (the data store's key). */
  idOf: (version: string) => string
  /** The sidecar a finished upload leaves (its tus metadata), removed once the row is written. */
  forget: (id: string) => Promise<void>
}

const stores = new LRUCache<string, ProjectStores>({ max: 500 })

function projectStores(config: StorageBackendConfig, ref: string): ProjectStores {
  let found = stores.get(ref)
  if (found !== undefined) return found
  if (config.kind === 'local') {
    // The bytes in the project's folder of the blob store, the tus metadata apart from them.
    const sidecars = path.join(config.root, '.tus', ref)
    mkdirSync(sidecars, { recursive: true })
    const configstore = new FileConfigstore(sidecars)
    const store = new FileStore({ directory: path.join(config.root, ref), configstore, expirationPeriodInMilliseconds: RESUMABLE_URL_SECONDS * 1000 })
    found = { store, idOf: (version) => version, forget: (id) => configstore.delete(id).catch(() => {}) }
  } else {
    found = s3Stores(config, ref)
  }
  stores.set(ref, found)
  return found
}

function s3Stores(config: Extract<StorageBackendConfig, { kind: 's3' }>, ref: string): ProjectStores {
  // Loaded only where S3 is the backend, as backend.ts loads the S3 blob store.
  const { S3Store } = require_s3()
  const prefix = config.prefix.replace(/^\/+|\/+$/g, '')
  const store: DataStore = new S3Store({
    partSize: RESUMABLE_CHUNK_BYTES,
    expirationPeriodInMilliseconds: RESUMABLE_URL_SECONDS * 1000,
    s3ClientConfig: {
      bucket: config.bucket,
      region: config.region,
      ...(config.endpoint === undefined ? {} : { endpoint: config.endpoint }),
      forcePathStyle: config.forcePathStyle,
      credentials: { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey },
    },
  })
  return { store, idOf: (version) => `${prefix === '' ? '' : `${prefix}/`}${ref}/${version}`, forget: async () => {} }
}

let s3Module: typeof import('@tus/s3-store') | undefined
function require_s3(): typeof import('@tus/s3-store') {
  if (s3Module === undefined) throw new Error('the S3 resumable store is not loaded (loadResumable)')
  return s3Module
}

/** Loads what the node's backend needs before the first upload (the S3 store's module only on S3). */
export async function loadResumable(config: StorageBackendConfig): Promise<void> {
  if (config.kind === 's3' && s3Module === undefined) s3Module = await import('@tus/s3-store')
}

/** The last segment of an upload URL is the version; anything else names no upload. */
function versionOfPath(subPath: string): string | undefined {
  const version = subPath.replace(/^\/upload\/resumable\/?/, '').split('/')[0] ?? ''
  return VERSION_PATTERN.test(version) ? version : undefined
}

/** A refusal as @tus/server answers it: a status and a body, here Storage's JSON error. */
function refusal(error: unknown): { status_code: number; body: string } {
  const known = BaseplaneError.is(error) ? error : storageErrors.internal()
  const answer = storageErrorResponse(known)
  return { status_code: answer.status, body: answer.body }
}

interface Pending {
  bucket: string
  key: string
  identity: RequestIdentity
  upsert: boolean
}

/** Metadata of a created upload, from its tus metadata and the creating request's headers. */
function pendingOf(call: StorageCall, metadata: Record<string, string | null> | undefined): Pending {
  const bucket = checkBucketName(metadata?.bucketName ?? '')
  const key = checkKey(metadata?.objectName ?? '')
  return { bucket, key, identity: callerOf(call), upsert: call.request.headers['x-upsert'] === 'true' }
}

async function md5Of(call: StorageCall, version: string): Promise<string> {
  const hash = createHash('md5')
  const stream = await call.store.get(blobKey(call.project.ref, version)).catch(storeFailure)
  for await (const chunk of stream) hash.update(chunk as Buffer)
  return `"${hash.digest('hex')}"`
}

/** Writes the finished upload's row as the caller who sent its last chunk, as a simple upload does. */
async function finish(call: StorageCall, upload: Upload, stores: ProjectStores): Promise<void> {
  const version = upload.id.split('/').pop()!
  const metadata = upload.metadata ?? {}
  const bucket = checkBucketName(metadata.bucketName ?? '')
  const key = checkKey(metadata.objectName ?? '')
  const size = upload.offset
  await blobWritten(call.database, version, size)
  const identity = callerOf(call)
  const upsert = metadata.upsert === 'true'
  const contentType = metadata.contentType || 'application/octet-stream'
  const row = {
    eTag: await md5Of(call, version),
    size,
    mimetype: contentType,
    cacheControl: cacheControlOf(metadata.cacheControl ?? undefined),
    lastModified: new Date().toISOString(),
    contentLength: size,
    httpStatusCode: 200,
  }
  const { owner, ownerId } = ownerOf(identity)
  let replaced: string | null
  try {
    replaced = await call.database.asCaller(identity, async (client) => {
      const statement = upsert
        ? `with old as (select version from storage.objects where bucket_id = $1 and name = $2 for update)
           insert into storage.objects (bucket_id, name, owner, owner_id, version, metadata)
           values ($1, $2, $3, $4, $5, $6)
           on conflict (bucket_id, name) do update set owner = excluded.owner, owner_id = excluded.owner_id, version = excluded.version,
             metadata = excluded.metadata, updated_at = now(), last_accessed_at = now()
           returning (select version from old) as replaced`
        : `insert into storage.objects (bucket_id, name, owner, owner_id, version, metadata) values ($1, $2, $3, $4, $5, $6) returning null::text as replaced`
      const { rows } = await client.query<{ replaced: string | null }>(statement, [bucket, key, owner, ownerId, version, row])
      return rows[0]!.replaced
    })
  } catch (error) {
    await dropBlobs(call.database, call.store, call.project.ref, [version])
    throw error
  }
  await stores.forget(upload.id)
  if (replaced !== null) await dropBlobs(call.database, call.store, call.project.ref, [replaced])
}

/**
 * One tus server per request: its hooks close over the request's caller and
 * project; what must outlive the request (the data stores, the locker) is the
 * thread's.
 */
function serverFor(call: StorageCall, stores: ProjectStores, limit: { bytes: number }): Server {
  const base = `${call.project.baseUrl}/storage/v1/upload/resumable`
  return new Server({
    path: '/upload/resumable',
    datastore: stores.store,
    locker,
    relativeLocation: false,
    respectForwardedHeaders: false,
    maxSize: () => limit.bytes,
    generateUrl: (_req, { id }) => `${base}/${id.split('/').pop()}`,
    getFileIdFromRequest: () => {
      const version = versionOfPath(call.request.path)
      return version === undefined ? undefined : stores.idOf(version)
    },
    // The checks of a simple upload, before a byte is taken: the bucket, its types and size, the caller's policies.
    namingFunction: async (_req, metadata) => {
      try {
        const pending = pendingOf(call, metadata)
        const settings = await bucketSettings(call, pending.bucket)
        const type = (metadata?.contentType || 'application/octet-stream').split(';')[0]!.trim().toLowerCase()
        if (!mimeAllowed(type, settings.allowedMimeTypes)) throw storageErrors.invalidMimeType(type)
        const plan = STORAGE_LIMITS[call.project.plan].fileSizeBytes
        limit.bytes = settings.fileSizeLimit === null ? plan : Math.min(plan, settings.fileSizeLimit)
        const declared = Number(call.request.headers['upload-length'])
        if (!Number.isInteger(declared) || declared < 0) throw storageErrors.invalidRequest('Upload-Length must be given (deferred lengths are not taken)')
        if (declared > limit.bytes) throw storageErrors.entityTooLarge()
        const room = await storageRoom(call)
        if (room !== undefined && declared > room.bytes) throw room.refusal()
        await checkWritable(call, pending.identity, pending.upsert ? 'upsert' : 'create', pending.bucket, pending.key)
        return stores.idOf(await reserveBlob(call.database, pending.bucket, pending.key, RESUMABLE_URL_SECONDS * 2))
      } catch (error) {
        throw refusal(error)
      }
    },
    // The upload's own metadata keeps what the creating request said of overwriting.
    onUploadCreate: async (_req, upload) => ({ metadata: { ...upload.metadata, upsert: call.request.headers['x-upsert'] === 'true' ? 'true' : 'false' } }),
    // What the store itself failed at (a disk, S3) is the store being unavailable, in Storage's words, never its own text.
    onResponseError: (_req, error) => {
      if ('status_code' in error && error.status_code < 500) return undefined
      log.error('a resumable upload failed in its store', error, { ref: call.project.ref })
      return refusal(storageErrors.storeUnavailable())
    },
    onUploadFinish: async (_req, upload) => {
      try {
        await finish(call, upload, stores)
        return {}
      } catch (error) {
        throw refusal(error)
      }
    },
  })
}

export async function resumable(call: StorageCall): Promise<ServiceResponse> {
  const config = workerSection('storage') as StorageBackendConfig
  await loadResumable(config)
  const stores = projectStores(config, call.project.ref)
  const limit = { bytes: STORAGE_LIMITS[call.project.plan].fileSizeBytes }
  const method = call.request.head ? 'HEAD' : call.request.method
  if (call.request.path !== '/upload/resumable' && versionOfPath(call.request.path) === undefined) throw storageErrors.noSuchUpload()
  const port = call.request.bodyPort
  const hasBody = port !== undefined && (method === 'POST' || method === 'PATCH')
  const headers = new Headers()
  for (const [name, value] of Object.entries(call.request.headers)) headers.set(name, value)
  const request = new Request(`http://storage.internal${call.request.path}${call.request.query ? `?${call.request.query}` : ''}`, {
    method,
    headers,
    ...(hasBody ? { body: Readable.toWeb(Readable.from(receiveFromPort(port))) as ReadableStream<Uint8Array>, duplex: 'half' } : {}),
  } as RequestInit)
  const answer = await serverFor(call, stores, limit).handleWeb(request)
  const answerHeaders: Record<string, string> = {}
  answer.headers.forEach((value, name) => {
    // The HTTP server writes the length of what it sends itself.
    if (name !== 'content-length' && name !== 'transfer-encoding') answerHeaders[name] = value
  })
  return { status: answer.status, headers: answerHeaders, body: method === 'HEAD' ? '' : await answer.text() }
}

