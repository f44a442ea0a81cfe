// The node's byte store, from its one Storage setting (lib/config.ts): local
// disk under the platform home, or an S3-compatible store. The S3 client is
// loaded only where it is used.
import type { StorageBackendConfig } from '../../lib/service.ts'
import type { BlobStore } from './blob-store.ts'

export async function openBlobStore(config: StorageBackendConfig): Promise<BlobStore> {
  if (config.kind === 'local') {
    const { LocalBlobStore } = await import('./local-store.ts')
    return new LocalBlobStore(config.root)
  }
  const { S3BlobStore } = await import('./s3-store.ts')
  return new S3BlobStore({
    endpoint: config.endpoint,
    region: config.region,
    bucket: config.bucket,
    accessKeyId: config.accessKeyId,
    secretAccessKey: config.secretAccessKey,
    forcePathStyle: config.forcePathStyle,
    prefix: config.prefix,
  })
}
