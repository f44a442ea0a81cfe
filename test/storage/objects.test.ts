// Storage's buckets and objects (issue 39 items 1, 2 and 4) through the
// unmodified supabase-js: buckets made, listed, updated, emptied and deleted;
// objects uploaded (raw and as a form, upsert, cache-control, metadata),
// downloaded, listed, moved, copied and removed; each user's own folder under
// Supabase's documented example policies, and another project seeing nothing.
import { createHash } from 'node:crypto'
import t from 'tap'
import { startTestPlatform } from '../helpers/platform.ts'
import { bytesOf, ownerOf, serviceClient, userClient } from './helpers.ts'
import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { createClient } from '@supabase/supabase-js'

const fixture = await startTestPlatform(t, { BASEPLANE_HTTP_ENGINE: 'uws' })
const project = await fixture.createProject({ name: 'Storage' })
const admin = serviceClient(project)
const owner = await ownerOf(t, project)

// Supabase's documented example: each user reads and writes the folder named after them.
await owner.query(`
  create policy "own folder: read" on storage.objects for select to authenticated
    using (bucket_id = 'avatars' and (storage.foldername(name))[1] = (select auth.uid()::text));
  create policy "own folder: upload" on storage.objects for insert to authenticated
    with check (bucket_id = 'avatars' and (storage.foldername(name))[1] = (select auth.uid()::text));
  create policy "own folder: update" on storage.objects for update to authenticated
    using (bucket_id = 'avatars' and (storage.foldername(name))[1] = (select auth.uid()::text));
  create policy "own folder: delete" on storage.objects for delete to authenticated
    using (bucket_id = 'avatars' and (storage.foldername(name))[1] = (select auth.uid()::text));
`)

