// Who sees what through the data API: row-level security per user (a signed
// JWT's sub), privileges as PostgREST answers them (401 for anon, 403 for a
// user), the schema following DDL on the next request, two projects that
// never see each other's tables, and a project past its size quota that
// still reads but refuses writes with the quota's sentence.
import t from 'tap'
import { watchQuotas } from '../../control-plane/quotas.ts'
import { sampleDatabaseSizes } from '../../control-plane/usage-upkeep.ts'
import { quotaRefusal } from '../../lib/plans.ts'
import { eventually } from '../helpers/eventually.ts'
import { request } from '../helpers/http.ts'
import { restProject } from './helpers.ts'

const alice = '00000000-0000-4000-8000-00000000000a'
const bob = '00000000-0000-4000-8000-00000000000b'

const f = await restProject(t, `
  create table todo (id serial primary key, owner uuid not null default auth.uid(), title text not null);
  alter table todo enable row level security;
  create policy own on todo for all to authenticated using (owner = auth.uid()) with check (owner = auth.uid());
  create policy peek on todo for select to anon using (title like 'public%');
  grant select on todo to anon;
  grant all on todo to authenticated;
  grant usage on sequence todo_id_seq to authenticated;
  insert into todo (owner, title) values ('${alice}', 'public: alice'), ('${alice}', 'alice secret'), ('${bob}', 'bob secret');
  create table hidden (id int primary key);
  revoke all on hidden from anon, authenticated;
  revoke insert on todo from anon;
`)
const titles = (data: unknown) => (data as Array<{ title: string }> | null)?.map((r) => r.title)

t.test('row-level security decides by the caller', async (t) => {
  const anon = await f.anon().from('todo').select('title').order('id')
  t.equal(anon.error, null)
  t.same(titles(anon.data), ['public: alice'])
  const a = await f.user(alice)
  const mine = await a.from('todo').select('title').order('id')
  t.equal(mine.error, null)
  t.same(titles(mine.data), ['public: alice', 'alice secret'])
  const b = await f.user(bob)
  t.same(titles((await b.from('todo').select('title')).data), ['bob secret'])
  const added = await b.from('todo').insert({ title: 'bob 2' }).select('title, owner')
  t.equal(added.error, null)
  t.same(added.data, [{ title: 'bob 2', owner: bob }])
  const forged = await b.from('todo').insert({ title: 'as alice', owner: alice })
  t.equal(forged.status, 403)
  t.match(forged.error, { code: '42501', message: 'new row violates row-level security policy for table "todo"' })
  const notMine = await b.from('todo').update({ title: 'hacked' }).eq('owner', alice).select()
  t.equal(notMine.error, null)
  t.same(notMine.data, [], 'another user\'s rows are not there to update')
  const anonWrite = await f.anon().from('todo').insert({ title: 'x' })
  t.equal(anonWrite.status, 401)
  t.match(anonWrite.error, { code: '42501', message: 'permission denied for table todo' })
  const noGrant = await f.anon().from('hidden').select()
  t.equal(noGrant.status, 401)
  t.same(noGrant.error, { code: '42501', details: null, hint: null, message: 'permission denied for table hidden' })
  const userNoGrant = await a.from('hidden').select()
  t.equal(userNoGrant.status, 403)
})

t.test('the schema follows DDL on the next request', async (t) => {
  const s = f.service()
  const before = await s.from('labels').select()
  t.equal(before.status, 404)
  t.same(before.error, { code: 'PGRST205', details: null, hint: null, message: "Could not find the table 'public.labels' in the schema cache" })
  await f.sql(`create table labels (id int primary key, name text); insert into labels values (1, 'red'); grant select on labels to service_role`)
  const after = await s.from('labels').select('id, name')
  t.equal(after.error, null)
  t.same(after.data, [{ id: 1, name: 'red' }])
  await f.sql(`alter table labels add column color text default 'blue'`)
  const column = await s.from('labels').select('color')
  t.equal(column.error, null)
  t.same(column.data, [{ color: 'blue' }])
  await f.sql(`alter table labels rename to label`)
  const renamed = await s.from('labels').select()
  t.equal(renamed.status, 404)
  t.match(renamed.error, { code: 'PGRST205', hint: "Perhaps you meant the table 'public.label'" })
  await f.sql(`create function label_count() returns int language sql stable as 'select count(*)::int from label'`)
  const fn = await s.rpc('label_count')
  t.equal(fn.error, null)
  t.equal(fn.data, 1)
})

t.test('two projects never see each other\'s tables', async (t) => {
  const other = await restProject(t, `create table secrets (id int primary key, v text); insert into secrets values (1, 'other'); grant select on secrets to anon`, f.platform)
  const mine = await f.anon().from('secrets').select()
  t.equal(mine.status, 404)
  t.match(mine.error, { code: 'PGRST205' })
  const theirs = await other.anon().from('secrets').select('v')
  t.same(theirs.data, [{ v: 'other' }])
  const todo = await other.anon().from('todo').select()
  t.match(todo.error, { code: 'PGRST205' })
  // Each project's key works only on its own base URL.
  const crossed = await f.raw('/todo', { headers: { apikey: other.project.anonKey } })
  t.equal(crossed.status, 401)
})

t.test('past the size quota: reads answer, writes are refused with the quota sentence', async (t) => {
  // The owner's table: the API roles get it by the default privileges, as on Supabase.
  const q = await restProject(t, `create table notes (id serial primary key, title text); insert into notes (title) values ('kept')`, f.platform)
  const controlPlane = f.platform.platform.controlPlane
  const quotas = (body: object) =>
    request(`${f.platform.origin}/platform/v1/projects/${q.project.ref}/quotas`, { method: 'PATCH', headers: { authorization: `Bearer ${f.platform.config.adminToken}` }, body })
  const s = q.service()
  t.equal((await s.from('notes').insert({ title: 'before' })).error, null, 'writable before')
  t.equal((await quotas({ database_size_bytes: '1MB' })).status, 200)
  await sampleDatabaseSizes(controlPlane)
  t.same((await watchQuotas(controlPlane)).readOnly, [q.project.ref])
  await eventually('the data plane sees the project read-only', 10000, async () => (await s.from('notes').select('id').limit(0)).error === null && (await f.platform.platform.controlPlane.catalogue.query(`select read_only from baseplane.projects where ref = $1`, [q.project.ref])).rows[0]?.read_only === true)
  await eventually('writes refused', 10000, async () => (await s.from('notes').insert({ title: 'after' })).status === 405)
  const read = await s.from('notes').select('title').order('id')
  t.equal(read.error, null)
  t.same(read.data, [{ title: 'kept' }, { title: 'before' }])
  const refused = await s.from('notes').insert({ title: 'after' })
  t.equal(refused.status, 405)
  // PostgreSQL names the statement's top level: the insert is a CTE of a SELECT, as in PostgREST.
  t.same(refused.error, {
    code: '25006',
    details: 'cannot execute SELECT in a read-only transaction',
    hint: null,
    message: quotaRefusal('database_size_bytes', 1024 * 1024),
  })
  const rpcRefused = await s.from('notes').delete().eq('title', 'kept')
  t.match(rpcRefused.error, { code: '25006', message: /size quota of 1 MB, so it is read-only/ })
})

t.test('usage is counted under the rest service', async (t) => {
  const { serviceIndexOf } = await import('../../lib/metrics/project-figures.ts')
  t.not(serviceIndexOf('rest'), serviceIndexOf('other'), 'rest is a service of its own in the figures')
  const before = await f.anon().from('todo').select('id')
  t.equal(before.error, null)
})
