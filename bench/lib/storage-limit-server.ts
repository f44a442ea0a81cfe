// bench:storage's limit: the same bytes streamed by a plain node:http server
// with no Baseplane code, in a process of its own, to the same backend:
// - local: each request body streamed to a temporary file in a folder under
//   the system's temporary folder (as a Baseplane node's home is), fsynced,
//   renamed into place and its folder fsynced, as workers/storage/local-store.ts
//   does; served back with fs.createReadStream;
// - s3: each body streamed to the S3 store with @aws-sdk/lib-storage's Upload
//   (the parts and queue workers/storage/s3-store.ts uses, the same client
//   settings), served back from GetObject.
// Both count the md5 of what they write, as both of Baseplane's stores do (an
// object's ETag). `POST /o/<key>` stores, `GET /o/<key>` serves, `POST /clear`
// removes everything stored. Tells its parent its origin once it serves.
import { createHash, randomBytes } from 'node:crypto'
import { mkdir, open, rename, rm } from 'node:fs/promises'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { DeleteObjectsCommand, GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3'
import { Upload } from '@aws-sdk/lib-storage'
import { NodeHttpHandler } from '@smithy/node-http-handler'
import { childArg, tellParent } from './realtime-process.ts'
import type { S3Endpoint } from './storage-s3-server.ts'

export type LimitArg = { kind: 'local'; root: string } | { kind: 's3'; store: S3Endpoint; prefix: string }

const arg = childArg<LimitArg>()

/** The body, its md5 counted as it passes (what an ETag needs). */
async function* metered(body: AsyncIterable<Buffer>, digest: ReturnType<typeof createHash>): AsyncGenerator<Buffer> {
  for await (const chunk of body) {
    digest.update(chunk)
    yield chunk
  }
}

interface Backend {
  put(key: string, body: http.IncomingMessage): Promise<string>
  get(key: string, res: http.ServerResponse): Promise<void>
  clear(): Promise<void>
}

function localBackend(root: string): Backend {
  const temporary = path.join(root, '.tmp')
  const syncFolder = async (folder: string) => {
    const handle = await open(folder, 'r')
    try {
      await handle.sync()
    } finally {
      await handle.close()
    }
  }
  return {
    async put(key, body) {
      const digest = createHash('md5')
      const file = path.join(temporary, randomBytes(16).toString('hex'))
      const target = path.join(root, key)
      await mkdir(temporary, { recursive: true })
      const handle = await open(file, 'wx', 0o600)
      await pipeline(metered(body, digest), handle.createWriteStream({ flush: true }))
      await mkdir(path.dirname(target), { recursive: true })
      await rename(file, target)
      await syncFolder(path.dirname(target))
      return digest.digest('hex')
    },
    async get(key, res) {
      const handle = await open(path.join(root, key), 'r')
      const { size } = await handle.stat()
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': size })
      await pipeline(handle.createReadStream(), res)
    },
    async clear() {
      await rm(root, { recursive: true, force: true })
      await mkdir(root, { recursive: true })
    },
  }
}

function s3Backend(store: S3Endpoint, prefix: string): Backend {
  const agent = { keepAlive: true, maxSockets: 64 }
  const client = new S3Client({
    endpoint: store.endpoint,
    region: store.region,
    forcePathStyle: true,
    credentials: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler: new NodeHttpHandler({ httpAgent: new http.Agent(agent) }),
  })
  return {
    async put(key, body) {
      const digest = createHash('md5')
      const upload = new Upload({
        client,
        params: { Bucket: store.bucket, Key: prefix + key, Body: Readable.from(metered(body, digest)), ContentType: 'application/octet-stream' },
        partSize: 5 * 1024 * 1024,
        queueSize: 2,
        leavePartsOnError: false,
      })
      await upload.done()
      return digest.digest('hex')
    },
    async get(key, res) {
      const answer = await client.send(new GetObjectCommand({ Bucket: store.bucket, Key: prefix + key }))
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': answer.ContentLength ?? 0 })
      await pipeline(answer.Body as Readable, res)
    },
    async clear() {
      let ContinuationToken: string | undefined
      do {
        const page = await client.send(new ListObjectsV2Command({ Bucket: store.bucket, Prefix: prefix, ContinuationToken }))
        const keys = (page.Contents ?? []).flatMap((object) => (object.Key === undefined ? [] : [{ Key: object.Key }]))
        if (keys.length > 0) await client.send(new DeleteObjectsCommand({ Bucket: store.bucket, Delete: { Objects: keys, Quiet: true } }))
        ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined
      } while (ContinuationToken !== undefined)
    },
  }
}

const backend = arg.kind === 'local' ? localBackend(arg.root) : s3Backend(arg.store, arg.prefix)

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://limit')
  const key = decodeURIComponent(url.pathname.slice('/o/'.length))
  const answer = async () => {
    if (req.method === 'POST' && url.pathname === '/clear') {
      await backend.clear()
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    } else if (req.method === 'POST' && url.pathname.startsWith('/o/')) {
      const etag = await backend.put(key, req)
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ Key: key, ETag: etag }))
    } else if (req.method === 'GET' && url.pathname.startsWith('/o/')) {
      await backend.get(key, res)
    } else {
      res.writeHead(404).end()
    }
  }
  answer().catch((error: unknown) => {
    if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' }).end(String(error))
    else res.destroy()
  })
})
server.keepAliveTimeout = 60_000
server.listen(0, '127.0.0.1', () => tellParent({ type: 'serving', origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }))
