// Storage's Piscina task: {base_url}/storage/v1 routed (manifest.ts's table)
// to its handlers. Bodies of uploads arrive through the request's body port and
// stored bytes go back through its reply port (lib/port-stream.ts), so neither
// is ever held whole in this thread or copied on the way.
import { LRUCache } from 'lru-cache'
import { BaseplaneError } from '../../lib/errors.ts'
import { Router } from '../../lib/http/router.ts'
import { log } from '../../lib/log.ts'
import type { ServiceHandler, ServiceRequest, ServiceResponse, StorageBackendConfig, StorageProjectContext } from '../../lib/service.ts'
import { workerSection } from '../../lib/worker-context.ts'
import { openBlobStore } from './backend.ts'
import type { BlobStore } from './blob-store.ts'
import { collect } from './blobs.ts'
import { createBucket, deleteBucket, emptyBucket, getBucket, listBuckets, updateBucket } from './buckets.ts'
import { closePorts, type StorageCall } from './call.ts'
import { StorageDatabase } from './database.ts'
import { storageErrorResponse, storageErrors } from './errors.ts'
import { list, listV2 } from './listing.ts'
import { storageManifest, type StorageRouteName } from './manifest.ts'
import { copy, download, info, move, publicDownload, removeMany, removeOne, upload } from './objects.ts'
import { render } from './render.ts'
import { resumable } from './resumable.ts'
import { sign, signedDownload, signMany, signedUpload, signUpload } from './signing.ts'

type Handler = (call: StorageCall) => Promise<ServiceResponse>

const handlers: Record<StorageRouteName, Handler> = {
  listBuckets,
  createBucket,
  getBucket,
  updateBucket,
  deleteBucket,
  emptyBucket,
  list,
  listV2,
  move,
  copy,
  sign,
  signMany,
  signedDownload,
  signUpload,
  signedUpload,
  info: (call) => info(call, false),
  publicInfo: (call) => info(call, true),
  download,
  publicDownload,
  upload: (call) => upload(call, 'create'),
  update: (call) => upload(call, 'update'),
  removeMany,
  removeOne,
  render: (call) => render(call, 'authenticated'),
  publicRender: (call) => render(call, 'public'),
  signedRender: (call) => render(call, 'sign'),
  resumable,
}

const router = new Router(storageManifest.routes)

/** How often a project's garbage is looked for, at most, while it is used. */
const COLLECT_EVERY_MS = 10 * 60 * 1000

/** How often the store's half-made writes are looked for (local disk: a write whose process died leaves a temporary file). */
const SWEEP_EVERY_MS = 60 * 60 * 1000

export function createStorageHandler(store: BlobStore): ServiceHandler<StorageProjectContext> {
  if (store.sweepTemporary !== undefined) {
    const sweep = () => void store.sweepTemporary!().catch((error: unknown) => log.error('sweeping the store\'s temporary files failed', error))
    sweep()
    setInterval(sweep, SWEEP_EVERY_MS).unref()
  }
  const databases = new LRUCache<string, StorageDatabase>({ max: 2000 })
  const collected = new LRUCache<string, number>({ max: 10000 })

  function databaseOf(project: StorageProjectContext): StorageDatabase {
    const key = `${project.ref}:${project.version}`
    let database = databases.get(key)
    if (database === undefined) databases.set(key, (database = new StorageDatabase(project)))
    return database
  }

  /** The project's garbage, collected in the background once in a while (blobs.ts collect). */
  function collectSometimes(project: StorageProjectContext, database: StorageDatabase): void {
    const last = collected.get(project.ref)
    if (last !== undefined && Date.now() - last < COLLECT_EVERY_MS) return
    collected.set(project.ref, Date.now())
    collect(database, store, project.ref).catch((error: unknown) => log.error('storage garbage collection failed', error, { ref: project.ref }))
  }

  return async function handleStorage(request: ServiceRequest<StorageProjectContext>): Promise<ServiceResponse> {
    const match = router.match(request.method, request.path)
    let call: StorageCall | undefined
    let answer: ServiceResponse | undefined
    try {
      if (match.kind !== 'found') throw storageErrors.notFound(request.method, request.path)
      const database = databaseOf(request.project)
      call = { request, project: request.project, database, store, params: match.params, query: new URLSearchParams(request.query) }
      answer = await handlers[match.route.name](call)
      collectSometimes(request.project, database)
      return answer
    } catch (error) {
      if (BaseplaneError.is(error)) return storageErrorResponse(error)
      log.error('storage request failed', error, { ref: request.project.ref, method: request.method, path: request.path })
      return storageErrorResponse(storageErrors.internal())
    } finally {
      if (call !== undefined) closePorts(call, answer)
      else {
        request.bodyPort?.close()
        request.replyPort?.close()
      }
    }
  }
}

let handler: Promise<ServiceHandler<StorageProjectContext>> | undefined

/** Piscina entry: the store is opened once per thread, from the node's one Storage setting. */
const handle: ServiceHandler<StorageProjectContext> = async (request) => {
  handler ??= openBlobStore(workerSection('storage') as StorageBackendConfig).then(createStorageHandler)
  return (await handler)(request)
}

export default handle
