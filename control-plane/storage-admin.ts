// The operator's Storage operations on one project, shared by the dashboard's
// Storage tab, the CLI (`baseplane storage ...`) and the admin API: the buckets
// (with their objects and bytes), one folder level of a bucket, the project's
// storage figures, the policies on storage.objects and storage.buckets, a
// bucket made or its settings changed, an object removed (its row, then its
// bytes). Each is one short connection to the project's database: reads as the
// server's admin role (they read the platform's baseplane_storage.blobs, and
// no owner code runs on a select of the two plain tables), writes as the API's
// login role switched to service_role, as the storage API's own service-role
// calls run (the owner's triggers fire on them, never as the server's admin).
// The statements and the checks are Storage's, through its face.
import type pg from 'pg'
import type { ProjectRecord } from '../lib/catalogue.ts'
import { BaseplaneError, platformErrors } from '../lib/errors.ts'
import { log } from '../lib/log.ts'
import { STORAGE_LIMITS } from '../lib/plans.ts'
import {
  bucketSettingsOf,
  checkBucketName,
  checkKey,
  deleteObjectRow,
  folderPrefix,
  insertBucket,
  readBucket,
  readBuckets,
  readFigures,
  readFolder,
  readPolicies,
  removeObjectBytes,
  signObject,
  signUpload,
  StorageApiError,
  updateBucketRow,
  type BucketSummary,
  type FolderEntry,
  type StorageFigures,
  type StoragePolicy,
} from '../workers/storage/face.ts'
import type { ControlPlane } from './control-plane.ts'
import * as db from './db/storage.ts'
import { getProject } from './projects.ts'
import { runAsProjectLogin, runInProjectDatabase } from './project-database.ts'

export type { BucketSummary, FolderEntry, StoragePolicy }

const MAX_LIMIT = 1000

export interface BucketList {
  ref: string
  buckets: BucketSummary[]
}

export interface FolderPage {
  ref: string
  bucket: string
  /** The folder listed: '' for the bucket's top, else ending with `/`. */
  prefix: string
  entries: FolderEntry[]
  /** The offset of the next page; null on the last. */
  next_offset: number | null
}

export interface StorageUsageView extends StorageFigures {
  ref: string
  /** The plan's largest upload, in bytes (a bucket's own limit may only lower it). */
  plan_file_size_limit: number
}

/** What a bucket's create or update takes: `public`, `file_size_limit` (bytes or "5MB"; null lifts it), `allowed_mime_types` (null: any). */
export interface BucketInput {
  public?: boolean
  file_size_limit?: number | string | null
  allowed_mime_types?: string[] | null
}

/** Storage's refusals in the operator's shape: the status they mean (Storage answers some with 400 and the body's 404), the field they concern. */
function operatorError(error: unknown, field?: string): unknown {
  if (!StorageApiError.isStorage(error)) return error
  const status = error.code === 'NoSuchBucket' || error.code === 'NoSuchKey' ? 404 : Number(error.bodyStatus) || error.status
  const code = { NoSuchBucket: 'bucket_not_found', NoSuchKey: 'object_not_found', BucketAlreadyExists: 'bucket_exists', InvalidBucketName: 'invalid_argument', InvalidKey: 'invalid_argument', InvalidRequest: 'invalid_argument' }[error.code] ?? error.code
  const named = field ?? fieldOf(error.message)
  return new BaseplaneError(code, error.message, status).concerning(named)
}

function fieldOf(message: string): string | undefined {
  for (const field of ['file_size_limit', 'allowed_mime_types', 'public']) if (message.startsWith(field)) return field
  return undefined
}

function checked<T>(check: () => T, field?: string): T {
  try {
    return check()
  } catch (error) {
    throw operatorError(error, field)
  }
}

const bucketName = (value: string) => checked(() => checkBucketName(value), 'bucket')
const objectKey = (value: string) => checked(() => checkKey(value), 'key')

function count(value: number | undefined, name: string, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback
  if (!Number.isInteger(value) || value < min || value > max) throw platformErrors.invalidArgument(`${name} must be a whole number from ${min} to ${max}`, name)
  return value
}

async function located(controlPlane: ControlPlane, ref: string): Promise<{ project: ProjectRecord; serverUrl: string }> {
  const project = await getProject(controlPlane, ref)
  return { project, serverUrl: await controlPlane.serverUrl(project.dbServer) }
}

