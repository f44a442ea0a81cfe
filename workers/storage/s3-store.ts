// The byte backend of a fleet: an S3-compatible object store (AWS S3, MinIO,
// Ceph, R2, ...) that every node reaches. Uploads are streamed as multipart
// uploads of bounded parts; every round trip has a deadline, and a store that
// is slow, down or failing rejects with BlobStoreUnavailable (Storage's 503)
// instead of holding a request open.
import { createHash, randomBytes } from 'node:crypto'
import { Agent as HttpAgent } from 'node:http'
import { Agent as HttpsAgent } from 'node:https'
import { Readable } from 'node:stream'
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3'
import { Upload } from '@aws-sdk/lib-storage'
import { NodeHttpHandler } from '@smithy/node-http-handler'
import { BlobMissing, BlobStoreUnavailable, type BlobStore, type ByteRange, type WrittenBlob } from './blob-store.ts'
import { keySegments, prefixSegments } from './local-store.ts'

export interface S3StoreConfig {
  /** The store's URL (`https://s3.example.net`, `http://127.0.0.1:9000`); AWS's own endpoint for `region` when left out. */
  endpoint?: string
  region: string
  bucket: string
  accessKeyId: string
  secretAccessKey: string
  /** `https://endpoint/bucket/key` rather than `https://bucket.endpoint/key`: what most self-hosted stores need. */
  forcePathStyle?: boolean
  /** Put before every key (`baseplane/`), so one bucket can hold other things too. */
  prefix?: string
  /** The deadline of each round trip: to connect, to get an answer, and of any pause while bytes stream (30 s). */
  timeoutMillis?: number
  /** Keys per listing page and per DeleteObjects call: S3's most, 1000, unless a test wants pages. */
  batchSize?: number
}

const DEFAULT_TIMEOUT_MILLIS = 30_000
/** Each part is held in memory while it is sent: S3's smallest part, so an upload holds about (queue + 1) parts. */
const PART_SIZE = 5 * 1024 * 1024
/** Parts in flight per upload: enough to overlap reading the body with sending, few enough to bound memory. */
const QUEUE_SIZE = 2
/** A failed round trip is tried this often in all (the SDK's default), so a store answers within about 3 deadlines plus backoff. */
const MAX_ATTEMPTS = 3
const MAX_BATCH = 1000

export class S3BlobStore implements BlobStore {
  readonly kind = 's3' as const
  readonly #client: S3Client
  readonly #bucket: string
  readonly #prefix: string
  readonly #batchSize: number

  constructor(config: S3StoreConfig) {
    this.#client = s3Client(config)
    this.#bucket = config.bucket
    this.#prefix = normalisedPrefix(config.prefix)
    this.#batchSize = Math.min(MAX_BATCH, Math.max(1, config.batchSize ?? MAX_BATCH))
  }

