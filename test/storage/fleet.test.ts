// Storage on a fleet (issue 39 item 6): two nodes on one S3-protocol store
// (fauxqs, started here; production uses a real S3, MinIO, R2 or similar)
// serve each other's objects, simple and resumable; a node killed in the middle
// of an upload leaves no object, and what it wrote is collected; and a node on
// a local folder of its own refuses to join a fleet whose disk it does not share.
import { createHash } from 'node:crypto'
import http from 'node:http'
import pg from 'pg'
import t from 'tap'
import { serverUrl, withDatabase } from '../helpers/db.ts'
import { eventually } from '../helpers/eventually.ts'
import { startPlatformProcess } from '../helpers/platform-process.ts'
import { startTestPlatform } from '../helpers/platform.ts'
import { startS3Server } from '../helpers/s3-server.ts'
import { bytesOf, patterned, serviceClient, succeeded } from './helpers.ts'
import { createClient } from '@supabase/supabase-js'

const s3 = await startS3Server()
t.teardown(() => s3.stop())
const S3_ENV = {
  BASEPLANE_STORAGE_BACKEND: 's3',
  BASEPLANE_STORAGE_S3_ENDPOINT: s3.endpoint,
  BASEPLANE_STORAGE_S3_REGION: s3.region,
  BASEPLANE_STORAGE_S3_BUCKET: s3.bucket,
  BASEPLANE_STORAGE_S3_ACCESS_KEY_ID: s3.accessKeyId,
  BASEPLANE_STORAGE_S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
}
const fixture = await startTestPlatform(t, { BASEPLANE_HTTP_ENGINE: 'uws', ...S3_ENV })
const second = await fixture.startAnotherNode()
const project = await fixture.createProject({ name: 'Storage fleet' })
const onFirst = serviceClient(project)
const secondBase = project.baseUrl.replace(fixture.origin, `http://127.0.0.1:${second.port}`)
const onSecond = createClient(secondBase, project.serviceRoleKey, { auth: { persistSession: false } })
succeeded(await onFirst.storage.createBucket('shared'))

t.test('two nodes on one S3 store serve each other\'s objects', async (t) => {
  const bytes = await bytesOf(7 * 1024 * 1024, 9)
  t.equal((await onFirst.storage.from('shared').upload('one/big.bin', new Blob([bytes]))).error, null)
  const down = await onSecond.storage.from('shared').download('one/big.bin')
  t.equal(down.error, null)
  t.equal(createHash('sha256').update(Buffer.from(await down.data!.arrayBuffer())).digest('hex'), createHash('sha256').update(bytes).digest('hex'))
  t.equal((await onSecond.storage.from('shared').upload('two/small.txt', 'from the second', { contentType: 'text/plain' })).error, null)
  t.equal(await (await onFirst.storage.from('shared').download('two/small.txt')).data?.text(), 'from the second')
  t.equal(s3.openUploads(), 0, 'no multipart upload left open')
})

t.test('a node killed in the middle of an upload leaves no object, and its bytes are collected', async (t) => {
  const node = await startPlatformProcess(t, fixture.catalogueUrl, { ...S3_ENV, BASEPLANE_ADMIN_TOKEN: fixture.config.adminToken! })
  const base = new URL(node.baseUrlOf(project.ref))
  // 12 MB sent slowly: the node is killed once part of it has reached the store.
  const request = http.request({
    host: base.hostname,
    port: base.port,
    method: 'POST',
    path: `${base.pathname}/storage/v1/object/shared/cut/off.bin`,
    headers: { apikey: project.serviceRoleKey, authorization: `Bearer ${project.serviceRoleKey}`, 'content-type': 'application/octet-stream', 'content-length': String(12 * 1024 * 1024) },
  })
  request.on('error', () => {})
  const began = s3.uploadsBegun()
  for await (const chunk of patterned(6 * 1024 * 1024)) if (!request.write(chunk)) await new Promise((resolve) => request.once('drain', resolve))
  await eventually('a part reached the store', 20_000, async () => s3.partBytes() > 0 && s3.uploadsBegun() > began)
  await node.kill()
  request.destroy()
  const exists = await onFirst.storage.from('shared').exists('cut/off.bin')
  t.equal(exists.data, false, 'no object was written')

  // Its blob is recorded, pending: once its upload window is over, the next node to look collects it.
  const database = new pg.Client({ connectionString: withDatabase(await serverUrl(), project.record.dbName) })
  await database.connect()
  t.teardown(() => database.end())
  const pending = await database.query<{ version: string }>(`select version::text from baseplane_storage.blobs where bucket_id = 'shared' and name = 'cut/off.bin'`)
  t.equal(pending.rows.length, 1, 'the blob it began is on record')
  await database.query(`update baseplane_storage.blobs set collect_after = now() - interval '1 second' where version = $1`, [pending.rows[0]!.version])
  const third = await fixture.startAnotherNode({ env: S3_ENV })
  const onThird = createClient(project.baseUrl.replace(fixture.origin, `http://127.0.0.1:${third.port}`), project.serviceRoleKey, { auth: { persistSession: false } })
  t.equal((await onThird.storage.from('shared').list()).error, null)
  await eventually("the dead upload's blob is collected", 20_000, async () => (await database.query(`select 1 from baseplane_storage.blobs where version = $1`, [pending.rows[0]!.version])).rowCount === 0)
  t.pass('collected')
  t.equal((await onThird.storage.from('shared').download('one/big.bin')).error, null, 'what rows name is kept')
})

t.test('a node on a local folder of its own refuses to join a fleet on another store', async (t) => {
  await t.rejects(fixture.startAnotherNode({ env: { BASEPLANE_STORAGE_BACKEND: 'local' } }), { message: /BASEPLANE_STORAGE_BACKEND is local disk with shared-disk marker/ })
})
