// Storage's face for the control plane and the CLI: the one module outside
// workers/storage/ they may import (test/platform/layout.test.ts holds it).
// Each part is Storage's own code, so the operator's paths (the dashboard's
// Storage tab, `baseplane storage ...`, the admin API) check and write as the
// storage API does:
//
// - Reading, on the caller's connection as the server's admin role: the
//   buckets with their objects and bytes, one folder level of a bucket (as
//   storage-js list() lists it), the project's figures (bytes as the usage and
//   the quotas count them, objects, buckets), the policies on
//   storage.objects and storage.buckets.
// - Writing, on the caller's connection as service_role (the owner's triggers
//   run with these statements): a bucket made or its settings changed (checked
//   as POST/PUT /bucket check them, against the plan), an object's row
//   removed; then its bytes (`removeObjectBytes`, with the node's Storage
//   setting), best effort as the API's removal is.
// - Signing: a download URL and an upload token for one object, signed with
//   the project's secret as POST /object/sign and /object/upload/sign sign
//   them, for a browser to use against the project's own endpoint.
// - A deleted project: every byte under its ref (`deleteProjectObjects`).
// - Names and errors: the API's checks of bucket names and keys, and its
//   error catalogue.
//
// Everything else in workers/storage/ (the handlers, the stores, the
// collector) is Storage's alone.
import type pg from 'pg'
import type { StorageBackendConfig } from '../../lib/service.ts'
import { dropObjectBytes } from './admin.ts'
import { openBlobStore } from './backend.ts'
import type { BlobStore } from './blob-store.ts'

// Reading and writing
export { storedBytesOf } from './blobs.ts'
export {
  deleteObjectRow,
  folderPrefix,
  insertBucket,
  readBucket,
  readBuckets,
  readFigures,
  readFolder,
  readPolicies,
  updateBucketRow,
  type BucketSummary,
  type FolderEntry,
  type StorageFigures,
  type StoragePolicy,
} from './admin.ts'
export { bucketSettingsOf, type BucketSettings } from './bucket-settings.ts'

// Signing
export { signObject, signUpload, SIGNED_UPLOAD_SECONDS } from './signed-urls.ts'

// Names and errors
export { checkBucketName, checkKey } from './names.ts'
export { StorageApiError, storageErrors } from './errors.ts'

/** `work` with the node's byte store, closed afterwards. */
async function withStore<T>(config: StorageBackendConfig, work: (store: BlobStore) => Promise<T>): Promise<T> {
  const store = await openBlobStore(config)
  try {
    return await work(store)
  } finally {
    await store.close().catch(() => {})
  }
}

/**
 * The bytes of objects whose rows were removed (deleteObjectRow's versions),
 * with their records, where no row names them any more; `asPlatform` runs on
 * the project's database as the admin role. What fails is left to Storage's
 * collector, which removes unnamed blobs once their upload window has passed.
 */
export async function removeObjectBytes(
  config: StorageBackendConfig,
  ref: string,
  asPlatform: <T>(work: (client: pg.ClientBase) => Promise<T>) => Promise<T>,
  versions: readonly string[],
): Promise<void> {
  if (versions.length === 0) return
  await withStore(config, (store) => dropObjectBytes(asPlatform, store, ref, versions))
}

/** Every byte a project's objects had (keys `<ref>/...`), once its database is dropped. */
export async function deleteProjectObjects(config: StorageBackendConfig, ref: string): Promise<void> {
  await withStore(config, (store) => store.deletePrefix(`${ref}/`))
}
