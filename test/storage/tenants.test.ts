// A tenant is a tenant in Storage too (issue 39 item 8): one project's slow
// uploads hold only its own share of the Storage thread, so another project's
// upload is served at once; a truncated or malformed upload is refused in
// Storage's shape and leaves nothing; a suspended project serves nothing.
import http from 'node:http'
import t from 'tap'
import { projectQuotas, setQuotaOverrides, watchQuotas } from '../../control-plane/quotas.ts'
import { suspendProject } from '../../control-plane/suspension.ts'
import { sampleDatabaseSizes } from '../../control-plane/usage-upkeep.ts'
import { startTestPlatform, type TestProject } from '../helpers/platform.ts'
import { ownerOf, serviceClient, succeeded } from './helpers.ts'
import { exchange, rawRequest } from '../helpers/raw-http.ts'

const fixture = await startTestPlatform(t, { BASEPLANE_HTTP_ENGINE: 'uws' })
const busy = await fixture.createProject({ name: 'Busy uploader' })
const quiet = await fixture.createProject({ name: 'Quiet neighbour' })
succeeded(await serviceClient(busy).storage.createBucket('files'))
succeeded(await serviceClient(quiet).storage.createBucket('files'))

/** An upload whose headers promise `length` bytes; `send` what is written of it (the rest never comes unless `end`). */
function upload(project: TestProject, key: string, length: number, body: Buffer | string, options: { end?: boolean; type?: string } = {}): { answer: Promise<{ status: number; text: string }>; request: http.ClientRequest } {
  const base = new URL(project.baseUrl)
  const request = http.request({
    host: base.hostname,
    port: base.port,
    method: 'POST',
    path: `${base.pathname}/storage/v1/object/files/${key}`,
    headers: { apikey: project.serviceRoleKey, authorization: `Bearer ${project.serviceRoleKey}`, 'content-type': options.type ?? 'application/octet-stream', 'content-length': String(length) },
  })
  const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
    request.on('response', (res) => {
      let text = ''
      res.on('data', (chunk: Buffer) => (text += chunk.toString()))
      res.on('end', () => resolve({ status: res.statusCode!, text }))
    })
    request.on('error', reject)
  })
  request.write(body)
  if (options.end !== false) request.end()
  return { answer, request }
}

t.test("one project's stalled uploads do not hold up another's", async (t) => {
  // More stalled uploads than the busy project may run at once on the thread (free: 16 transfers).
  const stalled = Array.from({ length: 24 }, (_, i) => upload(busy, `stalled-${i}.bin`, 1024 * 1024, Buffer.alloc(1024), { end: false }))
  t.teardown(() => stalled.forEach(({ request }) => request.destroy()))
  for (const { answer } of stalled) answer.catch(() => {})
  await new Promise((resolve) => setTimeout(resolve, 300))
  const started = Date.now()
  const neighbour = await serviceClient(quiet).storage.from('files').upload('now.txt', 'served at once', { contentType: 'text/plain' })
  t.equal(neighbour.error, null)
  t.ok(Date.now() - started < 3000, `the neighbour's upload took ${Date.now() - started} ms`)
  t.equal(await (await serviceClient(quiet).storage.from('files').download('now.txt')).data?.text(), 'served at once')
})

t.test('a truncated or malformed upload is refused and leaves nothing', async (t) => {
  const owner = await ownerOf(t, quiet)
  const short = upload(quiet, 'short.bin', 100, Buffer.alloc(10), { end: false })
  await new Promise((resolve) => setTimeout(resolve, 200))
  short.request.destroy()
  await short.answer.catch(() => undefined)
  const cut = '--xyz\r\nContent-Disposition: form-data; name=""; filename="a"\r\n\r\nabc'
  const form = upload(quiet, 'form.bin', Buffer.byteLength(cut), cut, { type: 'multipart/form-data; boundary=xyz' })
  const refused = await form.answer
  t.equal(refused.status, 400)
  t.match(JSON.parse(refused.text), { statusCode: '400', code: 'InvalidRequest' })
  const noBoundary = await upload(quiet, 'form2.bin', 5, 'hello', { type: 'multipart/form-data' }).answer
  t.equal(noBoundary.status, 400)
  const rows = await owner.query(`select name from storage.objects where bucket_id = 'files' and name in ('short.bin', 'form.bin', 'form2.bin')`)
  t.same(rows.rows, [], 'no row of any of them')
})