/** `work` in one transaction on the project's database as the server's admin role (reads). */
async function reading<T>(controlPlane: ControlPlane, ref: string, work: (client: pg.ClientBase, project: ProjectRecord) => Promise<T>): Promise<T> {
  const { project, serverUrl } = await located(controlPlane, ref)
  return runInProjectDatabase(serverUrl, project.dbName, (client) => work(client, project))
}

/** `work` in one transaction as the API's login role switched to service_role (writes to the owner's tables). */
async function asServiceRole<T>(project: ProjectRecord, serverUrl: string, work: (client: pg.ClientBase) => Promise<T>): Promise<T> {
  return runAsProjectLogin(serverUrl, project, 'api', async (client) => {
    await db.actAsServiceRole(client)
    return work(client)
  })
}

async function bucketOf(client: pg.ClientBase, ref: string, bucket: string): Promise<BucketSummary> {
  const found = await readBucket(client, bucket)
  if (found === undefined) throw new BaseplaneError('bucket_not_found', `Project ${ref} has no bucket "${bucket}"`, 404).concerning('bucket')
  return found
}

/** Every bucket of the project by name: its settings, objects and bytes. */
export async function listStorageBuckets(controlPlane: ControlPlane, ref: string): Promise<BucketList> {
  return { ref, buckets: await reading(controlPlane, ref, (client) => readBuckets(client)) }
}

export interface FolderQuery {
  prefix?: string
  limit?: number
  offset?: number
}

async function readPage(client: pg.ClientBase, ref: string, bucket: string, query: FolderQuery): Promise<FolderPage> {
  const prefix = folderPrefix(query.prefix ?? '')
  if (prefix !== '') objectKey(prefix.slice(0, -1))
  const limit = count(query.limit, 'limit', 100, 1, MAX_LIMIT)
  const offset = count(query.offset, 'offset', 0, 0, 10_000_000)
  await bucketOf(client, ref, bucket)
  const rows = await readFolder(client, bucket, prefix, limit + 1, offset)
  return { ref, bucket, prefix, entries: rows.slice(0, limit), next_offset: rows.length > limit ? offset + limit : null }
}

/** One folder level of a bucket (`prefix`: '' the top, `a/b` or `a/b/` the folder a/b): folders first, then files, by name. */
export async function listStorageObjects(controlPlane: ControlPlane, ref: string, bucket: string, query: FolderQuery = {}): Promise<FolderPage> {
  const name = bucketName(bucket)
  return reading(controlPlane, ref, (client) => readPage(client, ref, name, query))
}

/** The project's stored bytes (what its usage and quota count), objects and buckets. */
export async function storageUsage(controlPlane: ControlPlane, ref: string): Promise<StorageUsageView> {
  return reading(controlPlane, ref, async (client, project) => ({ ref, ...(await readFigures(client)), plan_file_size_limit: STORAGE_LIMITS[project.plan].fileSizeBytes }))
}

/** The policies on storage.objects and storage.buckets (the project's row-level security decides what the API lets each caller do). */
export async function storagePolicies(controlPlane: ControlPlane, ref: string): Promise<{ ref: string; policies: StoragePolicy[] }> {
  return { ref, policies: await reading(controlPlane, ref, (client) => readPolicies(client)) }
}

/** What the Storage tab shows, over one connection: the figures, the buckets, the policies, and one bucket's folder when asked. */
export async function storageOverview(
  controlPlane: ControlPlane,
  ref: string,
  folder?: { bucket: string } & FolderQuery,
): Promise<{ usage: StorageUsageView; buckets: BucketSummary[]; policies: StoragePolicy[]; folder?: FolderPage }> {
  const bucket = folder && bucketName(folder.bucket)
  return reading(controlPlane, ref, async (client, project) => ({
    usage: { ref, ...(await readFigures(client)), plan_file_size_limit: STORAGE_LIMITS[project.plan].fileSizeBytes },
    buckets: await readBuckets(client),
    policies: await readPolicies(client),
    folder: bucket === undefined ? undefined : await readPage(client, ref, bucket, folder!),
  }))
}

function settingsOf(project: ProjectRecord, input: BucketInput) {
  return checked(() => bucketSettingsOf(project.plan, input as Record<string, unknown>))
}

