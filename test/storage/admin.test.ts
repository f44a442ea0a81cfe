// The operator's Storage operations (control-plane/storage-admin.ts, through
// Storage's face): buckets with their objects and bytes, one folder level,
// the project's figures, the policies, a bucket made and its settings changed
// (checked as the API checks them), an object removed with its bytes, signed
// URLs that the project's endpoint honours, and a deleted project's bytes gone.
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { deleteProject } from '../../control-plane/projects.ts'
import {
  createStorageBucket,
  listStorageBuckets,
  listStorageObjects,
  removeStorageObject,
  signedDownloadUrl,
  signedUploadUrl,
  storagePolicies,
  storageUsage,
  updateStorageBucket,
} from '../../control-plane/storage-admin.ts'
import { startTestPlatform } from '../helpers/platform.ts'
import { ownerOf, serviceClient } from './helpers.ts'

const fixture = await startTestPlatform(t)
const controlPlane = fixture.platform.controlPlane
const project = await fixture.createProject({ name: 'Files' })
const admin = serviceClient(project)
const storage = fixture.config.storage
if (storage.kind !== 'local') throw new Error('the test platform keeps bytes on local disk')
const projectFolder = path.join(storage.root, project.ref)

await admin.storage.createBucket('photos', { public: false })
for (const [key, body] of [
  ['top.txt', 'top'],
  ['2024/a.txt', 'aaaa'],
  ['2024/b.txt', 'bbbbbb'],
  ['2024/deep/c.txt', 'c'],
] as const) {
  const { error } = await admin.storage.from('photos').upload(key, new Blob([body], { type: 'text/plain' }))
  if (error) throw error
}

t.test('buckets with their objects and bytes, and the project figures', async (t) => {
  const { buckets } = await listStorageBuckets(controlPlane, project.ref)
  t.equal(buckets.length, 1)
  t.match(buckets[0], { id: 'photos', public: false, file_size_limit: null, allowed_mime_types: null, objects: 4, bytes: 3 + 4 + 6 + 1 })
  const usage = await storageUsage(controlPlane, project.ref)
  t.match(usage, { ref: project.ref, bytes: 14, objects: 4, buckets: 1, plan_file_size_limit: 50 * 1024 * 1024 })
})

t.test('one folder level, folders first, paged', async (t) => {
  const top = await listStorageObjects(controlPlane, project.ref, 'photos')
  t.same(
    top.entries.map((e) => [e.kind, e.name, e.key]),
    [
      ['folder', '2024', '2024/'],
      ['file', 'top.txt', 'top.txt'],
    ],
  )
  t.equal(top.entries[1]!.size, 3)
  t.equal(top.entries[1]!.mimetype, 'text/plain')
  const inner = await listStorageObjects(controlPlane, project.ref, 'photos', { prefix: '2024', limit: 2 })
  t.equal(inner.prefix, '2024/')
  t.same(inner.entries.map((e) => e.name), ['deep', 'a.txt'])
  t.equal(inner.next_offset, 2)
  const rest = await listStorageObjects(controlPlane, project.ref, 'photos', { prefix: '2024/', limit: 2, offset: 2 })
  t.same(rest.entries.map((e) => e.key), ['2024/b.txt'])
  t.equal(rest.next_offset, null)
  await t.rejects(listStorageObjects(controlPlane, project.ref, 'nope'), { code: 'bucket_not_found', status: 404 })
  await t.rejects(listStorageObjects(controlPlane, project.ref, 'photos', { prefix: '../x' }), { code: 'invalid_argument', status: 400 })
})

t.test('a bucket made and its settings changed, checked as the API checks them', async (t) => {
  const made = await createStorageBucket(controlPlane, project.ref, 'avatars', { public: true, file_size_limit: '1MB', allowed_mime_types: ['image/*'] })
  t.match(made, { id: 'avatars', public: true, file_size_limit: 1024 * 1024, allowed_mime_types: ['image/*'], objects: 0, bytes: 0 })
  await t.rejects(createStorageBucket(controlPlane, project.ref, 'avatars'), { code: 'bucket_exists', status: 409 })
  await t.rejects(createStorageBucket(controlPlane, project.ref, 'bad/name'), { code: 'invalid_argument', field: 'bucket' })
  await t.rejects(updateStorageBucket(controlPlane, project.ref, 'avatars', { file_size_limit: '1TB' }), { code: 'invalid_argument', field: 'file_size_limit' })
  await t.rejects(updateStorageBucket(controlPlane, project.ref, 'avatars', { allowed_mime_types: ['not a type'] }), { code: 'invalid_argument', field: 'allowed_mime_types' })
  const changed = await updateStorageBucket(controlPlane, project.ref, 'avatars', { public: false, file_size_limit: null })
  t.match(changed, { public: false, file_size_limit: null, allowed_mime_types: ['image/*'] })
  // The API sees the change: a text file is refused by the type list.
  const { error } = await admin.storage.from('avatars').upload('x.txt', new Blob(['x'], { type: 'text/plain' }))
  t.match(error, { message: /mime type text\/plain is not supported/ })
  await t.rejects(updateStorageBucket(controlPlane, project.ref, 'nope', { public: true }), { code: 'bucket_not_found', status: 404 })
})