t.test('a refused upload is answered while its body still comes, and the connection serves the next request', async (t) => {
  const port = Number(new URL(quiet.baseUrl).port)
  const path = new URL(quiet.baseUrl).pathname
  const headers = { apikey: quiet.serviceRoleKey, authorization: `Bearer ${quiet.serviceRoleKey}`, 'content-type': 'application/octet-stream' }
  const body = 'x'.repeat(2 * 1024 * 1024)
  const both = await exchange(port, [rawRequest('POST', `${path}/storage/v1/object/no-such-bucket/a.bin`, headers, body), rawRequest('GET', `${path}/storage/v1/bucket`, headers)], { expect: 2, afterAnswers: true })
  t.equal(both.responses.length, 2, 'both answered on one connection')
  t.equal(both.responses[0]?.status, 400)
  t.match(JSON.parse(both.responses[0]!.body), { code: 'NoSuchBucket' })
  t.equal(both.responses[1]?.status, 200)
  t.equal(both.closed, false)
})

t.test("a storage size cap refuses what would pass it, from the project's own record of its bytes", async (t) => {
  await setQuotaOverrides(fixture.platform.controlPlane, quiet.ref, { policy: 'cap', figures: { storage_size_bytes: 100 * 1024 } })
  const files = serviceClient(quiet).storage.from('files')
  t.equal((await files.upload('q/one.bin', new Blob([new Uint8Array(60 * 1024)]))).error, null)
  const second = await files.upload('q/two.bin', new Blob([new Uint8Array(60 * 1024)]))
  t.match(second.error, { statusCode: '403', message: /storage has reached its size quota of 100 KB|storage has reached its size quota of 102,400 bytes/ })
  t.equal((await files.exists('q/two.bin')).data, false, 'nothing of it was kept')
  const view = await projectQuotas(fixture.platform.controlPlane, quiet.ref)
  t.ok(view.used.storage_size_bytes! >= 60 * 1024, `the quota's view shows what is stored (${view.used.storage_size_bytes})`)
  await sampleDatabaseSizes(fixture.platform.controlPlane)
  const sampled = await fixture.platform.controlPlane.catalogue.query<{ last_bytes: string }>('select last_bytes from baseplane.usage_storage_sizes where ref = $1', [quiet.ref])
  t.ok(Number(sampled.rows[0]?.last_bytes) >= 60 * 1024, "the usage's sample counts the stored bytes")
  t.equal((await files.remove(['q/one.bin'])).error, null)
  t.equal((await files.upload('q/two.bin', new Blob([new Uint8Array(60 * 1024)]))).error, null, 'room again once objects are removed')
  await setQuotaOverrides(fixture.platform.controlPlane, quiet.ref, { policy: null, figures: { storage_size_bytes: null } })
})

t.test('a storage egress cap: once the month has sent past it, downloads are refused; uploads are not', async (t) => {
  const files = serviceClient(quiet).storage.from('files')
  t.equal((await files.upload('egress/a.bin', new Blob([new Uint8Array(60 * 1024)]))).error, null)
  await setQuotaOverrides(fixture.platform.controlPlane, quiet.ref, { policy: 'cap', figures: { storage_egress_bytes: 50 * 1024 } })
  t.equal((await files.download('egress/a.bin')).error, null, 'under the figure: served')
  await fixture.platform.usage!.flush()
  await watchQuotas(fixture.platform.controlPlane)
  const refused = await files.download('egress/a.bin')
  t.match(refused.error, { statusCode: '403', message: /monthly quota of 51,200 bytes storage egress/ })
  t.equal((await files.upload('egress/b.bin', 'still taken', { contentType: 'text/plain' })).error, null, 'uploads are still taken')
  const view = await projectQuotas(fixture.platform.controlPlane, quiet.ref)
  t.ok(view.used.storage_egress_bytes! >= 60 * 1024, `the month's egress is counted (${view.used.storage_egress_bytes})`)
  await setQuotaOverrides(fixture.platform.controlPlane, quiet.ref, { policy: null, figures: { storage_egress_bytes: null } })
  await watchQuotas(fixture.platform.controlPlane)
  t.equal((await files.download('egress/a.bin')).error, null, 'served again once the cap is lifted')
})

t.test('a suspended project serves nothing of Storage', async (t) => {
  await suspendProject(fixture.platform.controlPlane, busy.ref, 'unpaid')
  const refused = await serviceClient(busy).storage.listBuckets()
  t.match(refused.error, { statusCode: '403', message: /suspended/ })
  const download = await fetch(`${busy.baseUrl}/storage/v1/object/public/files/x`)
  t.equal(download.status, 403)
  t.match(await download.json(), { code: 'project_suspended' })
})
