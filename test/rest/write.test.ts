// POST, PATCH, DELETE and PUT through supabase-js: one row or many,
// `columns=`, return preferences, upserts, missing=default, max-affected,
// one transaction per request with nothing kept on failure.
import type { SupabaseClient } from '@supabase/supabase-js'
import t from 'tap'
import { restProject } from './helpers.ts'

const f = await restProject(t, `
  create table notes (id serial primary key, title text not null, done boolean not null default false, rank int default 7, slug text unique);
  grant all on notes to anon, authenticated, service_role;
  grant usage on sequence notes_id_seq to anon, authenticated, service_role;
  create table pairs (a int, b int, v text, primary key (a, b));
  grant all on pairs to anon;
`)
const s = f.anon()
const count = async () => Number((await f.sql('select count(*) from notes')).rows[0].count)

t.test('insert: one row, many rows, return preferences, columns', async (t) => {
  const minimal = await s.from('notes').insert({ title: 'one' })
  t.equal(minimal.error, null)
  t.equal(minimal.status, 201)
  t.equal(minimal.data, null)
  const rows = await s.from('notes').insert([{ title: 'two', done: true }, { title: 'three' }], { defaultToNull: false }).select('id, title, done, rank')
  t.equal(rows.error, null)
  t.equal(rows.status, 201)
  t.same(rows.data, [{ id: 2, title: 'two', done: true, rank: 7 }, { id: 3, title: 'three', done: false, rank: 7 }])
  // Without defaultToNull: false, a key another row has is NULL here: done is not null.
  const nulls = await s.from('notes').insert([{ title: 'x', done: true }, { title: 'y' }])
  t.equal(nulls.status, 400)
  t.match(nulls.error, { code: '23502', message: /null value in column "done"/ })
  t.equal(await count(), 3, 'nothing of the failed request was kept')
  const single = await s.from('notes').insert({ title: 'four', rank: 1 }).select('id, title').single()
  t.equal(single.error, null)
  // ids 4 and 5 went to the failed rows, once each: a failing write is not run twice.
  t.same(single.data, { id: 6, title: 'four' })
  const located = await f.raw('/notes', { method: 'POST', headers: { prefer: 'return=headers-only' }, body: { title: 'five' } })
  t.equal(located.status, 201)
  t.equal(located.headers.location, `/notes?id=eq.${single.data!.id + 1}`)
  t.equal(located.headers['content-range'], '*/*')
  t.equal(located.headers['preference-applied'], 'return=headers-only')
  const counted = await s.from('notes').insert({ title: 'six' }, { count: 'exact' })
  t.equal(counted.error, null)
  t.equal(counted.count, 1)
  const mismatched = await f.raw('/notes', { method: 'POST', body: [{ title: 'a' }, { rank: 2 }] })
  t.same({ status: mismatched.status, body: mismatched.json }, { status: 400, body: { code: 'PGRST102', details: null, hint: null, message: 'All object keys must match' } })
  const unknown = await s.from('notes').insert({ title: 'x', nope: 1 })
  t.equal(unknown.status, 400)
  t.same(unknown.error, { code: 'PGRST204', details: null, hint: null, message: "Could not find the 'nope' column of 'notes' in the schema cache" })
  const bad = await f.raw('/notes', { method: 'POST', body: '{"title":' })
  t.same(bad.json, { code: 'PGRST102', details: null, hint: null, message: 'Empty or invalid json' })
  const empty = await s.from('notes').insert([]).select()
  t.equal(empty.error, null)
  t.same(empty.data, [])
  t.equal(await count(), 6)
})

