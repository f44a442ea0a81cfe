// Image transformations (`/render/image/{authenticated,public,sign}/...`):
// the object read as its route allows (the caller's policies, a public bucket,
// a signed URL's token, whose transformations are the ones signed), rendered
// by image-transform.ts, and kept under `<ref>/render/<version>/<key>` so the
// same rendering is made once per version on any node; a new version of the
// object is a new folder, and a removed version's folder goes with it (blobs.ts).
import type { Readable } from 'node:stream'
import type { ServiceResponse } from '../../lib/service.ts'
import { isBlobMissing } from './blob-store.ts'
import { blobKey, VERSION_PATTERN } from './blobs.ts'
import { callerOf, streamed, type StorageCall } from './call.ts'
import { StorageApiError, storageErrors } from './errors.ts'
import { ImageTransformError, renderImage, transformKey, transformOptionsFrom, transformsOffered, type TransformOptions } from './image-transform.ts'
import { checkEgress, objectRow, paramsOf, publicObject, storeFailure, type ObjectRow } from './objects.ts'
import { verifyObject } from './signed-urls.ts'

/** Renderings one project runs at once in this thread: they take a libuv thread each, and a neighbour must find one free. */
const RENDERS_PER_PROJECT = 2
/** Renderings that may wait behind those; past them, 503 with Retry-After. */
const WAITING_PER_PROJECT = 16
const running = new Map<string, { active: number; waiting: Array<() => void> }>()

async function inTurn<T>(ref: string, work: () => Promise<T>): Promise<T> {
  let state = running.get(ref)
  if (state === undefined) running.set(ref, (state = { active: 0, waiting: [] }))
  if (state.active >= RENDERS_PER_PROJECT) {
    if (state.waiting.length >= WAITING_PER_PROJECT) {
      throw new StorageApiError('SlowDown', 'Too many requests', 'Too many image transformations at once; try again shortly', 503, 503, 1)
    }
    await new Promise<void>((resolve) => state.waiting.push(resolve))
  }
  state.active++
  try {
    return await work()
  } finally {
    state.active--
    const next = state.waiting.shift()
    if (next) next()
    else if (state.active === 0) running.delete(ref)
  }
}

/** What the first bytes of a rendering are: its type on the way out of the cache. */
function sniffed(head: Uint8Array): string {
  const text = Buffer.from(head.subarray(0, 16)).toString('latin1')
  if (text.startsWith('\x89PNG')) return 'image/png'
  if (head[0] === 0xff && head[1] === 0xd8) return 'image/jpeg'
  if (text.startsWith('GIF8')) return 'image/gif'
  if (text.startsWith('RIFF') && text.slice(8, 12) === 'WEBP') return 'image/webp'
  if (text.slice(4, 12) === 'ftypavif' || text.slice(4, 12) === 'ftypavis') return 'image/avif'
  if (text.startsWith('II*') || text.startsWith('MM\x00*')) return 'image/tiff'
  return 'image/svg+xml'
}

async function cached(call: StorageCall, key: string): Promise<{ type: string; body: AsyncIterable<Uint8Array> } | undefined> {
  let stream: Readable
  try {
    stream = await call.store.get(key)
  } catch (error) {
    if (isBlobMissing(error)) return undefined
    throw error
  }
  const iterator = stream[Symbol.asyncIterator]() as AsyncIterator<Uint8Array>
  const first = await iterator.next()
  if (first.done) return undefined
  return {
    type: sniffed(first.value),
    body: (async function* () {
      try {
        yield first.value
        for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value
      } finally {
        stream.destroy()
      }
    })(),
  }
}

function optionsOf(query: URLSearchParams): TransformOptions {
  try {
    return transformOptionsFrom(query)
  } catch (error) {
    if (error instanceof ImageTransformError) throw storageErrors.invalidRequest(error.message)
    throw error
  }
}

async function objectFor(call: StorageCall, access: 'authenticated' | 'public' | 'sign'): Promise<{ row: ObjectRow; options: TransformOptions }> {
  if (access === 'public') return { row: (await publicObject(call)).row, options: optionsOf(call.query) }
  const { bucket, key } = paramsOf(call)
  if (access === 'sign') {
    const claims = await verifyObject(call.project.jwtSecret, call.query.get('token'), bucket, key)
    const row = await call.database.asService((client) => objectRow(client, bucket, key))
    if (row === undefined) throw storageErrors.noSuchKey()
    // The signed transformations, not the URL's: a token signed for a thumbnail renders a thumbnail.
    return { row, options: optionsOf(new URLSearchParams(claims.transformations ?? '')) }
  }
  const row = await call.database.asCaller(callerOf(call), (client) => objectRow(client, bucket, key))
  if (row === undefined) throw storageErrors.noSuchKey()
  return { row, options: optionsOf(call.query) }
}

export async function render(call: StorageCall, access: 'authenticated' | 'public' | 'sign'): Promise<ServiceResponse> {
  if (!transformsOffered(call.project.plan)) throw storageErrors.featureNotEnabled('Image transformation', call.project.plan)
  checkEgress(call)
  const { row, options } = await objectFor(call, access)
  if (row.version === null || !VERSION_PATTERN.test(row.version)) throw storageErrors.noSuchKey()
  const accept = call.request.headers.accept
  const headers: Record<string, string> = { 'cache-control': String(row.metadata?.cacheControl ?? 'no-cache') }
  // Without a format asked for, the answer depends on Accept (WebP for those who take it).
  if (options.format === 'auto') headers.vary = 'Accept'
  const key = `${blobKey(call.project.ref, 'render')}/${row.version}/${transformKey(options, accept)}`
  const hit = await cached(call, key).catch(storeFailure)
  if (hit !== undefined) return streamed(call, 200, { ...headers, 'content-type': hit.type }, hit.body, undefined)
  const rendered = await inTurn(call.project.ref, async () => {
    const source = await call.store.get(blobKey(call.project.ref, row.version!)).catch(storeFailure)
    try {
      return await renderImage(source, options, accept, String(row.metadata?.mimetype ?? 'application/octet-stream'))
    } catch (error) {
      if (error instanceof ImageTransformError) throw storageErrors.invalidRequest(error.message)
      throw error
    } finally {
      source.destroy()
    }
  })
  // Kept for the next ask; a store that fails here costs only the cache.
  await call.store.put(key, (async function* () { yield rendered.body })(), rendered.contentType).catch(() => {})
  return streamed(call, 200, { ...headers, 'content-type': rendered.contentType }, (async function* () { yield rendered.body })(), rendered.body.byteLength)
}
