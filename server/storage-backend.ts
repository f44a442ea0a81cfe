// Storage's byte store, checked once at start (issue 39 item 6): an S3 store
// must answer, take a write and a delete before the node serves; a local
// folder is made, and its shared-disk marker read (written when it has none),
// so the fleet check (control-plane/fleet-settings.ts) can tell a disk every
// node mounts from folders of their own. Answers what the fleet compares.
import type { StorageBackendConfig } from '../lib/service.ts'
import { ConfigError } from '../lib/errors.ts'

export async function checkStorageBackend(config: StorageBackendConfig): Promise<string> {
  if (config.kind === 'local') {
    const { sharedDiskToken } = await import('../workers/storage/local-store.ts')
    try {
      return `local:${await sharedDiskToken(config.root)}`
    } catch (error) {
      throw new ConfigError(`Storage's folder ${config.root} cannot be used: ${(error as Error).message}`)
    }
  }
  const { checkS3Store } = await import('../workers/storage/s3-store.ts')
  try {
    await checkS3Store({ ...config, endpoint: config.endpoint })
  } catch (error) {
    throw new ConfigError(`Storage's S3 store cannot be used: ${(error as Error).message}`)
  }
  return `s3:${config.endpoint ?? 'aws'}/${config.bucket}/${config.prefix}`
}
