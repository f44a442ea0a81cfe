// `baseplane storage buckets|ls|rm|usage REF ...` (the operations of
// control-plane/storage-admin.ts, as the dashboard's Storage tab's), against
// objects uploaded through the project's own Storage API, with --json and
// the refusals. Each run is a new process: the file keeps to a few.
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { runCli } from '../helpers/cli.ts'
import { startTestPlatform } from '../helpers/platform.ts'
import { serviceClient } from '../storage/helpers.ts'

const platform = await startTestPlatform(t)
const project = await platform.createProject({ name: 'Cli Storage' })
const storage = platform.config.storage
if (storage.kind !== 'local') throw new Error('the test platform keeps bytes on local disk')
const port = new URL(platform.origin).port
// The CLI's own Storage setting names the platform's store, as an operator's would.
const baseplane = (args: string[]) => runCli(args, { DATABASE_URL: platform.catalogueUrl, PORT: port, BASEPLANE_STORAGE_ROOT: storage.root })

const admin = serviceClient(project)
await admin.storage.createBucket('docs', { public: true, fileSizeLimit: '2MB', allowedMimeTypes: ['text/plain'] })
for (const key of ['readme.txt', 'guides/one.txt', 'guides/two.txt']) {
  const { error } = await admin.storage.from('docs').upload(key, new Blob([`body of ${key}`], { type: 'text/plain' }))
  if (error) throw error
}

t.test('buckets and usage', async (t) => {
  const buckets = await baseplane(['storage', 'buckets', project.ref])
  t.equal(buckets.code, 0, buckets.stderr)
  t.match(buckets.stdout, /^BUCKET\s+PUBLIC\s+FILE SIZE LIMIT\s+ALLOWED TYPES\s+OBJECTS\s+SIZE\n/)
  t.match(buckets.stdout, /docs\s+yes\s+2\.0 MB\s+text\/plain\s+3\s+\d+ bytes/)
  const json = JSON.parse((await baseplane(['storage', 'buckets', project.ref, '--json'])).stdout)
  t.match(json, { ref: project.ref, buckets: [{ id: 'docs', public: true, file_size_limit: 2 * 1024 * 1024, allowed_mime_types: ['text/plain'], objects: 3 }] })
  const usage = await baseplane(['storage', 'usage', project.ref, '--json'])
  t.equal(usage.code, 0, usage.stderr)
  t.match(JSON.parse(usage.stdout), { ref: project.ref, objects: 3, buckets: 1, bytes: json.buckets[0].bytes })
})

t.test('ls a folder level, then rm an object and its bytes', async (t) => {
  const top = await baseplane(['storage', 'ls', project.ref, 'docs'])
  t.equal(top.code, 0, top.stderr)
  t.match(top.stdout, /^NAME\s+SIZE\s+TYPE\s+UPDATED\nguides\/\s+folder\s*\nreadme\.txt\s+\d+ bytes\s+text\/plain\s+\S+\n$/)
  const inner = JSON.parse((await baseplane(['storage', 'ls', project.ref, 'docs', 'guides', '--limit', '1', '--json'])).stdout)
  t.match(inner, { bucket: 'docs', prefix: 'guides/', entries: [{ name: 'one.txt', kind: 'file', key: 'guides/one.txt' }], next_offset: 1 })

  const files = () => fs.readdirSync(path.join(storage.root, project.ref)).length
  const before = files()
  const unconfirmed = await baseplane(['storage', 'rm', project.ref, 'docs', 'guides/one.txt'])
  t.equal(unconfirmed.code, 2, 'without --yes: a usage error')
  t.match(unconfirmed.stderr, 'add --yes')
  const removed = await baseplane(['storage', 'rm', project.ref, 'docs', 'guides/one.txt', '--yes'])
  t.equal(removed.code, 0, removed.stderr)
  t.equal(removed.stdout, 'Removed docs/guides/one.txt.\n')
  t.equal(files(), before - 1, 'its bytes are gone')
  const { data } = await admin.storage.from('docs').list('guides')
  t.same(data?.map((o) => o.name), ['two.txt'], 'the API no longer lists it')
  const again = await baseplane(['storage', 'rm', project.ref, 'docs', 'guides/one.txt', '--yes'])
  t.equal(again.code, 1)
  t.match(again.stderr, /no object "guides\/one\.txt"/)
  const noBucket = await baseplane(['storage', 'ls', project.ref, 'nope'])
  t.equal(noBucket.code, 1)
  t.match(noBucket.stderr, /no bucket "nope"/)
})
