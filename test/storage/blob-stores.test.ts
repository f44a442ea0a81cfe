// The byte backends of Storage (workers/storage/blob-store.ts's contract), one
// conformance suite run against both: the local disk store and the S3 store
// (against an in-process S3-protocol server, test/helpers/s3-server.ts). Bytes
// come back whole and in ranges with our md5 as ETag, a 12 MB body streams
// through without being held, a body that fails midway leaves nothing (no
// temporary file on disk, no multipart upload left open on S3), copies,
// deletes and prefix deletes touch exactly what they name, and keys that are
// not Storage's are refused. Then what only one backend has: the local store's
// sweep of dead temporary files and its shared-disk marker; the S3 store's
// deadlines (a store that never answers, refuses or fails is
// BlobStoreUnavailable, in time) and its start check.
import { createHash, randomBytes } from 'node:crypto'
import { mkdtemp, mkdir, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import type { Readable } from 'node:stream'
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3'
import t, { type Test } from 'tap'
import { BlobMissing, BlobStoreUnavailable, type BlobStore } from '../../workers/storage/blob-store.ts'
import { LocalBlobStore, sharedDiskToken } from '../../workers/storage/local-store.ts'
import { checkS3Store, S3BlobStore, type S3StoreConfig } from '../../workers/storage/s3-store.ts'
import { startS3Server, type TestS3Server } from '../helpers/s3-server.ts'
import { silentServer } from '../helpers/silent-server.ts'

const MiB = 1024 * 1024

/** What `promise` rejected with; fails the test when it resolved. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error('expected a rejection, got a result')
}

/** Asserts that `error` is BlobMissing for `key`. */
function isMissing(t: Test, error: unknown, key: string): void {
  t.ok(error instanceof BlobMissing, `BlobMissing, got ${String(error)}`)
  t.equal((error as BlobMissing).key, key)
  t.equal((error as BlobMissing).code, 'blob_missing')
}

async function* chunksOf(...parts: Array<string | Uint8Array>): AsyncGenerator<Uint8Array> {
  for (const part of parts) yield typeof part === 'string' ? Buffer.from(part) : part
}

/**
 * `total` random bytes in chunks of 64 KiB, made as they are read (never held
 * whole), hashed as they go: `md5()` is the digest of what was handed out.
 * When `failAt` is given, the body throws `failure` once that much was read.
 */
function generatedBody(total: number, options: { failAt?: number; failure?: Error } = {}) {
  const digest = createHash('md5')
  let handedOut = 0
  async function* body(): AsyncGenerator<Uint8Array> {
    while (handedOut < total) {
      if (options.failAt !== undefined && handedOut >= options.failAt) throw options.failure ?? new Error('body failed')
      const chunk = randomBytes(Math.min(64 * 1024, total - handedOut))
      digest.update(chunk)
      handedOut += chunk.length
      yield chunk
    }
  }
  let hex: string | undefined
  return { body: body(), md5: () => (hex ??= digest.digest('hex')), handedOut: () => handedOut }
}

/** Reads a stream to its end, without keeping it: size and md5. */
async function measure(stream: Readable): Promise<{ size: number; md5: string }> {
  const digest = createHash('md5')
  let size = 0
  for await (const chunk of stream) {
    digest.update(chunk as Buffer)
    size += (chunk as Buffer).length
  }
  return { size, md5: digest.digest('hex') }
}

async function bytesOf(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of stream) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

const md5 = (bytes: Uint8Array | string) => createHash('md5').update(bytes).digest('hex')

/** A fresh project ref per test, so that tests sharing a store never see one another's keys. */
const newRef = () => `ref${randomBytes(6).toString('hex')}`
const newId = () => crypto.randomUUID()

interface Backend {
  name: 'local' | 's3'
  store: BlobStore
  /** Asserts that a failed put left no trace of its own (temporary files, open multipart uploads). */
  nothingLeftBehind(t: Test, message: string): Promise<void>
}

async function localBackend(t: Test): Promise<Backend & { root: string; store: LocalBlobStore }> {
  const home = await mkdtemp(path.join(os.tmpdir(), 'baseplane-blobs-'))
  t.teardown(() => rm(home, { recursive: true, force: true }))
  const root = path.join(home, 'storage')
  const store = new LocalBlobStore(root)
  return {
    name: 'local',
    store,
    root,
    nothingLeftBehind: async (t, message) => {
      const left = await readdir(path.join(root, '.tmp')).catch(() => [])
      t.same(left, [], message)
    },
  }
}

let s3Server: TestS3Server | undefined
async function s3ServerOnce(): Promise<TestS3Server> {
  if (s3Server === undefined) {
    s3Server = await startS3Server()
    t.teardown(() => s3Server?.stop())
  }
  return s3Server
}

function configOf(server: TestS3Server, extra: Partial<S3StoreConfig> = {}): S3StoreConfig {
  const { endpoint, bucket, region, accessKeyId, secretAccessKey, forcePathStyle } = server
  return { endpoint, bucket, region, accessKeyId, secretAccessKey, forcePathStyle, timeoutMillis: 10_000, ...extra }
}

async function s3Backend(t: Test, extra: Partial<S3StoreConfig> = {}): Promise<Backend & { server: TestS3Server; store: S3BlobStore }> {
  const server = await s3ServerOnce()
  const store = new S3BlobStore(configOf(server, extra))
  t.teardown(() => store.close())
  return {
    name: 's3',
    store,
    server,
    nothingLeftBehind: async (t, message) => {
      t.equal(server.openUploads(), 0, message)
    },
  }
}

const backends: Array<{ name: string; make: (t: Test) => Promise<Backend> }> = [
  { name: 'local', make: localBackend },
  { name: 's3', make: (t) => s3Backend(t) },
]

for (const { name, make } of backends) {
  t.test(`${name} store: the contract`, async (t) => {
    t.test('put, then the bytes back whole and in ranges, with the md5 as ETag and the size', async (t) => {
      const { store } = await make(t)
      const key = `${newRef()}/${newId()}`
      const bytes = randomBytes(1000)
      const written = await store.put(key, chunksOf(bytes.subarray(0, 10), bytes.subarray(10, 600), bytes.subarray(600)), 'application/octet-stream')
      t.same(written, { size: 1000, etag: `"${md5(bytes)}"` })
      t.same(await bytesOf(await store.get(key)), bytes, 'whole')
      t.same(await bytesOf(await store.get(key, { start: 0, end: 0 })), bytes.subarray(0, 1), 'the first byte')
      t.same(await bytesOf(await store.get(key, { start: 100, end: 199 })), bytes.subarray(100, 200), 'a range inside, both ends inclusive')
      t.same(await bytesOf(await store.get(key, { start: 999, end: 999 })), bytes.subarray(999), 'the last byte')
      t.same(await bytesOf(await store.get(key, { start: 900, end: 5000 })), bytes.subarray(900), 'an end past the blob stops at its end')
      const past = await rejection(store.get(key, { start: 1000, end: 1100 }))
      t.ok(past instanceof RangeError, `a start past the end is a RangeError, got ${String(past)}`)
      const inverted = await rejection(store.get(key, { start: 10, end: 9 }))
      t.ok(inverted instanceof RangeError, `an end before the start is a RangeError, got ${String(inverted)}`)
      t.match((inverted as Error).message, /invalid byte range 10-9/)
    })

    t.test('an empty body is an empty blob', async (t) => {
      const { store } = await make(t)
      const key = `${newRef()}/${newId()}`
      t.same(await store.put(key, chunksOf(), 'text/plain'), { size: 0, etag: `"${md5('')}"` })
      t.same(await bytesOf(await store.get(key)), Buffer.alloc(0))
    })

    t.test('a missing key: get rejects BlobMissing naming the key', async (t) => {
      const { store } = await make(t)
      const key = `${newRef()}/${newId()}`
      isMissing(t, await rejection(store.get(key)), key)
      isMissing(t, await rejection(store.get(key, { start: 0, end: 10 })), key)
    })

    t.test('a key that is only the folder of deeper keys, or runs through a blob, holds nothing', async (t) => {
      const { store } = await make(t)
      const ref = newRef()
      const id = newId()
      const deep = `${ref}/render/${id}/w100`
      const blob = `${ref}/${newId()}`
      await store.put(deep, chunksOf('deep'), 'text/plain')
      await store.put(blob, chunksOf('blob'), 'text/plain')
      for (const key of [`${ref}/render`, `${ref}/render/${id}`, `${blob}/below`]) {
        isMissing(t, await rejection(store.get(key)), key)
        isMissing(t, await rejection(store.copy(key, `${ref}/${newId()}`)), key)
        await store.delete([key])
      }
      t.equal((await bytesOf(await store.get(deep))).toString(), 'deep', 'deleting the folder\'s key left the blob in it')
      t.equal((await bytesOf(await store.get(blob))).toString(), 'blob')
    })

    t.test('a 12 MB body streams through: size and md5 right, read back alike', async (t) => {
      const backend = await make(t)
      const key = `${newRef()}/${newId()}`
      const total = 12 * MiB + 12345
      const body = generatedBody(total)
      const begun = backend.name === 's3' ? (backend as Awaited<ReturnType<typeof s3Backend>>).server.uploadsBegun() : 0
      const written = await backend.store.put(key, body.body, 'video/mp4')
      t.same(written, { size: total, etag: `"${body.md5()}"` }, 'our md5, not the store\'s multipart ETag')
      t.same(await measure(await backend.store.get(key)), { size: total, md5: body.md5() })
      const tail = await measure(await backend.store.get(key, { start: total - 5 * MiB, end: total - 1 }))
      t.equal(tail.size, 5 * MiB, 'a range across parts')
      if (backend.name === 's3') {
        const server = (backend as Awaited<ReturnType<typeof s3Backend>>).server
        t.equal(server.uploadsBegun() - begun, 1, 'sent as one multipart upload')
      }
      await backend.nothingLeftBehind(t, 'nothing left behind')
    })

    t.test('a body that fails midway: the put rejects with its error and leaves nothing under the key', async (t) => {
      const backend = await make(t)
      for (const [label, total, failAt] of [
        ['early (before a first part is full)', 3 * MiB, 1 * MiB],
        ['late (after a first part was sent)', 12 * MiB, 7 * MiB],
      ] as const) {
        const key = `${newRef()}/${newId()}`
        const failure = new Error(`upload cut ${label}`)
        const body = generatedBody(total, { failAt, failure })
        const begun = backend.name === 's3' ? (backend as Awaited<ReturnType<typeof s3Backend>>).server.uploadsBegun() : 0
        t.equal(await rejection(backend.store.put(key, body.body, 'application/octet-stream')), failure, `${label}: the body's own error`)
        t.ok(body.handedOut() >= failAt, `${label}: the body was read up to its failure`)
        isMissing(t, await rejection(backend.store.get(key)), key)
        await backend.nothingLeftBehind(t, `${label}: no temporary file, no open multipart upload`)
        if (backend.name === 's3' && failAt > 5 * MiB) {
          const server = (backend as Awaited<ReturnType<typeof s3Backend>>).server
          t.equal(server.uploadsBegun() - begun, 1, `${label}: a multipart upload was begun, and aborted`)
        }
      }
    })

    t.test('copy: the bytes under a second key, the first left; a missing source is BlobMissing', async (t) => {
      const { store } = await make(t)
      const ref = newRef()
      const from = `${ref}/${newId()}`
      const to = `${ref}/render/${newId()}/w200`
      await store.put(from, chunksOf('the original bytes'), 'text/plain')
      await store.copy(from, to)
      t.equal((await bytesOf(await store.get(to))).toString(), 'the original bytes')
      t.equal((await bytesOf(await store.get(from))).toString(), 'the original bytes')
      const gone = `${ref}/${newId()}`
      isMissing(t, await rejection(store.copy(gone, `${ref}/${newId()}`)), gone)
    })

    t.test('delete: the keys named go, others stay; a key already gone is no error', async (t) => {
      const { store } = await make(t)
      const ref = newRef()
      const [a, b, c] = [`${ref}/${newId()}`, `${ref}/render/${newId()}/h100`, `${ref}/${newId()}`]
      for (const key of [a, b, c]) await store.put(key, chunksOf(key), 'text/plain')
      await store.delete([a, b, `${ref}/${newId()}`])
      isMissing(t, await rejection(store.get(a)), a)
      isMissing(t, await rejection(store.get(b)), b)
      t.equal((await bytesOf(await store.get(c))).toString(), c, 'the key not named is kept')
      await store.delete([a, b])
      await store.delete([])
      t.pass('deleting missing keys, and none, resolves')
    })

    t.test('deletePrefix: every key of the prefix goes, at any depth; a sibling whose name starts alike stays', async (t) => {
      const { store } = await make(t)
      const ref = newRef()
      const inside = [`${ref}/${newId()}`, `${ref}/${newId()}`, `${ref}/render/${newId()}/w1`]
      const sibling = `${ref}x/${newId()}`
      const other = `${newRef()}/${newId()}`
      for (const key of [...inside, sibling, other]) await store.put(key, chunksOf(key), 'text/plain')
      await store.deletePrefix(`${ref}/`)
      for (const key of inside) isMissing(t, await rejection(store.get(key)), key)
      t.equal((await bytesOf(await store.get(sibling))).toString(), sibling, `${ref}x/ is not under ${ref}/`)
      t.equal((await bytesOf(await store.get(other))).toString(), other)
      await store.deletePrefix(`${ref}/`)
      t.pass('a prefix with nothing under it resolves')
    })

    t.test('keys and prefixes that are not Storage\'s are refused before anything is touched', async (t) => {
      const { store } = await make(t)
      const ref = newRef()
      const keep = `${ref}/${newId()}`
      await store.put(keep, chunksOf('kept'), 'text/plain')
      const badKeys = ['', ref, `${ref}/`, `/${ref}/x`, `${ref}//x`, `${ref}/./x`, `${ref}/../x`, `../${ref}/x`, `${ref}/.hidden`, `${ref.toUpperCase()}/x`, `${ref}/a b`, `${ref}/a\0`, `${ref}\\x/y`, `${ref}/${'a'.repeat(256)}`]
      for (const key of badKeys) {
        let read = false
        async function* body(): AsyncGenerator<Uint8Array> {
          read = true
          yield Buffer.from('x')
        }
        const refusals = [
          await rejection(store.put(key, body(), 'text/plain')),
          await rejection(store.get(key)),
          await rejection(store.copy(keep, key)),
          await rejection(store.copy(key, `${ref}/${newId()}`)),
          await rejection(store.delete([`${ref}/${newId()}`, key])),
        ]
        for (const error of refusals) {
          t.ok(error instanceof Error && !(error instanceof BlobMissing) && !(error instanceof BlobStoreUnavailable), `${JSON.stringify(key)}: a plain Error`)
          t.match((error as Error).message, /^invalid blob key /, JSON.stringify(key))
        }
        t.equal(read, false, `${JSON.stringify(key)}: the body is not read`)
      }
      for (const prefix of ['', '/', ref, `${ref}/x`, `../`, `${ref}//`, `./`]) {
        const error = await rejection(store.deletePrefix(prefix))
        t.match((error as Error).message, /^invalid blob prefix /, `prefix ${JSON.stringify(prefix)}`)
      }
      t.equal((await bytesOf(await store.get(keep))).toString(), 'kept', 'the delete with a bad key among good ones removed nothing')
    })
  })
}

t.test('local store: what only it has', async (t) => {
  t.test('the bytes are files under the root; emptied folders go with their last blob', async (t) => {
    const { store, root } = await localBackend(t)
    const ref = newRef()
    const id = newId()
    const key = `${ref}/render/${id}/w300`
    await store.put(key, chunksOf('rendered'), 'image/webp')
    t.equal(await readFile(path.join(root, ref, 'render', id, 'w300'), 'utf8'), 'rendered')
    const kept = `${ref}/${newId()}`
    await store.put(kept, chunksOf('kept'), 'text/plain')
    await store.delete([key])
    t.same((await readdir(path.join(root, ref))).sort(), [kept.split('/')[1]], 'render/<id>/ and render/ went, the ref folder holding another blob stayed')
    await store.delete([kept])
    t.same(await readdir(root), ['.tmp'], 'the emptied ref folder went too; the root stays')
  })

  t.test('get is a ReadStream of the file', async (t) => {
    const { store } = await localBackend(t)
    const key = `${newRef()}/${newId()}`
    await store.put(key, chunksOf('0123456789'), 'text/plain')
    const stream = await store.get(key, { start: 2, end: 4 })
    t.equal(stream.constructor.name, 'ReadStream')
    t.equal((await bytesOf(stream)).toString(), '234')
  })

  t.test('sweepTemporary removes temporary files untouched for an hour, not a write in progress', async (t) => {
    const { store, root } = await localBackend(t)
    t.equal(await store.sweepTemporary(), 0, 'no temporary folder yet: nothing to do')
    const temporary = path.join(root, '.tmp')
    await mkdir(temporary, { recursive: true })
    await writeFile(path.join(temporary, 'dead'), 'a write whose process died')
    const hoursAgo = new Date(Date.now() - 2 * 60 * 60 * 1000)
    await utimes(path.join(temporary, 'dead'), hoursAgo, hoursAgo)
    await writeFile(path.join(temporary, 'live'), 'a write still going')
    t.equal(await store.sweepTemporary(), 1)
    t.same(await readdir(temporary), ['live'])
  })

  t.test('sharedDiskToken: one token per disk, the same for every node that sees it', async (t) => {
    const home = await mkdtemp(path.join(os.tmpdir(), 'baseplane-shared-'))
    t.teardown(() => rm(home, { recursive: true, force: true }))
    const root = path.join(home, 'storage')
    // Several nodes starting together: the first link wins, every node reads its token.
    const tokens = await Promise.all(Array.from({ length: 6 }, () => sharedDiskToken(root)))
    t.equal(new Set(tokens).size, 1, 'all agree')
    t.match(tokens[0], /^[0-9a-f]{48}$/)
    t.equal((await readFile(path.join(root, '.baseplane-shared-disk'), 'utf8')).trim(), tokens[0], 'the marker holds it')
    t.equal(await sharedDiskToken(root), tokens[0], 'a later node reads the same')
    t.same(await readdir(path.join(root, '.tmp')), [], 'no temporary marker left')
    t.not(await sharedDiskToken(path.join(home, 'elsewhere')), tokens[0], 'another disk has another token')
    await writeFile(path.join(root, '.baseplane-shared-disk'), '')
    t.match(((await rejection(sharedDiskToken(root))) as Error).message, /holds no token/, 'a damaged marker is said, not replaced')
  })
})

t.test('s3 store: what only it has', async (t) => {
  t.test('the prefix: keys live under it, and a store with another prefix sees none of them', async (t) => {
    const server = await s3ServerOnce()
    const { store } = await s3Backend(t, { prefix: '/tenant-a/' })
    const { store: elsewhere } = await s3Backend(t, { prefix: 'tenant-b' })
    const ref = newRef()
    const key = `${ref}/${newId()}`
    await store.put(key, chunksOf('under a'), 'text/plain')
    const raw = new S3Client({ endpoint: server.endpoint, region: server.region, forcePathStyle: true, credentials: server })
    t.teardown(() => raw.destroy())
    const object = await raw.send(new GetObjectCommand({ Bucket: server.bucket, Key: `tenant-a/${key}` }))
    t.equal(object.ContentType, 'text/plain')
    t.equal(await object.Body?.transformToString(), 'under a')
    isMissing(t, await rejection(elsewhere.get(key)), key)
    await elsewhere.deletePrefix(`${ref}/`)
    t.equal((await bytesOf(await store.get(key))).toString(), 'under a', 'the other prefix\'s deletePrefix left it')
  })

  t.test('deletePrefix and delete go page by page and batch by batch', async (t) => {
    const { store } = await s3Backend(t, { batchSize: 2 })
    const ref = newRef()
    const keys = Array.from({ length: 7 }, () => `${ref}/${newId()}`)
    for (const key of keys) await store.put(key, chunksOf(key), 'text/plain')
    const kept = `${ref}x/${newId()}`
    await store.put(kept, chunksOf(kept), 'text/plain')
    await store.delete(keys.slice(0, 3))
    for (const key of keys.slice(0, 3)) isMissing(t, await rejection(store.get(key)), key)
    await store.deletePrefix(`${ref}/`)
    for (const key of keys) isMissing(t, await rejection(store.get(key)), key)
    t.equal((await bytesOf(await store.get(kept))).toString(), kept)
  })

  t.test('backpressure: a slow store slows the reading of the body; an upload holds about three parts, not the body', async (t) => {
    const { store, server } = await s3Backend(t)
    server.delayParts(150)
    t.teardown(() => server.delayParts(0))
    const total = 40 * MiB
    const body = generatedBody(total)
    let readAhead = 0
    const startedAt = server.partBytes()
    async function* watched(): AsyncGenerator<Uint8Array> {
      for await (const chunk of body.body) {
        readAhead = Math.max(readAhead, body.handedOut() - (server.partBytes() - startedAt))
        yield chunk
      }
    }
    const written = await store.put(`${newRef()}/${newId()}`, watched(), 'application/octet-stream')
    t.same(written, { size: total, etag: `"${body.md5()}"` })
    // Two 5 MiB parts in flight and a third being filled, and the chunks on their way.
    t.ok(readAhead <= 15 * MiB + MiB, `read ahead of the store by at most about three parts: ${(readAhead / MiB).toFixed(1)} MiB`)
    t.ok(readAhead > 5 * MiB, `and by more than one part, parts going out two at a time: ${(readAhead / MiB).toFixed(1)} MiB`)
  })

  t.test('a store that accepts and never answers: BlobStoreUnavailable within the deadline', async (t) => {
    const silent = await silentServer(t)
    const timeoutMillis = 300
    const store = new S3BlobStore({ endpoint: `http://127.0.0.1:${silent.port}`, region: 'us-east-1', bucket: 'blobs', accessKeyId: 'a', secretAccessKey: 'b', forcePathStyle: true, timeoutMillis })
    t.teardown(() => store.close())
    const key = `${newRef()}/${newId()}`
    const operations: Array<[string, () => Promise<unknown>]> = [
      ['get', () => store.get(key)],
      ['put', () => store.put(key, chunksOf('hello'), 'text/plain')],
      ['copy', () => store.copy(key, `${newRef()}/${newId()}`)],
      ['delete', () => store.delete([key])],
      ['deletePrefix', () => store.deletePrefix(`${newRef()}/`)],
    ]
    for (const [name, run] of operations) {
      const started = Date.now()
      const error = await rejection(run())
      const took = Date.now() - started
      t.ok(error instanceof BlobStoreUnavailable, `${name}: BlobStoreUnavailable, got ${String(error)}`)
      t.equal((error as BlobStoreUnavailable).code, 'blob_store_unavailable')
      t.equal(((error as Error).cause as Error | undefined)?.name, 'TimeoutError', `${name}: caused by the deadline`)
      // Three attempts (the SDK's retries), each cut at the deadline, with backoff between them.
      t.ok(took >= timeoutMillis && took < 3 * timeoutMillis + 3000, `${name}: answered in ${took} ms`)
    }
    t.ok(silent.accepted() >= operations.length * 3, 'every attempt reached the server')
  })

  t.test('a store that refuses connections, or answers 5xx: BlobStoreUnavailable', async (t) => {
    const closed = http.createServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const closedPort = (closed.address() as AddressInfo).port
    await new Promise((resolve) => closed.close(resolve))
    let answered = 0
    const failing = http.createServer((request, response) => {
      answered++
      request.resume()
      response.writeHead(503, { 'content-type': 'application/xml' })
      response.end('<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>')
    })
    await new Promise<void>((resolve) => failing.listen(0, '127.0.0.1', resolve))
    t.teardown(() => failing.close())
    const key = `${newRef()}/${newId()}`
    for (const [label, port, cause] of [
      ['refused', closedPort, /ECONNREFUSED/],
      ['503', (failing.address() as AddressInfo).port, /SlowDown \(HTTP 503\)/],
    ] as const) {
      const store = new S3BlobStore({ endpoint: `http://127.0.0.1:${port}`, region: 'us-east-1', bucket: 'blobs', accessKeyId: 'a', secretAccessKey: 'b', forcePathStyle: true, timeoutMillis: 2000 })
      t.teardown(() => store.close())
      for (const run of [() => store.get(key), () => store.put(key, chunksOf('x'), 'text/plain'), () => store.delete([key])]) {
        const error = await rejection(run())
        t.ok(error instanceof BlobStoreUnavailable, `${label}: BlobStoreUnavailable, got ${String(error)}`)
        t.match((error as Error).message, cause, label)
      }
    }
    t.ok(answered >= 3, 'the failing store was asked')
  })

  t.test('checkS3Store: passes on a usable bucket, and says what failed otherwise', async (t) => {
    const server = await s3ServerOnce()
    await checkS3Store(configOf(server))
    t.pass('the bucket of the test server is usable')
    const missing = await rejection(checkS3Store(configOf(server, { bucket: 'no-such-bucket' })))
    t.ok(missing instanceof Error)
    t.equal(
      (missing as Error).message,
      `S3 store check failed: could not reach bucket "no-such-bucket" at ${server.endpoint}: NotFound (HTTP 404) (the bucket does not exist: create it, or correct the name)`,
    )
    const silent = await silentServer(t)
    const unreachable = await rejection(checkS3Store({ ...configOf(server), endpoint: `http://127.0.0.1:${silent.port}`, timeoutMillis: 200 }))
    t.match((unreachable as Error).message, new RegExp(`^S3 store check failed: could not reach bucket "${server.bucket}" at http://127\\.0\\.0\\.1:${silent.port}: TimeoutError`))
    t.match((unreachable as Error).message, /\(is the endpoint right, and the store up\?\)$/)
  })

  t.test('the probe leaves nothing in the bucket', async (t) => {
    const server = await s3ServerOnce()
    const raw = new S3Client({ endpoint: server.endpoint, region: server.region, forcePathStyle: true, credentials: server })
    t.teardown(() => raw.destroy())
    const prefix = `probe-${randomBytes(3).toString('hex')}`
    await checkS3Store(configOf(server, { prefix }))
    const listed = await raw.send(new ListObjectsV2Command({ Bucket: server.bucket, Prefix: `${prefix}/` }))
    t.equal(listed.KeyCount ?? 0, 0)
  })
})
