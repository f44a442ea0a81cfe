// Resumable uploads (issue 39 item 5): TUS 1.0 at /storage/v1/upload/resumable
// through the unmodified tus-js-client as Supabase's docs set it up (6 MB
// chunks, the caller's token, metadata bucketName/objectName/contentType/
// cacheControl, x-upsert): a 13 MB upload under the caller's policies, one cut
// off after its first chunk and resumed from where it stopped, and the
// refusals (no bucket, a policy, a type, a size) before any byte is kept.
import { createHash } from 'node:crypto'
import t from 'tap'
import * as tus from 'tus-js-client'
import { startTestPlatform, type TestProject } from '../helpers/platform.ts'
import { bytesOf, ownerOf, serviceClient, succeeded, userClient, userToken } from './helpers.ts'

const fixture = await startTestPlatform(t, { BASEPLANE_HTTP_ENGINE: 'uws' })
const project = await fixture.createProject({ name: 'Resumable' })
const admin = serviceClient(project)
const owner = await ownerOf(t, project)
await owner.query(`
  create policy "own folder: read" on storage.objects for select to authenticated
    using (bucket_id = 'videos' and (storage.foldername(name))[1] = (select auth.uid()::text));
  create policy "own folder: upload" on storage.objects for insert to authenticated
    with check (bucket_id = 'videos' and (storage.foldername(name))[1] = (select auth.uid()::text));
`)
succeeded(await admin.storage.createBucket('videos', { public: false, allowedMimeTypes: ['video/*', 'application/octet-stream'], fileSizeLimit: '30MB' }))

interface Sent {
  url: string | null
  error: Error | null
  firstOffset: number | null
}

/** One tus-js-client upload of `bytes` as Supabase's docs configure it; `stopAfter` aborts it after that many chunks. */
function send(target: TestProject, token: string, bytes: Uint8Array, objectName: string, options: { uploadUrl?: string; stopAfter?: number; contentType?: string; bucket?: string } = {}): Promise<Sent> {
  return new Promise((resolve) => {
    let chunks = 0
    let firstOffset: number | null = null
    const upload: tus.Upload = new tus.Upload(Buffer.from(bytes), {
      endpoint: `${target.baseUrl}/storage/v1/upload/resumable`,
      ...(options.uploadUrl ? { uploadUrl: options.uploadUrl } : {}),
      retryDelays: [],
      headers: { authorization: `Bearer ${token}`, 'x-upsert': 'false' },
      uploadDataDuringCreation: true,
      removeFingerprintOnSuccess: true,
      metadata: { bucketName: options.bucket ?? 'videos', objectName, contentType: options.contentType ?? 'video/mp4', cacheControl: '3600' },
      chunkSize: 6 * 1024 * 1024,
      onProgress: (sent) => {
        firstOffset ??= sent
      },
      onChunkComplete: () => {
        chunks++
        if (options.stopAfter !== undefined && chunks >= options.stopAfter) {
          void upload.abort().then(() => resolve({ url: upload.url, error: null, firstOffset }))
        }
      },
      onError: (error) => resolve({ url: upload.url, error, firstOffset }),
      onSuccess: () => resolve({ url: upload.url, error: null, firstOffset }),
    })
    upload.start()
  })
}

t.test('a 13 MB upload in 6 MB chunks, under the caller\'s policies', async (t) => {
  const sub = crypto.randomUUID()
  const bytes = await bytesOf(13 * 1024 * 1024, 3)
  const sent = await send(project, userToken(project, sub), bytes, `${sub}/clip.mp4`)
  t.equal(sent.error, null)
  t.match(sent.url, new RegExp(`^${project.baseUrl}/storage/v1/upload/resumable/[0-9a-f-]{36}$`))
  const down = await userClient(project, sub).storage.from('videos').download(`${sub}/clip.mp4`)
  t.equal(down.error, null)
  const back = Buffer.from(await down.data!.arrayBuffer())
  t.equal(createHash('sha256').update(back).digest('hex'), createHash('sha256').update(bytes).digest('hex'), 'the bytes as sent')
  const info = await userClient(project, sub).storage.from('videos').info(`${sub}/clip.mp4`)
  t.match(info.data, { size: bytes.byteLength, contentType: 'video/mp4', cacheControl: 'max-age=3600', etag: `"${createHash('md5').update(bytes).digest('hex')}"` })
})

t.test('an upload cut off after its first chunk resumes where it stopped', async (t) => {
  const sub = crypto.randomUUID()
  const token = userToken(project, sub)
  const bytes = await bytesOf(14 * 1024 * 1024, 5)
  const first = await send(project, token, bytes, `${sub}/long.mp4`, { stopAfter: 1 })
  t.equal(first.error, null)
  t.ok(first.url)
  const half = await userClient(project, sub).storage.from('videos').exists(`${sub}/long.mp4`)
  t.equal(half.data, false, 'no object until the last chunk')
  const rest = await send(project, token, bytes, `${sub}/long.mp4`, { uploadUrl: first.url! })
  t.equal(rest.error, null)
  t.ok((rest.firstOffset ?? 0) >= 6 * 1024 * 1024, `resumed at ${rest.firstOffset}, not from the start`)
  const down = await userClient(project, sub).storage.from('videos').download(`${sub}/long.mp4`)
  t.equal(createHash('sha256').update(Buffer.from(await down.data!.arrayBuffer())).digest('hex'), createHash('sha256').update(bytes).digest('hex'))
})

t.test('refused before a byte is kept: no bucket, a policy, a type, a size', async (t) => {
  const sub = crypto.randomUUID()
  const token = userToken(project, sub)
  const small = await bytesOf(1024)
  const noBucket = await send(project, token, small, `${sub}/a.mp4`, { bucket: 'nope' })
  t.match(noBucket.error?.message, /Bucket not found/)
  const policy = await send(project, token, small, `someone-else/a.mp4`)
  t.match(policy.error?.message, /row-level security/)
  const type = await send(project, token, small, `${sub}/a.txt`, { contentType: 'text/plain' })
  t.match(type.error?.message, /mime type text\/plain is not supported/)
  const big = await send(project, token, await bytesOf(31 * 1024 * 1024), `${sub}/big.mp4`)
  t.match(big.error?.message, /exceeded the maximum allowed size|413/)
  const { rows } = await owner.query(`select count(*)::int as n from storage.objects where bucket_id = 'videos' and name like $1`, [`${sub}/%`])
  t.equal(rows[0].n, 0, 'no rows were written')
})