t.test('upsert: merge, ignore, on_conflict', async (t) => {
  const merged = await s.from('notes').upsert({ id: 1, title: 'one!', done: true }).select('id, title, done')
  t.equal(merged.error, null)
  t.equal(merged.status, 200, 'an upsert that only updated answers 200')
  t.same(merged.data, [{ id: 1, title: 'one!', done: true }])
  const inserted = await s.from('notes').upsert({ id: 100, title: 'hundred' }).select('id')
  t.equal(inserted.status, 201)
  // The same without a representation: 201 when the merge inserted any row, 200 when it only updated.
  const fresh = await s.from('notes').upsert({ id: 300, title: 'three hundred' })
  t.equal(fresh.error, null)
  t.equal(fresh.status, 201)
  const mergedQuietly = await s.from('notes').upsert([{ id: 300, title: 'three hundred!' }])
  t.equal(mergedQuietly.error, null)
  t.equal(mergedQuietly.status, 200, 'only updated, return=minimal')
  const insertedQuietly = await s.from('notes').upsert([{ id: 300, title: 'three hundred!!' }, { id: 301, title: 'three hundred and one' }])
  t.equal(insertedQuietly.error, null)
  t.equal(insertedQuietly.status, 201, 'one of them inserted')
  t.same((await f.sql('select id, title from notes where id >= 300 order by id')).rows, [
    { id: 300, title: 'three hundred!!' }, { id: 301, title: 'three hundred and one' },
  ])
  const ignored = await s.from('notes').upsert({ id: 1, title: 'ignored' }, { ignoreDuplicates: true }).select('id')
  t.equal(ignored.error, null)
  t.same(ignored.data, [])
  t.equal((await f.sql('select title from notes where id = 1')).rows[0].title, 'one!')
  await s.from('notes').update({ slug: 'first' }).eq('id', 1)
  const bySlug = await s.from('notes').upsert({ slug: 'first', title: 'by slug' }, { onConflict: 'slug' }).select('id, title')
  t.equal(bySlug.error, null)
  t.same(bySlug.data, [{ id: 1, title: 'by slug' }])
  const composite = await s.from('pairs').upsert([{ a: 1, b: 2, v: 'x' }, { a: 1, b: 3, v: 'y' }])
  t.equal(composite.error, null)
  const again = await s.from('pairs').upsert({ a: 1, b: 2, v: 'z' }).select()
  t.same(again.data, [{ a: 1, b: 2, v: 'z' }])
  const conflict = await s.from('notes').insert({ id: 1, title: 'dup' })
  t.equal(conflict.status, 409)
  t.match(conflict.error, { code: '23505', details: 'Key (id)=(1) already exists.', message: /duplicate key value violates unique constraint "notes_pkey"/ })
})

t.test('update and delete with filters', async (t) => {
  const updated = await s.from('notes').update({ rank: 99 }).in('id', [2, 3]).select('id, rank')
  t.equal(updated.error, null)
  t.equal(updated.status, 200)
  t.same(updated.data, [{ id: 2, rank: 99 }, { id: 3, rank: 99 }])
  const quiet = await f.raw('/notes?id=eq.2', { method: 'PATCH', body: { rank: 5 } })
  t.equal(quiet.status, 204)
  t.equal(quiet.headers['content-range'], '0-0/*')
  const noop = await f.raw('/notes?id=eq.2', { method: 'PATCH', body: {} })
  t.equal(noop.status, 204)
  t.equal(noop.headers['content-range'], '*/*')
  const none = await s.from('notes').update({ rank: 1 }).eq('id', 12345).select()
  t.same(none.data, [])
  const deleted = await s.from('notes').delete().eq('id', 100).select('id')
  t.equal(deleted.error, null)
  t.same(deleted.data, [{ id: 100 }])
  const gone = await s.from('notes').delete({ count: 'exact' }).eq('title', 'six')
  t.equal(gone.error, null)
  t.equal(gone.status, 204)
  t.equal(gone.count, 1)
  const badValue = await s.from('notes').update({ rank: 'high' }).eq('id', 2)
  t.equal(badValue.status, 400)
  t.match(badValue.error, { code: '22P02', message: 'invalid input syntax for type integer: "high"' })
  const defaults = await f.raw<Array<{ rank: number }>>('/notes?id=eq.2&columns=title,rank&select=rank', {
    method: 'PATCH',
    headers: { prefer: 'missing=default, return=representation' },
    body: { title: 'two again' },
  })
  t.same(defaults.json, [{ rank: 7 }])
  t.equal(defaults.headers['preference-applied'], 'missing=default, return=representation')
})