t.test('the policies on storage.objects and storage.buckets', async (t) => {
  const owner = await ownerOf(t, project)
  await owner.query(`create policy "read own" on storage.objects for select to authenticated using (owner_id = (select auth.uid()::text))`)
  const { policies } = await storagePolicies(controlPlane, project.ref)
  t.match(policies, [{ table: 'storage.objects', name: 'read own', command: 'SELECT', roles: ['authenticated'], permissive: true, using: /auth\.uid/ }])
})

t.test('signed URLs the project endpoint honours', async (t) => {
  const download = await signedDownloadUrl(project.record, project.baseUrl, 'photos', '2024/a.txt', 60)
  const got = await fetch(download)
  t.equal(got.status, 200)
  t.equal(await got.text(), 'aaaa')
  t.match(got.headers.get('content-disposition'), /attachment/)
  const { url } = await signedUploadUrl(controlPlane, project.ref, project.baseUrl, 'photos', 'new folder/up load.txt', false)
  const put = await fetch(url, { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: 'uploaded' })
  t.equal(put.status, 200, await put.clone().text())
  const listed = await listStorageObjects(controlPlane, project.ref, 'photos', { prefix: 'new folder' })
  t.same(listed.entries.map((e) => e.name), ['up load.txt'])
  await t.rejects(signedUploadUrl(controlPlane, project.ref, project.baseUrl, 'nope', 'a', false), { code: 'bucket_not_found' })
})

t.test('an object removed with its bytes', async (t) => {
  const files = () => fs.readdirSync(projectFolder, { recursive: true }).filter((name) => fs.statSync(path.join(projectFolder, String(name))).isFile()).length
  const before = files()
  const removed = await removeStorageObject(controlPlane, project.ref, 'photos', '2024/b.txt')
  t.same(removed, { ref: project.ref, bucket: 'photos', removed: '2024/b.txt' })
  t.equal(files(), before - 1, 'its bytes are gone from the store')
  const usage = await storageUsage(controlPlane, project.ref)
  t.equal(usage.objects, 4)
  t.equal(usage.bytes, 14 - 6 + 'uploaded'.length)
  await t.rejects(removeStorageObject(controlPlane, project.ref, 'photos', '2024/b.txt'), { code: 'object_not_found', status: 404 })
})

t.test('the admin API answers the same operations', async (t) => {
  const api = (path: string, init: RequestInit = {}) =>
    fetch(`${fixture.origin}/platform/v1/projects/${project.ref}/storage${path}`, {
      ...init,
      headers: { authorization: `Bearer ${fixture.config.adminToken}`, 'content-type': 'application/json', ...init.headers },
    })
  const buckets = await api('/buckets')
  t.equal(buckets.status, 200)
  t.same(((await buckets.json()) as { buckets: Array<{ id: string }> }).buckets.map((b) => b.id), ['avatars', 'photos'])
  const made = await api('/buckets', { method: 'POST', body: JSON.stringify({ name: 'docs', file_size_limit: 1000 }) })
  t.equal(made.status, 201)
  t.match(await made.json(), { id: 'docs', file_size_limit: 1000, public: false })
  const changed = await api('/buckets/docs', { method: 'PUT', body: JSON.stringify({ public: true, allowed_mime_types: ['text/*'] }) })
  t.match(await changed.json(), { id: 'docs', public: true, file_size_limit: 1000, allowed_mime_types: ['text/*'] })
  const refused = await api('/buckets/docs', { method: 'PUT', body: JSON.stringify({ file_size_limit: 'lots' }) })
  t.equal(refused.status, 400)
  t.match(await refused.json(), { code: 'invalid_argument' })
  const listed = await api('/buckets/photos/objects?prefix=new%20folder&limit=5')
  t.match(await listed.json(), { bucket: 'photos', prefix: 'new folder/', entries: [{ name: 'up load.txt' }], next_offset: null })
  const usage = await api('/usage')
  t.match(await usage.json(), { ref: project.ref, buckets: 3 })
  const policies = await api('/policies')
  t.match(await policies.json(), { policies: [{ name: 'read own' }] })
  const removed = await api('/buckets/photos/objects/new%20folder/up%20load.txt', { method: 'DELETE' })
  t.equal(removed.status, 204)
  const gone = await api('/buckets/photos/objects/new%20folder/up%20load.txt', { method: 'DELETE' })
  t.equal(gone.status, 404)
  t.match(await gone.json(), { code: 'object_not_found' })
  const noBucket = await api('/buckets/nope/objects')
  t.equal(noBucket.status, 404)
})

t.test("Storage's requests on /metrics, under service storage", async (t) => {
  const scraped = await fetch(`${fixture.origin}/metrics`, { headers: { authorization: `Bearer ${fixture.config.adminToken}` } })
  t.equal(scraped.status, 200)
  const text = await scraped.text()
  const line = text.split('\n').find((l) => l.startsWith('baseplane_requests_total{') && l.includes(`project="${project.ref}"`) && l.includes('service="storage"') && l.includes('status_class="2xx"'))
  t.ok(line, 'the uploads and listings above are counted')
  t.ok(Number(line?.split(' ').pop()) >= 4, line ?? 'no line')
})

t.test("a deleted project's bytes are removed with it", async (t) => {
  t.ok(fs.existsSync(projectFolder))
  await deleteProject(controlPlane, project.ref)
  t.notOk(fs.existsSync(projectFolder), 'nothing is left under its ref')
})