/** A new bucket (as service_role, as POST /storage/v1/bucket makes one with the service key); 409 bucket_exists when the id is taken. */
export async function createStorageBucket(controlPlane: ControlPlane, ref: string, name: string, input: BucketInput = {}): Promise<BucketSummary> {
  const id = bucketName(name)
  const { project, serverUrl } = await located(controlPlane, ref)
  const settings = settingsOf(project, input)
  const made = await asServiceRole(project, serverUrl, (client) => insertBucket(client, id, settings))
  if (!made) throw new BaseplaneError('bucket_exists', `Project ${ref} has a bucket "${id}" already`, 409).concerning('bucket')
  return runInProjectDatabase(serverUrl, project.dbName, (client) => bucketOf(client, ref, id))
}

/** A bucket's settings, as PUT /storage/v1/bucket/:id sets them: what `input` gives changes, the rest stays. */
export async function updateStorageBucket(controlPlane: ControlPlane, ref: string, bucket: string, input: BucketInput): Promise<BucketSummary> {
  const id = bucketName(bucket)
  const { project, serverUrl } = await located(controlPlane, ref)
  const settings = settingsOf(project, input)
  const updated = await asServiceRole(project, serverUrl, (client) => updateBucketRow(client, id, settings))
  if (!updated) throw new BaseplaneError('bucket_not_found', `Project ${ref} has no bucket "${id}"`, 404).concerning('bucket')
  return runInProjectDatabase(serverUrl, project.dbName, (client) => bucketOf(client, ref, id))
}

/**
 * Removes one object: its row as service_role (as DELETE /storage/v1/object
 * does with the service key), then its bytes from the node's store. A failure
 * removing the bytes is logged; Storage's collector removes them later.
 */
export async function removeStorageObject(controlPlane: ControlPlane, ref: string, bucket: string, key: string): Promise<{ ref: string; bucket: string; removed: string }> {
  const id = bucketName(bucket)
  const name = objectKey(key)
  const { project, serverUrl } = await located(controlPlane, ref)
  const removed = await asServiceRole(project, serverUrl, (client) => deleteObjectRow(client, id, name))
  if (removed === undefined) throw new BaseplaneError('object_not_found', `Bucket "${id}" of project ${ref} has no object "${name}"`, 404).concerning('key')
  if (removed.version !== null) {
    if (controlPlane.storage === undefined) {
      log.info("no Storage setting given to this control plane: a removed object's bytes are left to Storage's collector", { ref, bucket: id })
    } else {
      await removeObjectBytes(controlPlane.storage, ref, (work) => runInProjectDatabase(serverUrl, project.dbName, work), [removed.version]).catch((error: unknown) =>
        log.error("could not remove a removed object's bytes; Storage's collector removes them later", error, { ref, bucket: id }),
      )
    }
  }
  return { ref, bucket: id, removed: name }
}

/** A key as a path below `/object/...`: each segment percent-encoded (the storage API decodes them once). */
export function encodedKey(key: string): string {
  return key.split('/').map(encodeURIComponent).join('/')
}

/** A download URL of one object, under the project's base URL, valid `seconds` (GET /storage/v1/object/sign/..., `download` set). */
export async function signedDownloadUrl(project: ProjectRecord, baseUrl: string, bucket: string, key: string, seconds: number): Promise<string> {
  const token = await signObject(project.jwtSecret, bucket, key, seconds)
  return `${baseUrl}/storage/v1/object/sign/${encodeURIComponent(bucket)}/${encodedKey(key)}?token=${token}&download=`
}

/**
 * An upload URL for one object under the project's base URL (PUT
 * /storage/v1/object/upload/sign/...), as createSignedUploadUrl() with the
 * service key gives one: whoever holds it may write that one key, for two
 * hours; `upsert` lets it replace an object there.
 */
export async function signedUploadUrl(controlPlane: ControlPlane, ref: string, baseUrl: string, bucket: string, key: string, upsert: boolean): Promise<{ url: string }> {
  const id = bucketName(bucket)
  const name = objectKey(key)
  const project = await getProject(controlPlane, ref)
  await reading(controlPlane, ref, (client) => bucketOf(client, ref, id))
  const token = await signUpload(project.jwtSecret, id, name, undefined, upsert)
  return { url: `${baseUrl}/storage/v1/object/upload/sign/${encodeURIComponent(id)}/${encodedKey(name)}?token=${token}` }
}
