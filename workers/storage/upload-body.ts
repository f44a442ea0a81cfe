// An upload's bytes and what comes with them, as storage-js sends them: a raw
// body (its Content-Type, `cache-control: max-age=N`, `x-metadata` as base64
// JSON) or a multipart form (fields `cacheControl`, `metadata`, then the file,
// whose part names its type). Streamed: the file's bytes are read as the
// store takes them, never gathered.
import { Readable } from 'node:stream'
import busboy from 'busboy'
import { BaseplaneError } from '../../lib/errors.ts'
import { storageErrors } from './errors.ts'

export interface UploadSource {
  body: AsyncIterable<Uint8Array>
  contentType: string
  cacheControl: string
  userMetadata: Record<string, unknown> | null
}

const DEFAULT_TYPE = 'text/plain;charset=UTF-8'

/** `3600` (storage-js's form field) or `max-age=3600` (its header): stored as the header Supabase serves. */
export function cacheControlOf(value: string | undefined): string {
  const text = (value ?? '').trim()
  if (text === '') return 'no-cache'
  return /^\d+$/.test(text) ? `max-age=${text}` : text
}

function metadataOf(text: string | undefined, encoded: boolean): Record<string, unknown> | null {
  if (text === undefined || text === '') return null
  try {
    const value: unknown = JSON.parse(encoded ? Buffer.from(text, 'base64').toString('utf8') : text)
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error('not an object')
    return value as Record<string, unknown>
  } catch {
    throw storageErrors.invalidRequest('metadata must be a JSON object')
  }
}

/** How long an upload may send nothing before it is given up: a stalled client must not hold its slot for ever. */
export const UPLOAD_IDLE_MS = 30_000

/**
 * Passes the bytes through, counting them: past `limit`, EntityTooLarge; short
 * of a declared length, an incomplete upload; nothing for UPLOAD_IDLE_MS, a stalled one.
 */
export async function* sized(
  body: AsyncIterable<Uint8Array>,
  limit: number,
  declared: number | undefined,
  seen: { bytes: number },
  idleMs = UPLOAD_IDLE_MS,
  tooLarge: () => Error = storageErrors.entityTooLarge,
): AsyncGenerator<Uint8Array> {
  const chunks = body[Symbol.asyncIterator]()
  try {
    for (;;) {
      let timer: NodeJS.Timeout | undefined
      const stalled = new Promise<never>((_resolve, reject) => {
        timer = setTimeout(() => reject(storageErrors.uploadStalled(idleMs)), idleMs)
      })
      let next: IteratorResult<Uint8Array>
      try {
        next = await Promise.race([chunks.next(), stalled])
      } catch (error) {
        // The body itself failed (a form cut short, the connection gone): the upload is incomplete, in Storage's words.
        if (BaseplaneError.is(error)) throw error
        throw storageErrors.truncated((error as Error).message ?? String(error))
      } finally {
        clearTimeout(timer)
      }
      if (next.done) break
      seen.bytes += next.value.byteLength
      if (seen.bytes > limit) throw tooLarge()
      yield next.value
    }
  } finally {
    await chunks.return?.()
  }
  if (declared !== undefined && seen.bytes !== declared) throw storageErrors.truncated(`${seen.bytes} of ${declared} bytes arrived`)
}

export async function uploadSource(headers: Record<string, string>, body: AsyncIterable<Uint8Array>): Promise<UploadSource> {
  const type = headers['content-type'] ?? ''
  if (!/^multipart\/form-data/i.test(type)) {
    return {
      body,
      contentType: type === '' ? DEFAULT_TYPE : type,
      cacheControl: cacheControlOf(headers['cache-control']),
      userMetadata: metadataOf(headers['x-metadata'], true),
    }
  }
  return multipartSource(headers, body)
}

/** The form's fields before its first file, then that file's bytes as they arrive; a form with no file is refused. */
function multipartSource(headers: Record<string, string>, body: AsyncIterable<Uint8Array>): Promise<UploadSource> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy
    try {
      parser = busboy({ headers, limits: { files: 1, fields: 20, fieldSize: 64 * 1024 } })
    } catch (error) {
      reject(storageErrors.invalidRequest(`the multipart form cannot be read: ${(error as Error).message}`))
      return
    }
    const fields: Record<string, string> = {}
    let file: Readable | undefined
    let failed: Error | undefined
    parser.on('field', (name, value) => {
      fields[name] = value
    })
    parser.on('file', (_name, stream, info) => {
      if (file !== undefined) {
        stream.resume()
        return
      }
      file = stream
      // Its reader listens while it reads; once it stopped (a refused upload), a late failure has no one to tell.
      stream.on('error', () => {})
      try {
        resolve({
          body: stream,
          contentType: fields.contentType || info.mimeType || DEFAULT_TYPE,
          cacheControl: cacheControlOf(fields.cacheControl),
          userMetadata: metadataOf(fields.metadata, false),
        })
      } catch (error) {
        reject(error)
        stream.resume()
      }
    })
    const fail = (error: Error) => {
      failed ??= error
      if (file === undefined) reject(failed)
      else if (!file.destroyed) file.destroy(failed)
    }
    parser.on('error', (error: Error) => fail(storageErrors.truncated(error.message)))
    parser.on('close', () => {
      if (file === undefined) reject(failed ?? storageErrors.invalidRequest('the multipart form carries no file'))
    })
    // Fed as the file's reader takes it: busboy's write answers false while its file stream is full.
    void (async () => {
      try {
        for await (const chunk of body) {
          if (failed !== undefined) return
          if (!parser.write(chunk)) await new Promise((drained) => parser.once('drain', drained))
        }
        parser.end()
      } catch (error) {
        fail(error as Error)
      }
    })()
  })
}
