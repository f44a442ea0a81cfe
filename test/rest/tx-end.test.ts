// Transactions a client may end (PostgREST's db-tx-end), the project's
// setting beside the max rows (admin API `tx_end`, CLI `baseplane projects
// rest --tx-end`): with `commit-allow-override`, `Prefer: tx=rollback`
// (supabase-js `.rollback()`) answers the write as usual, rolls it back and
// says so in Preference-Applied (`tx=commit` too); deferred constraints are
// still checked; without it (`commit`, the default) the preference is
// ignored, never refused, even with handling=strict, as PostgREST's.
// `rollback` and `rollback-allow-override` roll back by default.
import t from 'tap'
import { runCli } from '../helpers/cli.ts'
import { request } from '../helpers/http.ts'
import { restProject, type RestFixture } from './helpers.ts'

const SETUP = `
  create table notes (id int primary key, body text not null);
  grant select, insert, update, delete on notes to anon;
  create table replies (id int primary key, note int references notes(id) deferrable initially deferred);
  grant select, insert on replies to anon;
  create function add_note(id int, body text) returns notes language sql volatile as 'insert into notes values (id, body) returning *';
  grant execute on function add_note(int, text) to anon;
  insert into notes values (1, 'kept');
`
const f = await restProject(t, SETUP)
const { platform } = f
const off = await restProject(t, SETUP, platform)
const adminHeaders = { authorization: `Bearer ${platform.config.adminToken}` }
type View = { tx_end: string; plans: boolean; code?: string; message?: string }
const settings = (fixture: RestFixture, method = 'GET', body?: unknown) =>
  request<View>(`${platform.origin}/platform/v1/projects/${fixture.project.ref}/rest`, { method, headers: adminHeaders, body: body as object })
const bodies = async (fixture: RestFixture) => (await fixture.sql('select id, body from notes order by id')).rows

t.before(async () => {
  const set = await settings(f, 'PATCH', { tx_end: 'commit-allow-override' })
  t.equal(set.status, 200)
  t.equal(set.json.tx_end, 'commit-allow-override')
})

t.test('commit by default, the override ignored and never refused', async (t) => {
  t.equal((await settings(off)).json.tx_end, 'commit')
  const s = off.anon()
  const insert = await s.from('notes').insert({ id: 2, body: 'two' }).select().rollback()
  t.equal(insert.error, null)
  t.same(insert.data, [{ id: 2, body: 'two' }])
  const raw = await off.raw('/notes', { method: 'POST', headers: { prefer: 'tx=rollback, return=representation', 'content-type': 'application/json' }, body: { id: 3, body: 'three' } })
  t.equal(raw.status, 201)
  t.equal(raw.headers['preference-applied'], 'return=representation', 'tx is not echoed')
  const strict = await off.raw('/notes?id=eq.1', { headers: { prefer: 'handling=strict, tx=rollback' } })
  t.equal(strict.status, 200, 'not an invalid preference, as PostgREST: only ignored')
  t.equal(strict.headers['preference-applied'], 'handling=strict')
  t.same(await bodies(off), [{ id: 1, body: 'kept' }, { id: 2, body: 'two' }, { id: 3, body: 'three' }], 'both writes were kept')
})

t.test('tx=rollback answers a write as usual and keeps nothing', async (t) => {
  const s = f.anon()
  // Twice: the thread's first request plans on the ordinary path, the next in one message.
  for (const id of [2, 3]) {
    const insert = await s.from('notes').insert({ id, body: `new ${id}` }).select().rollback()
    t.equal(insert.error, null)
    t.equal(insert.status, 201)
    t.same(insert.data, [{ id, body: `new ${id}` }])
    const back = await s.from('notes').select().eq('id', id)
    t.equal(back.error, null)
    t.same(back.data, [], 'the inserted row is not there')
  }
  const minimal = await s.from('notes').insert({ id: 4, body: 'minimal' }).rollback()
  t.equal(minimal.error, null)
  t.equal(minimal.status, 201)

  const update = await s.from('notes').update({ body: 'changed' }).eq('id', 1).select().rollback()
  t.equal(update.error, null)
  t.same(update.data, [{ id: 1, body: 'changed' }])
  const one = await s.from('notes').update({ body: 'changed' }).eq('id', 1).select().rollback().single()
  t.equal(one.error, null, 'a checked result (one object) ends in ROLLBACK too')
  t.same(one.data, { id: 1, body: 'changed' })
  const del = await s.from('notes').delete().eq('id', 1).select().rollback()
  t.equal(del.error, null)
  t.same(del.data, [{ id: 1, body: 'kept' }])
  const upsert = await s.from('notes').upsert({ id: 1, body: 'upserted' }).select().rollback()
  t.equal(upsert.error, null)
  t.same(upsert.data, [{ id: 1, body: 'upserted' }])
  const rpc = await s.rpc('add_note', { id: 5, body: 'by rpc' }).select().rollback()
  t.equal(rpc.error, null)
  t.same(rpc.data, { id: 5, body: 'by rpc' })
  t.same(await bodies(f), [{ id: 1, body: 'kept' }], 'nothing was kept')

  const raw = await f.raw('/notes', { method: 'POST', headers: { prefer: 'tx=rollback, return=representation, count=exact', 'content-type': 'application/json' }, body: { id: 6, body: 'six' } })
  t.equal(raw.status, 201)
  t.equal(raw.headers['preference-applied'], 'return=representation, count=exact, tx=rollback', "in PostgREST's order")
  t.equal(raw.headers['content-range'], '*/1')
  const read = await f.raw('/notes?select=id', { headers: { prefer: 'tx=rollback' } })
  t.equal(read.status, 200)
  t.equal(read.headers['preference-applied'], 'tx=rollback', 'a read echoes it too')
  t.same(await bodies(f), [{ id: 1, body: 'kept' }])
})