  async put(key: string, body: AsyncIterable<Uint8Array>, contentType: string): Promise<WrittenBlob> {
    const objectKey = this.#objectKey(key)
    // A multipart upload's ETag is not the md5 of the bytes (it is one of the parts' md5s), so ours is counted here.
    const digest = createHash('md5')
    let size = 0
    let bodyError: { error: unknown } | undefined
    async function* metered(): AsyncGenerator<Buffer> {
      try {
        for await (const chunk of body) {
          digest.update(chunk)
          size += chunk.byteLength
          yield Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
        }
      } catch (error) {
        bodyError = { error }
        throw error
      }
    }
    const source = Readable.from(metered(), { objectMode: false })
    const upload = new Upload({
      client: this.#client,
      params: { Bucket: this.#bucket, Key: objectKey, Body: source, ContentType: contentType },
      partSize: PART_SIZE,
      queueSize: QUEUE_SIZE,
      // On any failure Upload aborts the multipart upload, so no parts are left behind to be billed.
      leavePartsOnError: false,
    })
    try {
      await upload.done()
    } catch (error) {
      // The body stops being read (its iterator is returned), whichever side failed.
      source.destroy()
      // The caller's own failure comes back as it is, even when the abort that followed it failed too.
      if (bodyError !== undefined) throw bodyError.error
      throw storeError(error, 'PutObject', key)
    }
    return { size, etag: `"${digest.digest('hex')}"` }
  }

  async get(key: string, range?: ByteRange): Promise<Readable> {
    const Range = range === undefined ? undefined : `bytes=${checkedRange(range)}`
    const answer = await this.#client.send(new GetObjectCommand({ Bucket: this.#bucket, Key: this.#objectKey(key), Range })).catch((error: unknown) => {
      throw storeError(error, 'GetObject', key)
    })
    // In Node the SDK's body is the response itself (an IncomingMessage), whose socket keeps the
    // deadline while it streams: a store that stalls midway fails the stream rather than hanging it.
    if (!(answer.Body instanceof Readable)) throw new Error(`s3 store: GetObject ${key} answered no readable body`)
    return answer.Body
  }

  async copy(from: string, to: string): Promise<void> {
    const source = this.#objectKey(from)
    const CopySource = `${encodeURIComponent(this.#bucket)}/${source.split('/').map(encodeURIComponent).join('/')}`
    await this.#client.send(new CopyObjectCommand({ Bucket: this.#bucket, Key: this.#objectKey(to), CopySource })).catch((error: unknown) => {
      throw storeError(error, 'CopyObject', from)
    })
  }

  async delete(keys: readonly string[]): Promise<void> {
    // Every key is checked before any goes, so a bad key deletes nothing.
    await this.#deleteObjects(keys.map((key) => this.#objectKey(key)))
  }

  async deletePrefix(prefix: string): Promise<void> {
    const Prefix = this.#prefix + prefixSegments(prefix).join('/') + '/'
    let ContinuationToken: string | undefined
    // Each page is deleted before the next is asked for: the listing goes on after the last key it
    // returned, so keys already deleted do not shift it, and memory holds one page at a time.
    do {
      const page = await this.#client
        .send(new ListObjectsV2Command({ Bucket: this.#bucket, Prefix, ContinuationToken, MaxKeys: this.#batchSize }))
        .catch((error: unknown) => {
          throw storeError(error, 'ListObjectsV2', prefix)
        })
      const keys = (page.Contents ?? []).map((object) => object.Key).filter((key): key is string => key !== undefined)
      await this.#deleteObjects(keys)
      ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined
    } while (ContinuationToken !== undefined)
  }

  async close(): Promise<void> {
    this.#client.destroy()
  }

  #objectKey(key: string): string {
    return this.#prefix + keySegments(key).join('/')
  }

  async #deleteObjects(objectKeys: readonly string[]): Promise<void> {
    for (let next = 0; next < objectKeys.length; next += this.#batchSize) {
      const batch = objectKeys.slice(next, next + this.#batchSize)
      const answer = await this.#client
        .send(new DeleteObjectsCommand({ Bucket: this.#bucket, Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true } }))
        .catch((error: unknown) => {
          throw storeError(error, 'DeleteObjects', batch[0] ?? '')
        })
      // DeleteObjects answers 200 with the keys it could not delete listed; a key already gone is not among them on S3.
      const failed = (answer.Errors ?? []).filter((entry) => entry.Code !== 'NoSuchKey')
      if (failed.length > 0) {
        const first = failed[0]!
        throw new BlobStoreUnavailable(`s3 store: DeleteObjects left ${failed.length} key(s), first ${first.Key}: ${first.Code} ${first.Message ?? ''}`.trim())
      }
    }
  }
}

/**
 * Checks at start that the store can be used: the bucket answers and a small
 * object can be written and deleted again. Throws an Error naming the step, the
 * bucket and the endpoint, so an operator sees what to fix before any upload fails.
 */
export async function checkS3Store(config: S3StoreConfig): Promise<void> {
  const client = s3Client(config)
  const where = `bucket ${JSON.stringify(config.bucket)} at ${config.endpoint ?? `AWS S3 (${config.region})`}`
  const probe = `${normalisedPrefix(config.prefix)}.baseplane-probe-${randomBytes(8).toString('hex')}`
  const step = async (doing: string, run: () => Promise<unknown>): Promise<void> => {
    try {
      await run()
    } catch (error) {
      throw new Error(`S3 store check failed: ${doing} ${where}: ${describe(error)}${checkHint(error)}`, { cause: error })
    }
  }
  try {
    await step('could not reach', () => client.send(new HeadBucketCommand({ Bucket: config.bucket })))
    await step('could not write a probe object to', () => client.send(new PutObjectCommand({ Bucket: config.bucket, Key: probe, Body: 'baseplane probe' })))
    await step('could not delete the probe object from', () => client.send(new DeleteObjectCommand({ Bucket: config.bucket, Key: probe })))
  } finally {
    client.destroy()
  }
}

/** What an operator does about the usual failures of the start check. */
function checkHint(error: unknown): string {
  if (!(error instanceof S3ServiceException)) return ' (is the endpoint right, and the store up?)'
  const status = error.$metadata.httpStatusCode
  if (error.name === 'NoSuchBucket' || status === 404) return ' (the bucket does not exist: create it, or correct the name)'
  if (status === 403 || status === 401) return ' (access denied: check the access key, the secret and the bucket\'s policy)'
  return ''
}

function s3Client(config: S3StoreConfig): S3Client {
  const timeout = config.timeoutMillis ?? DEFAULT_TIMEOUT_MILLIS
  if (!Number.isFinite(timeout) || timeout <= 0) throw new Error(`s3 store: timeoutMillis must be a positive number, not ${timeout}`)
  const agent = { keepAlive: true, maxSockets: 64 }
  return new S3Client({
    endpoint: config.endpoint,
    region: config.region,
    forcePathStyle: config.forcePathStyle ?? false,
    credentials: { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey },
    maxAttempts: MAX_ATTEMPTS,
    // The SDK's default (a CRC32 trailer on every upload, sent aws-chunked) is not understood by many
    // S3-compatible stores, some of which then store the chunk framing as the bytes. Checksums are sent
    // where an operation requires them; the md5 of what was read is ours either way.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler: new NodeHttpHandler({
      connectionTimeout: timeout,
      // Until the answer's headers: without throwOnRequestTimeout the handler only warns.
      requestTimeout: timeout,
      throwOnRequestTimeout: true,
      // Any pause of the socket, including while a body streams after the headers.
      socketTimeout: timeout,
      httpAgent: new HttpAgent(agent),
      httpsAgent: new HttpsAgent(agent),
    }),
  })
}

/** `baseplane` and `/baseplane/` alike become `baseplane/`; none stays none. */
function normalisedPrefix(prefix: string | undefined): string {
  const trimmed = (prefix ?? '').replace(/^\/+|\/+$/g, '')
  return trimmed === '' ? '' : `${trimmed}/`
}

function checkedRange(range: ByteRange): string {
  if (!Number.isSafeInteger(range.start) || !Number.isSafeInteger(range.end) || range.start < 0 || range.end < range.start) {
    throw new RangeError(`invalid byte range ${range.start}-${range.end}`)
  }
  return `${range.start}-${range.end}`
}

/** Missing-object answers: S3's NoSuchKey, and a 404 with no code (HEAD answers carry no body). */
const MISSING = new Set(['NoSuchKey', 'NotFound'])

/**
 * What a failed round trip means to Storage. A key that is not there is
 * BlobMissing; a range past the end is a RangeError (as the local store's);
 * everything else — a deadline passed, a refused or reset connection, a 5xx,
 * throttling, and also a store that refuses our credentials or has no such
 * bucket (misconfiguration no request can fix) — is the store being unavailable.
 */
function storeError(error: unknown, operation: string, key: string): Error {
  if (error instanceof S3ServiceException) {
    const status = error.$metadata.httpStatusCode
    if (MISSING.has(error.name) || (status === 404 && error.name !== 'NoSuchBucket')) return new BlobMissing(key)
    if (error.name === 'InvalidRange' || status === 416) return new RangeError(`s3 store: ${operation} ${key}: the range starts past the blob's end`)
  }
  return new BlobStoreUnavailable(`s3 store: ${operation} ${key}: ${describe(error)}`, { cause: error })
}

function describe(error: unknown): string {
  if (error instanceof S3ServiceException) {
    const status = error.$metadata.httpStatusCode
    const message = error.message && error.message !== 'UnknownError' ? `: ${error.message}` : ''
    return `${error.name}${status === undefined ? '' : ` (HTTP ${status})`}${message}`
  }
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code
    return `${error.name}${typeof code === 'string' && code !== error.name ? ` ${code}` : ''}: ${error.message}`
  }
  return String(error)
}
