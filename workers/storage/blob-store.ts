// Where an object's bytes live: local disk under the platform home on one
// node (local-store.ts), an S3-compatible store for a fleet (s3-store.ts).
// Storage's worker never names a path or a bucket of the backend itself: it
// hands keys of the form `<ref>/<version>` (a project ref and a uuid the
// platform made), so nothing an API caller or a project's owner writes can
// reach another project's bytes or leave the store's root.
import type { Readable } from 'node:stream'

/** What a written blob is, as the object's row records it (Supabase's `metadata.size` and `metadata.eTag`). */
export interface WrittenBlob {
  size: number
  /** The md5 of the bytes in hex, quoted as S3 quotes an ETag (`"…"`). */
  etag: string
}

/** A byte range, both ends inclusive (HTTP's `Range: bytes=start-end`). */
export interface ByteRange {
  start: number
  end: number
}

export interface BlobStore {
  /** `local` or `s3`: what the metrics and the docs name. */
  readonly kind: 'local' | 's3'
  /**
   * Writes `body` under `key`, streamed (never held whole), and resolves once
   * the bytes are durable. If `body` fails or ends early (a truncated upload,
   * a size limit the caller enforces by erroring the stream), the promise
   * rejects with that error and nothing is left under `key`.
   */
  put(key: string, body: AsyncIterable<Uint8Array>, contentType: string): Promise<WrittenBlob>
  /** The bytes under `key` (a range of them), streamed; rejects with BlobMissing when there are none. */
  get(key: string, range?: ByteRange): Promise<Readable>
  /** Copies `from` to `to` within the store, without passing the bytes through this process where the store can. */
  copy(from: string, to: string): Promise<void>
  /** Removes each key; a key that is already gone is not an error. */
  delete(keys: readonly string[]): Promise<void>
  /** Removes every key starting with `prefix` (a project's `<ref>/` when the project is deleted). */
  deletePrefix(prefix: string): Promise<void>
  /** Releases sockets and handles. */
  close(): Promise<void>
  /** Removes what writes that died with their process left half-made (local disk's temporary files); absent where the store cleans up itself. */
  sweepTemporary?(): Promise<unknown>
}

/** The store has no bytes under the key asked for. */
export class BlobMissing extends Error {
  readonly code = 'blob_missing'
  constructor(readonly key: string) {
    super(`no blob under ${key}`)
  }
}

/** The store did not answer, or answered with a failure, within its deadline: Storage answers 503 with Retry-After. */
export class BlobStoreUnavailable extends Error {
  readonly code = 'blob_store_unavailable'
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
  }
}

/**
 * Whether `error` is one of these, by its code: a store module may be loaded
 * apart from its caller's (a thread's dynamic import), where `instanceof`
 * would compare two copies of the class.
 */
export function isBlobMissing(error: unknown): error is BlobMissing {
  return (error as { code?: unknown } | null)?.code === 'blob_missing'
}

export function isStoreUnavailable(error: unknown): error is BlobStoreUnavailable {
  return (error as { code?: unknown } | null)?.code === 'blob_store_unavailable'
}
