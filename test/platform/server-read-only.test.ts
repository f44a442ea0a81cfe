// A read-only refusal the server causes is a 503 with Retry-After in every
// service's shape (issue 43 item 1): while a promotion is under way HAProxy
// may send writes to a PostgreSQL still running read-only, and a client never
// retries the 405 (or 400, 500) that "cannot execute INSERT in a read-only
// transaction" used to answer. The server's state is made here as a standby
// has it: every new session of the project's database read-only
// (default_transaction_read_only), the open ones ended. Reads still answer;
// once the server is writable again, writes answer without a restart. The
// size quota's own read-only refusal is unchanged (test/platform/quotas*).
import { createClient } from '@supabase/supabase-js'
import pg, { escapeIdentifier } from 'pg'
import t from 'tap'
import { ownerUrlOf } from '../../lib/catalogue.ts'
import { signJwt } from '../../lib/jwt.ts'
import { adminQuery, serverUrl } from '../helpers/db.ts'
import { request } from '../helpers/http.ts'
import { startTestPlatform } from '../helpers/platform.ts'

const fixture = await startTestPlatform(t)
const project = await fixture.createProject({ name: 'Read-only server', auth: true, push: true })
const server = await serverUrl()
const database = project.record.dbName

const owner = new pg.Client({ connectionString: ownerUrlOf(project.record) })
await owner.connect()
await owner.query(`
  create table public.notes (id serial primary key, body text not null);
  alter table public.notes enable row level security;
  create policy notes_all on public.notes for all to anon using (true) with check (true);
  grant select, insert on public.notes to anon; grant usage on sequence public.notes_id_seq to anon;
  insert into public.notes (body) values ('before');
`)
await owner.end()

async function readOnlyServer(on: boolean): Promise<void> {
  await adminQuery(server, `alter database ${escapeIdentifier(database)} ${on ? 'set default_transaction_read_only = on' : 'reset default_transaction_read_only'}`)
  // Sessions open before keep what they started with: ended, as a promotion ends them.
  await adminQuery(server, 'select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [database])
}

const options = { auth: { persistSession: false, autoRefreshToken: false } }
const supabase = createClient(project.baseUrl, project.anonKey, options)
const service = createClient(project.baseUrl, project.serviceRoleKey, options)
const user = signJwt(project.record.jwtSecret, { sub: '00000000-0000-4000-8000-000000000042', role: 'authenticated', aud: 'authenticated', exp: Math.floor(Date.now() / 1000) + 600 })

const bucket = await service.storage.createBucket('files')
if (bucket.error) throw bucket.error

t.test('while the server is read-only: reads answer, every write is 503 with Retry-After', async (t) => {
  await readOnlyServer(true)
  t.teardown(() => readOnlyServer(false))

  const read = await supabase.from('notes').select('body')
  t.same([read.error, read.data], [null, [{ body: 'before' }]], 'REST reads still answer')

  const rest = await request<{ code?: string }>(`${project.baseUrl}/rest/v1/notes`, { headers: { apikey: project.anonKey }, body: { body: 'during' } })
  t.same({ status: rest.status, retryAfter: rest.headers['retry-after'] !== undefined }, { status: 503, retryAfter: true }, `REST insert: ${rest.text}`)
  t.equal(typeof rest.json.code, 'string', "in PostgREST's error shape")

  const graphql = await request<{ errors?: unknown }>(`${project.baseUrl}/graphql/v1`, {
    headers: { apikey: project.anonKey },
    body: { query: 'mutation { insertIntonotesCollection(objects: [{body: "during"}]) { affectedCount } }' },
  })
  t.same({ status: graphql.status, retryAfter: graphql.headers['retry-after'] !== undefined }, { status: 503, retryAfter: true }, `GraphQL mutation: ${graphql.text}`)

  const signUp = await request<{ error_code?: string; code?: number }>(`${project.baseUrl}/auth/v1/signup`, {
    headers: { apikey: project.anonKey },
    body: { email: 'standby@example.test', password: 'a long enough password' },
  })
  t.same({ status: signUp.status, retryAfter: signUp.headers['retry-after'] !== undefined }, { status: 503, retryAfter: true }, `Auth sign-up: ${signUp.text}`)

  const upload = await request(`${project.baseUrl}/storage/v1/object/files/a.txt`, {
    method: 'POST',
    headers: { apikey: project.serviceRoleKey, authorization: `Bearer ${project.serviceRoleKey}`, 'content-type': 'text/plain' },
    body: 'hello',
  })
  t.same({ status: upload.status, retryAfter: upload.headers['retry-after'] !== undefined }, { status: 503, retryAfter: true }, `Storage upload: ${upload.text}`)

  const device = await request(`${project.baseUrl}/push/v1/devices`, {
    headers: { apikey: project.anonKey, authorization: `Bearer ${user}` },
    body: { platform: 'apns', token: 'b'.repeat(64) },
  })
  t.same({ status: device.status, retryAfter: device.headers['retry-after'] !== undefined }, { status: 503, retryAfter: true }, `Push device: ${device.text}`)
})

t.test('writable again: every write answers, without a restart', async (t) => {
  const insert = await supabase.from('notes').insert({ body: 'after' }).select('body')
  t.same([insert.error, insert.data], [null, [{ body: 'after' }]], 'REST insert')
  const signUp = await supabase.auth.signUp({ email: 'after@example.test', password: 'a long enough password' })
  t.equal(signUp.error, null, 'Auth sign-up')
  const upload = await service.storage.from('files').upload('b.txt', 'hello', { contentType: 'text/plain' })
  t.equal(upload.error, null, 'Storage upload')
  const rows = await supabase.from('notes').select('body').order('id')
  t.same([rows.error, rows.data], [null, [{ body: 'before' }, { body: 'after' }]], 'nothing written while read-only')
})