/** A schema-less database that declares PostgREST 13, as supabase-js's generated types do. */
type Postgrest13 = {
  __InternalSupabase: { PostgrestVersion: '13' }
  public: { Tables: Record<string, { Row: Record<string, unknown>; Insert: Record<string, unknown>; Update: Record<string, unknown>; Relationships: [] }>; Views: {}; Functions: {} }
}

t.test('max-affected with handling=strict', async (t) => {
  // maxAffected is typed for clients that declare PostgREST 13 (the Database type's __InternalSupabase); the wire is the same.
  const s = f.anon() as unknown as SupabaseClient<Postgrest13>
  const before = await count()
  const refused = await s.from('notes').delete().gt('id', 0).maxAffected(1)
  t.equal(refused.status, 400)
  t.same(refused.error, { code: 'PGRST124', details: `The query affects ${before} rows`, hint: null, message: 'Query result exceeds max-affected preference constraint' })
  t.equal(await count(), before, 'rolled back')
  const allowed = await s.from('notes').update({ rank: 3 }).eq('id', 2).maxAffected(1).select('id')
  t.equal(allowed.error, null)
  t.same(allowed.data, [{ id: 2 }])
  const strict = await f.raw('/notes?id=eq.2', { method: 'PATCH', headers: { prefer: 'handling=strict, nonsense, return=whatever' }, body: { rank: 1 } })
  t.same(strict.json, { code: 'PGRST122', details: 'Invalid preferences: nonsense, return=whatever', hint: null, message: 'Invalid preferences given with handling=strict' })
  const single = await s.from('notes').update({ rank: 4 }).gt('id', 0).select('id').single()
  t.equal(single.status, 406)
  t.match(single.error, { code: 'PGRST116' })
  t.equal((await f.sql('select count(*) from notes where rank = 4')).rows[0].count, '0', 'a single object refused rolls back')
})

t.test('put one row', async (t) => {
  const created = await s.from('notes').select('id').limit(0)
  t.equal(created.error, null)
  const put = await f.raw('/notes?id=eq.50', { method: 'PUT', headers: { prefer: 'return=representation' }, body: { id: 50, title: 'fifty', done: false, rank: 1, slug: null } })
  t.equal(put.status, 201)
  t.same(put.json, [{ id: 50, title: 'fifty', done: false, rank: 1, slug: null }])
  const replaced = await f.raw('/notes?id=eq.50', { method: 'PUT', headers: { prefer: 'return=representation' }, body: { id: 50, title: 'FIFTY', done: true, rank: 2, slug: null } })
  t.equal(replaced.status, 200)
  const quiet = await f.raw('/notes?id=eq.50', { method: 'PUT', body: { id: 50, title: 'f', done: true, rank: 2, slug: null } })
  t.equal(quiet.status, 204)
  const wrongFilter = await f.raw('/notes?title=eq.x', { method: 'PUT', body: { id: 50, title: 'x' } })
  t.same({ status: wrongFilter.status, body: wrongFilter.json }, { status: 405, body: { code: 'PGRST105', details: null, hint: null, message: "Filters must include all and only primary key columns with 'eq' operators" } })
  const mismatch = await f.raw('/notes?id=eq.50', { method: 'PUT', body: { id: 51, title: 'x' } })
  t.same(mismatch.json, { code: 'PGRST115', details: null, hint: null, message: 'Payload values do not match URL in primary key column(s)' })
  const limited = await f.raw('/notes?id=eq.50&limit=1', { method: 'PUT', body: { id: 50, title: 'x' } })
  t.same(limited.json, { code: 'PGRST114', details: null, hint: null, message: 'limit/offset querystring parameters are not allowed for PUT' })
})

