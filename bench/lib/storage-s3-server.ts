// bench:storage's S3 store: fauxqs's S3 emulator (the dev dependency the tests
// use, test/helpers/s3-server.ts) in a process of its own, on a free loopback
// port, with one bucket made; Baseplane's node and the limit's server both
// stream to it. fauxqs keeps objects in memory and checks no signature: the
// bench removes what each round stored. Tells its parent the endpoint once it serves.
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3'
import { buildApp } from 'fauxqs'
import { childArg, tellParent } from './realtime-process.ts'

export interface S3Endpoint {
  endpoint: string
  bucket: string
  region: string
  accessKeyId: string
  secretAccessKey: string
}

const { bucket } = childArg<{ bucket: string }>()
const app = buildApp({ logger: false })
const endpoint = await app.listen({ host: '127.0.0.1', port: 0 })
const store: S3Endpoint = { endpoint, bucket, region: 'us-east-1', accessKeyId: 'bench-access-key', secretAccessKey: 'bench-secret-key' }
const client = new S3Client({ endpoint, region: store.region, forcePathStyle: true, credentials: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey } })
await client.send(new CreateBucketCommand({ Bucket: bucket }))
client.destroy()
tellParent({ type: 'serving', store })
