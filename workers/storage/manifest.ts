// Storage's doorway: Supabase Storage's routes under {base_url}/storage/v1, as
// storage-js and tus-js-client call them (shared/reference/storage.md). An
// object's key is the rest of the path (`:key` spans slashes). Public objects,
// signed URLs and signed uploads are opened without an apikey, as on Supabase:
// the bucket's `public` flag or the URL's token is what lets them through.
import type { ConcernManifest } from '../../lib/http/manifest.ts'

const KEY = { key: '.+' }

const routes = [
  { method: 'GET', path: '/bucket', name: 'listBuckets' },
  { method: 'POST', path: '/bucket', name: 'createBucket' },
  { method: 'GET', path: '/bucket/:id', name: 'getBucket' },
  { method: 'PUT', path: '/bucket/:id', name: 'updateBucket' },
  { method: 'DELETE', path: '/bucket/:id', name: 'deleteBucket' },
  { method: 'POST', path: '/bucket/:id/empty', name: 'emptyBucket' },

  { method: 'POST', path: '/object/list/:bucket', name: 'list' },
  { method: 'POST', path: '/object/list-v2/:bucket', name: 'listV2' },
  { method: 'POST', path: '/object/move', name: 'move' },
  { method: 'POST', path: '/object/copy', name: 'copy' },
  { method: 'POST', path: '/object/sign/:bucket', name: 'signMany' },
  { method: 'POST', path: '/object/sign/:bucket/:key', where: KEY, name: 'sign' },
  { method: 'GET', path: '/object/sign/:bucket/:key', where: KEY, name: 'signedDownload', open: true },
  { method: 'POST', path: '/object/upload/sign/:bucket/:key', where: KEY, name: 'signUpload' },
  { method: 'PUT', path: '/object/upload/sign/:bucket/:key', where: KEY, name: 'signedUpload', open: true, streamsBody: true },
  { method: 'GET', path: '/object/info/authenticated/:bucket/:key', where: KEY, name: 'info' },
  { method: 'GET', path: '/object/info/public/:bucket/:key', where: KEY, name: 'publicInfo', open: true },
  { method: 'GET', path: '/object/info/:bucket/:key', where: KEY, name: 'info' },
  { method: 'GET', path: '/object/public/:bucket/:key', where: KEY, name: 'publicDownload', open: true },
  { method: 'GET', path: '/object/authenticated/:bucket/:key', where: KEY, name: 'download' },
  { method: 'DELETE', path: '/object/:bucket', name: 'removeMany' },
  { method: 'GET', path: '/object/:bucket/:key', where: KEY, name: 'download' },
  { method: 'POST', path: '/object/:bucket/:key', where: KEY, name: 'upload', streamsBody: true },
  { method: 'PUT', path: '/object/:bucket/:key', where: KEY, name: 'update', streamsBody: true },
  { method: 'DELETE', path: '/object/:bucket/:key', where: KEY, name: 'removeOne' },

  { method: 'GET', path: '/render/image/authenticated/:bucket/:key', where: KEY, name: 'render' },
  { method: 'GET', path: '/render/image/public/:bucket/:key', where: KEY, name: 'publicRender', open: true },
  { method: 'GET', path: '/render/image/sign/:bucket/:key', where: KEY, name: 'signedRender', open: true },

  // TUS 1.0 (workers/storage/resumable.ts). tus-js-client sends the caller's token and no apikey, as Supabase's docs
  // set it up: opened without a key, the caller is the Bearer token's (data-plane.ts), or anon without one.
  { method: 'POST', path: '/upload/resumable', name: 'resumable', streamsBody: true, open: true },
  { method: 'GET', path: '/upload/resumable/:id', where: { id: '.+' }, name: 'resumable', open: true },
  { method: 'PATCH', path: '/upload/resumable/:id', where: { id: '.+' }, name: 'resumable', streamsBody: true, open: true },
  { method: 'DELETE', path: '/upload/resumable/:id', where: { id: '.+' }, name: 'resumable', open: true },
] as const satisfies ConcernManifest['routes']

export type StorageRouteName = (typeof routes)[number]['name']

export const storageManifest: ConcernManifest<StorageRouteName> = {
  concern: 'storage',
  prefix: '/storage/v1',
  routes,
  refusals: 'storage',
  streamsAnswers: true,
}