t.test('a write planned on a schema that moved is run once, on the new one', async (t) => {
  await f.sql('create table tallies (id serial primary key, label text not null, weight int not null default 1); grant all on tallies to anon; grant usage on tallies_id_seq to anon')
  // Warm every REST thread: each plans the next insert on this schema and sends it with its commit, behind the guard.
  for (let i = 0; i < 6; i++) t.equal((await s.from('tallies').insert({ label: `warm ${i}` })).error, null)
  await f.sql('alter table tallies alter column weight set default 5')
  const moved = await s.from('tallies').insert({ label: 'after' })
  t.equal(moved.error, null)
  t.equal(moved.status, 201)
  const { rows } = await f.sql(`select id, weight from tallies where label = 'after'`)
  t.same(rows, [{ id: 7, weight: 5 }], 'written once (no id spent by a dropped attempt), with the new default')
  const failing = await s.from('tallies').insert({ label: null as unknown as string })
  t.equal(failing.status, 400)
  t.match(failing.error, { code: '23502' })
  t.equal((await s.from('tallies').insert({ label: 'next' })).error, null)
  t.same((await f.sql(`select id from tallies where label = 'next'`)).rows, [{ id: 9 }], 'the failing insert ran once (one id spent)')
  // A shape no thread has prepared, sent on a key that moved: the guard stops the message before its PREPARE.
  for (let i = 0; i < 6; i++) t.equal((await s.from('tallies').insert({ label: `warm again ${i}` })).error, null)
  await f.sql('alter table tallies alter column weight set default 7')
  for (let i = 0; i < 3; i++) {
    const fresh = await s.from('tallies').insert({ label: `fresh ${i}`, weight: 2 })
    t.equal(fresh.error, null)
    t.equal(fresh.status, 201)
  }
  const { rows: fresh } = await f.sql(`select label, weight from tallies where label like 'fresh %' order by id`)
  t.same(fresh, [0, 1, 2].map((i) => ({ label: `fresh ${i}`, weight: 2 })), 'each written once, in order')
})

t.test("a write's own division by zero is its answer, and the next write is served", async (t) => {
  await f.sql(`create table ratios (id serial primary key, n int not null, d int not null);
    create function ratios_check() returns trigger language plpgsql as $$ begin perform new.n / new.d; return new; end $$;
    create trigger ratios_check before insert on ratios for each row execute function ratios_check();
    grant all on ratios to anon; grant usage on ratios_id_seq to anon`)
  for (let i = 0; i < 6; i++) t.equal((await s.from('ratios').insert({ n: i, d: 1 })).error, null)
  const zero = await s.from('ratios').insert({ n: 1, d: 0 })
  t.equal(zero.status, 400)
  t.match(zero.error, { code: '22012', message: 'division by zero' })
  const next = await s.from('ratios').insert({ n: 9, d: 3 })
  t.equal(next.error, null)
  t.same((await f.sql(`select n from ratios order by id`)).rows.map((r) => r.n), [0, 1, 2, 3, 4, 5, 9], 'the refused row is not written')
})

t.test('a write that answers only its count counts the rows it wrote', async (t) => {
  await f.sql('create table counted (id int primary key, label text not null); grant all on counted to anon')
  const three = await s.from('counted').insert([{ id: 1, label: 'a' }, { id: 2, label: 'b' }, { id: 3, label: 'c' }], { count: 'exact' })
  t.equal(three.error, null)
  t.equal(three.status, 201)
  t.equal(three.count, 3)
  const ignored = await s.from('counted').upsert([{ id: 2, label: 'x' }, { id: 3, label: 'x' }, { id: 4, label: 'd' }], { count: 'exact', ignoreDuplicates: true })
  t.equal(ignored.error, null)
  t.equal(ignored.count, 1, 'only the new row was written')
  const merged = await s.from('counted').upsert([{ id: 4, label: 'e' }, { id: 5, label: 'f' }], { count: 'exact' })
  t.equal(merged.error, null)
  t.equal(merged.count, 2, 'one updated, one inserted')
  const updated = await s.from('counted').update({ label: 'z' }, { count: 'exact' }).gte('id', 3)
  t.equal(updated.error, null)
  t.equal(updated.status, 204)
  t.equal(updated.count, 3)
  const none = await s.from('counted').delete({ count: 'exact' }).eq('id', 99)
  t.equal(none.error, null)
  t.equal(none.count, 0)
  const put = await f.raw('/counted?id=eq.9', { method: 'PUT', body: { id: 9, label: 'put' } })
  t.equal(put.status, 204)
  t.same((await f.sql('select id, label from counted order by id')).rows, [
    { id: 1, label: 'a' }, { id: 2, label: 'b' }, { id: 3, label: 'z' }, { id: 4, label: 'z' }, { id: 5, label: 'z' }, { id: 9, label: 'put' },
  ])
})