t.test('tx=commit is echoed and kept; errors echo nothing', async (t) => {
  const raw = await f.raw('/notes', { method: 'POST', headers: { prefer: 'tx=commit', 'content-type': 'application/json' }, body: { id: 7, body: 'seven' } })
  t.equal(raw.status, 201)
  t.equal(raw.headers['preference-applied'], 'tx=commit')
  t.same(await bodies(f), [{ id: 1, body: 'kept' }, { id: 7, body: 'seven' }])
  await f.sql('delete from notes where id = 7')

  const deferred = await f.anon().from('replies').insert({ id: 1, note: 99 }).rollback()
  t.equal(deferred.status, 409, 'a deferred foreign key is checked before the rollback')
  t.equal(deferred.error?.code, '23503')
  const raw409 = await f.raw('/replies', { method: 'POST', headers: { prefer: 'tx=rollback', 'content-type': 'application/json' }, body: { id: 1, note: 99 } })
  t.equal(raw409.status, 409)
  t.equal(raw409.headers['preference-applied'], undefined)
  const strict = await f.raw('/notes', { headers: { prefer: 'handling=strict, tx=maybe' } })
  t.equal(strict.status, 400)
  t.equal((strict.json as { code: string }).code, 'PGRST122')
  t.equal((strict.json as { details: string }).details, 'Invalid preferences: tx=maybe')
})

t.test('rollback and rollback-allow-override roll back by default', async (t) => {
  const s = f.anon()
  t.equal((await settings(f, 'PATCH', { tx_end: 'rollback-allow-override' })).json.tx_end, 'rollback-allow-override')
  const plain = await s.from('notes').insert({ id: 8, body: 'eight' }).select()
  t.equal(plain.error, null)
  t.same(plain.data, [{ id: 8, body: 'eight' }])
  t.same(await bodies(f), [{ id: 1, body: 'kept' }], 'rolled back without asking')
  const raw = await f.raw('/notes', { method: 'POST', headers: { prefer: 'tx=commit', 'content-type': 'application/json' }, body: { id: 9, body: 'nine' } })
  t.equal(raw.headers['preference-applied'], 'tx=commit')
  t.same(await bodies(f), [{ id: 1, body: 'kept' }, { id: 9, body: 'nine' }], 'tx=commit kept it')

  t.equal((await settings(f, 'PATCH', { tx_end: 'rollback' })).json.tx_end, 'rollback')
  const forced = await f.raw('/notes', { method: 'POST', headers: { prefer: 'tx=commit', 'content-type': 'application/json' }, body: { id: 10, body: 'ten' } })
  t.equal(forced.status, 201)
  t.equal(forced.headers['preference-applied'], undefined, 'no override: not echoed')
  t.same(await bodies(f), [{ id: 1, body: 'kept' }, { id: 9, body: 'nine' }], 'every transaction rolled back')
  t.equal((await settings(f, 'PATCH', { tx_end: 'commit-allow-override' })).status, 200)
})

t.test('refusals of the admin API and the CLI write nothing', async (t) => {
  for (const [body, message] of [
    [{ tx_end: 'sometimes' }, /^tx_end must be one of commit, commit-allow-override, rollback, rollback-allow-override, got "sometimes"$/],
    [{ tx_end: null }, /^tx_end must be one of .*, got null$/],
    [{ tx_end: 'Commit' }, /^tx_end must be one of/],
    [{ tx_end: 'rollback', max_rows: 0 }, /^max_rows must be/],
  ] as const) {
    const reply = await settings(f, 'PATCH', body)
    t.equal(reply.status, 400, JSON.stringify(body))
    t.equal(reply.json.code, 'invalid_argument')
    t.match(reply.json.message, message)
  }
  t.equal((await settings(f)).json.tx_end, 'commit-allow-override', 'nothing was written')

  const cli = (args: string[]) => runCli(['projects', 'rest', f.project.ref, ...args], { DATABASE_URL: platform.catalogueUrl })
  const shown = await cli([])
  t.equal(shown.code, 0, shown.stderr)
  t.match(shown.stdout, /tx end\s+commit-allow-override \(committed unless the request says Prefer: tx=rollback/)
  const refused = await cli(['--tx-end', 'never'])
  t.equal(refused.code, 1)
  t.equal(refused.stdout, '')
  t.match(refused.stderr, /--tx-end must be one of commit, commit-allow-override, rollback, rollback-allow-override, got "never"/)
  const changed = await cli(['--tx-end', 'COMMIT'])
  t.equal(changed.code, 0, changed.stderr)
  t.match(changed.stdout, /tx end\s+commit \(every transaction is committed/)
  t.equal((await settings(f)).json.tx_end, 'commit')
  const insert = await f.anon().from('notes').insert({ id: 11, body: 'eleven' }).rollback()
  t.equal(insert.error, null)
  t.same(await bodies(f), [{ id: 1, body: 'kept' }, { id: 9, body: 'nine' }, { id: 11, body: 'eleven' }], 'served as the CLI set it, on the next request')
})
