// Storage's URLs and HTTP semantics (issue 39 items 2, 3 and 7) through the
// unmodified supabase-js: public objects for anyone, signed URLs (one, a
// batch, download names, expiry, an altered token or path refused), signed
// uploads, Range, ETag with If-None-Match, Last-Modified and Cache-Control as
// stored, a 12 MB object streamed both ways, and image transformations on the
// plans that offer them.
import { createHash } from 'node:crypto'
import sharp from 'sharp'
import t from 'tap'
import { startTestPlatform } from '../helpers/platform.ts'
import { bytesOf, ownerOf, serviceClient, succeeded, userClient } from './helpers.ts'

const fixture = await startTestPlatform(t, { BASEPLANE_HTTP_ENGINE: 'uws' })
const project = await fixture.createProject({ name: 'Storage URLs', plan: 'pro' })
const admin = serviceClient(project)
const owner = await ownerOf(t, project)
await owner.query(`
  create policy "signed in users read the album" on storage.objects for select to authenticated using (bucket_id = 'album');
  create policy "signed in users add to the album" on storage.objects for insert to authenticated with check (bucket_id = 'album');
`)
succeeded(await admin.storage.createBucket('album', { public: false }))
succeeded(await admin.storage.createBucket('site', { public: true }))
const png = new Uint8Array(await sharp({ create: { width: 400, height: 200, channels: 3, background: '#3366ff' } }).png().toBuffer())
succeeded(await admin.storage.from('site').upload('img/banner.png', new Blob([png], { type: 'image/png' }), { cacheControl: '120' }))
succeeded(await admin.storage.from('album').upload('pic.png', new Blob([png], { type: 'image/png' })))

t.test('a public bucket serves anyone; a private one is not found that way', async (t) => {
  const url = admin.storage.from('site').getPublicUrl('img/banner.png').data.publicUrl
  const answer = await fetch(url)
  t.equal(answer.status, 200)
  t.equal(answer.headers.get('content-type'), 'image/png')
  t.equal(answer.headers.get('cache-control'), 'max-age=120')
  t.equal(answer.headers.get('content-length'), String(png.byteLength))
  t.same(new Uint8Array(await answer.arrayBuffer()), png)
  const download = await fetch(admin.storage.from('site').getPublicUrl('img/banner.png', { download: 'banner-copy.png' }).data.publicUrl)
  t.match(download.headers.get('content-disposition'), /^attachment; filename="banner-copy.png"/)
  await download.arrayBuffer()
  const hidden = await fetch(admin.storage.from('album').getPublicUrl('pic.png').data.publicUrl)
  t.equal(hidden.status, 400)
  t.match(await hidden.json(), { statusCode: '404', code: 'NoSuchKey' })
})

t.test('Range, ETag with If-None-Match, Last-Modified', async (t) => {
  const url = admin.storage.from('site').getPublicUrl('img/banner.png').data.publicUrl
  const part = await fetch(url, { headers: { range: 'bytes=10-19' } })
  t.equal(part.status, 206)
  t.equal(part.headers.get('content-range'), `bytes 10-19/${png.byteLength}`)
  t.same(new Uint8Array(await part.arrayBuffer()), png.subarray(10, 20))
  const tail = await fetch(url, { headers: { range: 'bytes=-5' } })
  t.same(new Uint8Array(await tail.arrayBuffer()), png.subarray(png.byteLength - 5))
  const beyond = await fetch(url, { headers: { range: `bytes=${png.byteLength + 10}-` } })
  t.equal(beyond.status, 416)
  await beyond.arrayBuffer()
  const whole = await fetch(url)
  const etag = whole.headers.get('etag')!
  t.equal(etag, `"${createHash('md5').update(png).digest('hex')}"`, "the ETag is the bytes' md5")
  t.ok(Date.parse(whole.headers.get('last-modified')!) > Date.now() - 60_000)
  await whole.arrayBuffer()
  const again = await fetch(url, { headers: { 'if-none-match': etag } })
  t.equal(again.status, 304)
})

t.test('signed URLs: one and a batch, with a download name; expired or altered ones refused', async (t) => {
  const user = userClient(project, crypto.randomUUID()).storage.from('album')
  const one = await user.createSignedUrl('pic.png', 60, { download: true })
  t.equal(one.error, null)
  const got = await fetch(one.data!.signedUrl)
  t.equal(got.status, 200)
  t.match(got.headers.get('content-disposition'), /filename="pic.png"/)
  t.same(new Uint8Array(await got.arrayBuffer()), png)

  const batch = await user.createSignedUrls(['pic.png', 'missing.png'], 60)
  t.equal(batch.error, null)
  t.equal(batch.data?.[0]?.error, null)
  t.match(batch.data?.[1], { path: 'missing.png', signedUrl: null, error: 'Either the object does not exist or you do not have access to it' })
  t.equal((await fetch(batch.data![0]!.signedUrl!)).status, 200)

  const anonymous = await userClient(project).storage.from('album').createSignedUrl('pic.png', 60)
  t.match(anonymous.error, { statusCode: '404' }, 'signing needs the select policy')

  const token = new URL(one.data!.signedUrl).searchParams.get('token')!
  const otherPath = one.data!.signedUrl.replace('/album/pic.png', '/album/other.png')
  const moved = await fetch(otherPath)
  t.equal(moved.status, 400)
  t.match(await moved.json(), { code: 'InvalidSignature' })
  const tampered = await fetch(one.data!.signedUrl.replace(token, `${token.slice(0, -2)}xx`))
  t.match(await tampered.json(), { statusCode: '400', code: 'InvalidJWT' })
  const short = await user.createSignedUrl('pic.png', 1)
  await new Promise((resolve) => setTimeout(resolve, 2100))
  const expired = await fetch(short.data!.signedUrl)
  t.match(await expired.json(), { code: 'InvalidJWT', message: 'jwt expired' })
})

