// A local S3-protocol server for the tests: fauxqs's S3 emulator in this
// process, on a free loopback port, with one bucket made. (s3rver, the older
// choice, cannot page ListObjectsV2 on Node 22 — its continuation tokens use
// DES, which OpenSSL 3 no longer offers — nor abort a multipart upload.)
//
// fauxqs keeps the objects in memory and checks no signature: what the tests
// look at is what the store says through the protocol. It has no
// ListMultipartUploads either, so the server counts the multipart uploads begun
// and ended from the requests it answered, which is how a test sees that a
// failed upload was aborted rather than left behind.
import { randomBytes } from 'node:crypto'
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3'
import { buildApp } from 'fauxqs'

export interface TestS3Server {
  endpoint: string
  bucket: string
  region: string
  accessKeyId: string
  secretAccessKey: string
  forcePathStyle: true
  /** Multipart uploads begun so far. */
  uploadsBegun(): number
  /** Multipart uploads begun and neither completed nor aborted: what a failed upload would leave to be billed. */
  openUploads(): number
  /** Bytes of the upload parts answered so far. */
  partBytes(): number
  /** Holds each upload part this long before answering it: a slow store, for the tests of backpressure. */
  delayParts(millis: number): void
  stop(): Promise<void>
}

export async function startS3Server(): Promise<TestS3Server> {
  const app = buildApp({ logger: false })
  let begun = 0
  let open = 0
  let partBytes = 0
  let partDelay = 0
  const isPart = (method: string, query: Record<string, unknown>) => method === 'PUT' && 'uploadId' in query && 'partNumber' in query
  app.addHook('preHandler', async (request) => {
    if (partDelay > 0 && isPart(request.method, request.query as Record<string, unknown>)) await new Promise((resolve) => setTimeout(resolve, partDelay))
  })
  app.addHook('onResponse', async (request, reply) => {
    if (reply.statusCode >= 300) return
    const query = request.query as Record<string, unknown>
    if (isPart(request.method, query)) partBytes += Number(request.headers['content-length'] ?? 0)
    if (request.method === 'POST' && 'uploads' in query) {
      begun++
      open++
    }
    else if ((request.method === 'POST' || request.method === 'DELETE') && 'uploadId' in query) open--
  })
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  const server = {
    endpoint: address,
    bucket: `blobs-${randomBytes(4).toString('hex')}`,
    region: 'us-east-1',
    accessKeyId: 'test-access-key',
    secretAccessKey: 'test-secret-key',
    forcePathStyle: true as const,
    uploadsBegun: () => begun,
    openUploads: () => open,
    partBytes: () => partBytes,
    delayParts: (millis: number) => {
      partDelay = millis
    },
    stop: async () => {
      await app.close()
    },
  }
  const client = new S3Client({
    endpoint: server.endpoint,
    region: server.region,
    forcePathStyle: true,
    credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
  })
  try {
    await client.send(new CreateBucketCommand({ Bucket: server.bucket }))
  } catch (error) {
    await server.stop()
    throw error
  } finally {
    client.destroy()
  }
  return server
}