/** A POST of `body` to the project's `path` exactly as written (no URL normalisation on the way). */
function rawUpload(path: string, body: string): Promise<{ status: number; text: string }> {
  const base = new URL(project.baseUrl)
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: base.hostname, port: base.port, method: 'POST', path: `${base.pathname}${path}`, headers: { apikey: project.serviceRoleKey, authorization: `Bearer ${project.serviceRoleKey}`, 'content-type': 'text/plain' } },
      (res) => {
        let text = ''
        res.on('data', (chunk: Buffer) => (text += chunk.toString()))
        res.on('end', () => resolve({ status: res.statusCode!, text }))
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

t.test('buckets: create, get, list, update, empty, delete', async (t) => {
  const made = await admin.storage.createBucket('avatars', { public: false, fileSizeLimit: '1MB', allowedMimeTypes: ['image/*', 'text/plain'] })
  t.equal(made.error, null)
  t.same(made.data, { name: 'avatars' })
  t.equal((await admin.storage.createBucket('docs')).error, null)
  const again = await admin.storage.createBucket('avatars')
  t.equal((again.error as { statusCode?: string } | null)?.statusCode, '409', 'a second bucket of the name is a conflict')

  const got = await admin.storage.getBucket('avatars')
  t.equal(got.error, null)
  t.match(got.data, { id: 'avatars', name: 'avatars', public: false, file_size_limit: 1024 * 1024, allowed_mime_types: ['image/*', 'text/plain'] })
  const listed = await admin.storage.listBuckets()
  t.equal(listed.error, null)
  t.same(listed.data?.map((bucket) => bucket.id), ['avatars', 'docs'])
  const searched = await admin.storage.listBuckets({ search: 'doc', sortColumn: 'name', sortOrder: 'desc' })
  t.equal(searched.error, null)
  t.same(searched.data?.map((bucket) => bucket.id), ['docs'])

  t.equal((await admin.storage.updateBucket('docs', { public: true, fileSizeLimit: null })).error, null)
  t.equal((await admin.storage.getBucket('docs')).data?.public, true)

  const anonymous = userClient(project)
  const hidden = await anonymous.storage.listBuckets()
  t.equal(hidden.error, null)
  t.same(hidden.data, [], 'no policy lets anon see buckets')
  const refused = await anonymous.storage.createBucket('mine')
  t.match(refused.error, { statusCode: '403', message: 'new row violates row-level security policy' })

  t.equal((await admin.storage.from('docs').upload('a.txt', 'a', { contentType: 'text/plain' })).error, null)
  const notEmpty = await admin.storage.deleteBucket('docs')
  t.match(notEmpty.error, { statusCode: '409' }, 'a bucket with objects is not deleted')
  t.equal((await admin.storage.emptyBucket('docs')).error, null)
  t.equal((await admin.storage.deleteBucket('docs')).error, null)
  const gone = await admin.storage.getBucket('docs')
  t.match(gone.error, { statusCode: '404', message: 'Bucket not found' })
})

t.test("objects under each user's own folder: upload, download, list, info, move, copy, remove", async (t) => {
  const alice = crypto.randomUUID()
  const bob = crypto.randomUUID()
  const asAlice = userClient(project, alice).storage.from('avatars')
  const asBob = userClient(project, bob).storage.from('avatars')

  const picture = await bytesOf(300 * 1024)
  const up = await asAlice.upload(`${alice}/me.png`, new Blob([picture], { type: 'image/png' }), { cacheControl: '60', metadata: { shot: 'beach' } })
  t.equal(up.error, null)
  t.equal(up.data?.path, `${alice}/me.png`)
  t.equal(up.data?.fullPath, `avatars/${alice}/me.png`)

  const foreign = await asBob.upload(`${alice}/evil.png`, new Blob(['x'], { type: 'image/png' }))
  t.match(foreign.error, { statusCode: '403', message: 'new row violates row-level security policy' }, "bob cannot write into alice's folder")

  const down = await asAlice.download(`${alice}/me.png`)
  t.equal(down.error, null)
  t.equal(createHash('sha256').update(Buffer.from(await down.data!.arrayBuffer())).digest('hex'), createHash('sha256').update(picture).digest('hex'), 'the bytes come back whole')
  t.equal(down.data?.type, 'image/png')
  const unseen = await asBob.download(`${alice}/me.png`)
  t.match(unseen.error, { status: 400 }, "bob cannot read alice's object")

  const dup = await asAlice.upload(`${alice}/me.png`, new Blob(['again'], { type: 'image/png' }))
  t.match(dup.error, { statusCode: '409' }, 'an existing key is not overwritten without upsert')
  const replaced = await asAlice.upload(`${alice}/me.png`, new Blob(['second'], { type: 'text/plain' }), { upsert: true })
  t.equal(replaced.error, null)
  t.equal(await (await asAlice.download(`${alice}/me.png`)).data?.text(), 'second', 'upsert replaced the bytes')

  const info = await asAlice.info(`${alice}/me.png`)
  t.equal(info.error, null)
  t.match(info.data, { name: `${alice}/me.png`, bucketId: 'avatars', size: 6, contentType: 'text/plain' })
  t.same((await asAlice.exists(`${alice}/me.png`)).data, true)
  t.same((await asAlice.exists(`${alice}/none.png`)).data, false)

  t.equal((await asAlice.upload(`${alice}/trips/rome.txt`, 'rome', { contentType: 'text/plain' })).error, null)
  const listed = await asAlice.list(alice)
  t.equal(listed.error, null)
  t.same(listed.data?.map((item) => [item.name, item.id === null]), [['trips', true], ['me.png', false]], 'a folder, then the file beside it')
  const bobSees = await asBob.list(alice)
  t.same(bobSees.data, [], 'listing shows only what the policies let the caller read')

  t.equal((await asAlice.move(`${alice}/trips/rome.txt`, `${alice}/trips/roma.txt`)).error, null)
  t.equal(await (await asAlice.download(`${alice}/trips/roma.txt`)).data?.text(), 'rome')
  const copied = await asAlice.copy(`${alice}/trips/roma.txt`, `${alice}/copy.txt`)
  t.equal(copied.error, null)
  t.equal(copied.data?.path, `avatars/${alice}/copy.txt`)
  t.equal(await (await asAlice.download(`${alice}/copy.txt`)).data?.text(), 'rome')

  const removed = await asAlice.remove([`${alice}/copy.txt`, `${alice}/trips/roma.txt`])
  t.equal(removed.error, null)
  t.equal(removed.data?.length, 2)
  t.match((await asAlice.download(`${alice}/copy.txt`)).error, { status: 400 })
})

t.test('a bucket refuses what its settings forbid, and a path that leaves the bucket', async (t) => {
  const files = admin.storage.from('avatars')
  const big = await files.upload('big.txt', new Blob([await bytesOf(1024 * 1024 + 1)], { type: 'text/plain' }))
  t.match(big.error, { statusCode: '413' }, 'past the bucket file_size_limit')
  const pdf = await files.upload('doc.pdf', new Blob(['%PDF'], { type: 'application/pdf' }))
  t.match(pdf.error, { statusCode: '415', message: 'mime type application/pdf is not supported' })
  // Sent as written (fetch would resolve the dots itself): climbing, encoded dots and slashes, NUL, an empty segment.
  for (const path of ['../escape.txt', 'a/../../b.txt', '%2E%2E/b.txt', 'a%2Fb.txt', 'a%00b.txt', 'a//b.txt', '%E0%A4%A.txt']) {
    const answer = await rawUpload(`/storage/v1/object/avatars/${path}`, 'x')
    t.equal(answer.status, 400, `${path} is refused`)
    t.match(JSON.parse(answer.text), { statusCode: '400', code: /^Invalid(Key|BucketName)$/ })
  }
  const listed = await files.list()
  t.equal(listed.error, null)
  t.notOk(listed.data?.some((item) => item.name === 'big.txt' || item.name === 'doc.pdf'), 'nothing of the refused uploads was kept')
})

t.test('another project sees none of it', async (t) => {
  const other = await fixture.createProject({ name: 'Neighbour' })
  const buckets = await serviceClient(other).storage.listBuckets()
  t.equal(buckets.error, null)
  t.same(buckets.data, [])
  const read = await serviceClient(other).storage.from('avatars').download('anything')
  t.match(read.error, { status: 400 })
})

t.test('a fleet on local disk: a node on the same folder joins and serves the objects; one on a folder of its own refuses', async (t) => {
  const sharing = await fixture.startAnotherNode()
  const there = createClient(project.baseUrl.replace(fixture.origin, `http://127.0.0.1:${sharing.port}`), project.serviceRoleKey, { auth: { persistSession: false } })
  t.equal((await admin.storage.from('avatars').upload('shared/disk.txt', 'on the shared disk', { contentType: 'text/plain' })).error, null)
  t.equal(await (await there.storage.from('avatars').download('shared/disk.txt')).data?.text(), 'on the shared disk')
  const own = fs.mkdtempSync(path.join(os.tmpdir(), 'baseplane-own-disk-'))
  t.teardown(() => fs.rmSync(own, { recursive: true, force: true }))
  await t.rejects(fixture.startAnotherNode({ env: { BASEPLANE_STORAGE_ROOT: own } }), { message: /BASEPLANE_STORAGE_BACKEND is local disk with shared-disk marker .* here but local disk with shared-disk marker/ })
})
