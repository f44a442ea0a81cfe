// The admin API's Storage of a project (`/platform/v1/projects/{ref}/storage/...`):
// the operations of storage-admin.ts, as the CLI's `storage ...` and the
// dashboard's Storage tab use them.
import { platformErrors } from '../../lib/errors.ts'
import type { JsonObject } from '../../lib/http/body.ts'
import type { ControlPlane } from '../control-plane.ts'
import {
  createStorageBucket,
  listStorageBuckets,
  listStorageObjects,
  removeStorageObject,
  storagePolicies,
  storageUsage,
  updateStorageBucket,
  type BucketInput,
} from '../storage-admin.ts'
import { adminFields, queryNumber, REF_PARAM, type AdminRoute } from './route.ts'

/** A path parameter percent-decoded, a key's segments one by one (Storage's own checks of names and keys follow). */
function decoded(raw: string, name: string): string {
  try {
    return raw.split('/').map(decodeURIComponent).join('/')
  } catch {
    throw platformErrors.invalidArgument(`${name} is not a well-formed percent-encoded path`, name)
  }
}

/** The settings a body gives: absent ones stay as they are; null lifts a limit or a type list. */
function bucketInput(body: JsonObject): BucketInput {
  const fields = adminFields(body)
  const input: BucketInput = {}
  const isPublic = fields.optionalBoolean('public')
  if (isPublic !== undefined) input.public = isPublic
  if ('file_size_limit' in body) input.file_size_limit = body.file_size_limit as BucketInput['file_size_limit']
  if ('allowed_mime_types' in body) input.allowed_mime_types = body.allowed_mime_types as BucketInput['allowed_mime_types']
  return input
}

export function storageAdminRoutes(controlPlane: ControlPlane): AdminRoute[] {
  const bucket = { ...REF_PARAM, bucket: '[^/]+' }
  return [
    { method: 'GET', access: 'read', path: '/projects/:ref/storage/usage', where: REF_PARAM, handler: async ({ params }) => [200, await storageUsage(controlPlane, params.ref!)] },
    { method: 'GET', access: 'read', path: '/projects/:ref/storage/policies', where: REF_PARAM, handler: async ({ params }) => [200, await storagePolicies(controlPlane, params.ref!)] },
    { method: 'GET', access: 'read', path: '/projects/:ref/storage/buckets', where: REF_PARAM, handler: async ({ params }) => [200, await listStorageBuckets(controlPlane, params.ref!)] },
    {
      method: 'POST', access: 'write',
      path: '/projects/:ref/storage/buckets',
      where: REF_PARAM,
      handler: async ({ params, body }) => {
        const fields = await body()
        return [201, await createStorageBucket(controlPlane, params.ref!, adminFields(fields).string('name'), bucketInput(fields))]
      },
    },
    {
      method: 'PUT', access: 'write',
      path: '/projects/:ref/storage/buckets/:bucket',
      where: bucket,
      handler: async ({ params, body }) => [200, await updateStorageBucket(controlPlane, params.ref!, decoded(params.bucket!, 'bucket'), bucketInput(await body()))],
    },
    {
      method: 'GET', access: 'read',
      path: '/projects/:ref/storage/buckets/:bucket/objects',
      where: bucket,
      handler: async ({ params, query }) =>
        [
          200,
          await listStorageObjects(controlPlane, params.ref!, decoded(params.bucket!, 'bucket'), {
            prefix: query.get('prefix') ?? undefined,
            limit: queryNumber(query, 'limit'),
            offset: queryNumber(query, 'offset'),
          }),
        ],
    },
    {
      method: 'DELETE', access: 'write',
      path: '/projects/:ref/storage/buckets/:bucket/objects/:key',
      where: { ...bucket, key: '.+' },
      handler: async ({ params }) => {
        await removeStorageObject(controlPlane, params.ref!, decoded(params.bucket!, 'bucket'), decoded(params.key!, 'key'))
        return [204, null]
      },
    },
  ]
}