t.test('signed upload URLs: made under the insert policy, used without a key', async (t) => {
  const sub = crypto.randomUUID()
  const user = userClient(project, sub).storage.from('album')
  const signed = await user.createSignedUploadUrl('uploads/note.txt')
  t.equal(signed.error, null)
  const used = await userClient(project).storage.from('album').uploadToSignedUrl('uploads/note.txt', signed.data!.token, new Blob(['signed!'], { type: 'text/plain' }))
  t.equal(used.error, null)
  t.equal(used.data?.fullPath, 'album/uploads/note.txt')
  const row = await owner.query('select owner_id from storage.objects where bucket_id = $1 and name = $2', ['album', 'uploads/note.txt'])
  t.equal(row.rows[0]?.owner_id, sub, "owned by the signer")
  t.equal(await (await user.download('uploads/note.txt')).data?.text(), 'signed!')
  const replay = await userClient(project).storage.from('album').uploadToSignedUrl('uploads/note.txt', signed.data!.token, new Blob(['again'], { type: 'text/plain' }))
  t.match(replay.error, { statusCode: '409' }, 'the token does not overwrite without upsert')
  const refused = await userClient(project).storage.from('site').createSignedUploadUrl('x.txt')
  t.match(refused.error, { statusCode: '403' }, 'no insert policy, no signed upload')
})

t.test('a 12 MB object streams in and out whole', async (t) => {
  const big = await bytesOf(12 * 1024 * 1024, 11)
  const up = await admin.storage.from('album').upload('big.bin', new Blob([big], { type: 'application/octet-stream' }))
  t.equal(up.error, null)
  const down = await admin.storage.from('album').download('big.bin')
  t.equal(down.error, null)
  const back = Buffer.from(await down.data!.arrayBuffer())
  t.equal(back.byteLength, big.byteLength)
  t.equal(createHash('sha256').update(back).digest('hex'), createHash('sha256').update(big).digest('hex'))
})

t.test('image transformations: resized, negotiated, signed, cached; not on the free plan', async (t) => {
  const album = admin.storage.from('album')
  const thumb = await album.download('pic.png', { transform: { width: 100, height: 100, resize: 'cover' } })
  t.equal(thumb.error, null)
  const meta = await sharp(Buffer.from(await thumb.data!.arrayBuffer())).metadata()
  t.match(meta, { width: 100, height: 100 })
  const url = admin.storage.from('site').getPublicUrl('img/banner.png', { transform: { width: 200 } }).data.publicUrl
  const webp = await fetch(url, { headers: { accept: 'image/webp,*/*' } })
  t.equal(webp.headers.get('content-type'), 'image/webp')
  t.equal(webp.headers.get('vary'), 'Accept')
  t.match(await sharp(Buffer.from(await webp.arrayBuffer())).metadata(), { width: 200, height: 100, format: 'webp' })
  const kept = await fetch(url, { headers: { accept: 'image/webp,*/*' } })
  t.equal(kept.headers.get('content-type'), 'image/webp', 'the cached rendering keeps its type')
  t.match(await sharp(Buffer.from(await kept.arrayBuffer())).metadata(), { width: 200, format: 'webp' })
  const signed = await album.createSignedUrl('pic.png', 60, { transform: { width: 50, height: 50, resize: 'contain' } })
  t.equal(signed.error, null)
  t.match(signed.data?.signedUrl, /\/render\/image\/sign\/album\/pic\.png\?token=/)
  const small = await fetch(signed.data!.signedUrl)
  t.equal(small.status, 200)
  t.match(await sharp(Buffer.from(await small.arrayBuffer())).metadata(), { width: 50, height: 25 })
  const bad = await album.download('pic.png', { transform: { quality: 5 } })
  t.match(bad.error, { status: 400 })

  const free = await fixture.createProject({ name: 'Free storage' })
  const freeAdmin = serviceClient(free)
  t.equal((await freeAdmin.storage.createBucket('b')).error, null)
  t.equal((await freeAdmin.storage.from('b').upload('p.png', new Blob([png], { type: 'image/png' }))).error, null)
  const refused = await freeAdmin.storage.from('b').download('p.png', { transform: { width: 10 } })
  t.match(refused.error, { status: 403 })
})
