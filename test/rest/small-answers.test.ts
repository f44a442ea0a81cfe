// Small answers as PostgREST 13 gives them: a function's one composite value
// filtered away is `null`; a counted scalar function is `Content-Range:
// 0-0/1`; with `columns=` and `Prefer: missing=default` every listed
// column's DEFAULT is evaluated for every row (a sequence advances per row),
// and an upsert sets every listed column from the incoming row.
import t from 'tap'
import { restProject } from './helpers.ts'

const f = await restProject(t, `
  create table items (id int primary key, name text);
  insert into items values (1, 'apple'), (2, 'pear');
  create function item_by(i int) returns items language sql stable as 'select * from items where id = i';
  create function add(a int, b int) returns int language sql immutable as 'select a + b';
  create sequence counter;
  create table notes (id serial primary key, name text default 'anon', n bigint default nextval('counter'), note text);
  grant select on items to anon;
  grant select, insert, update on notes to anon;
  grant usage on all sequences in schema public to anon;
  grant execute on all functions in schema public to anon;
`)
const s = f.anon()

t.test('a composite value filtered away is null', async (t) => {
  const found = await s.rpc('item_by', { i: 1 })
  t.equal(found.error, null)
  t.same(found.data, { id: 1, name: 'apple' })
  const kept = await s.rpc('item_by', { i: 1 }).eq('name', 'apple').select('name')
  t.equal(kept.error, null)
  t.same(kept.data, { name: 'apple' })
  const removed = await s.rpc('item_by', { i: 1 }).eq('id', 2)
  t.equal(removed.error, null)
  t.equal(removed.status, 200)
  t.equal(removed.data, null)
  const raw = await f.raw('/rpc/item_by?i=1&name=eq.nothing')
  t.equal(raw.status, 200)
  t.equal(raw.text, 'null')
})

t.test('a counted scalar function is one row', async (t) => {
  const counted = await s.rpc('add', { a: 1, b: 2 }, { count: 'exact' })
  t.equal(counted.error, null)
  t.equal(counted.data, 3)
  t.equal(counted.count, 1)
  const raw = await f.raw('/rpc/add', { method: 'POST', headers: { prefer: 'count=exact' }, body: { a: 1, b: 2 } })
  t.equal(raw.status, 200)
  t.equal(raw.headers['content-range'], '0-0/1')
  t.equal(raw.headers['preference-applied'], 'count=exact')
  const uncounted = await f.raw('/rpc/add?a=1&b=2')
  t.equal(uncounted.headers['content-range'], '0-0/*')
})

t.test('missing=default with columns=: every listed default, every row, in order', async (t) => {
  // postgrest-js sends columns="name","id","n" (every key of the rows) and Prefer: missing=default.
  const inserted = await s
    .from('notes')
    .insert([{ name: 'a' }, { id: 100, name: 'b' }, { n: 50 }], { defaultToNull: false })
    .select('id, name, n, note')
  t.equal(inserted.error, null)
  t.same(inserted.data, [
    { id: 1, name: 'a', n: 1, note: null },
    { id: 100, name: 'b', n: 2, note: null },
    { id: 3, name: 'anon', n: 50, note: null },
  ])
  // Both sequences advanced once per row, also for the rows that gave the value.
  const seqs = await f.sql(`select (select last_value from counter) as counter, (select last_value from notes_id_seq) as ids`)
  t.same(seqs.rows[0], { counter: '3', ids: '3' })
  // Without missing=default an absent listed column is null; an unlisted one (note) takes its default.
  const nulls = await s.from('notes').insert([{ id: 7, name: 'c' }, { id: 8, n: 9 }]).select('id, name, n')
  t.equal(nulls.error, null)
  t.same(nulls.data, [{ id: 7, name: 'c', n: null }, { id: 8, name: null, n: 9 }])
})

t.test('an upsert with columns= sets every listed column on conflict', async (t) => {
  const merged = await s
    .from('notes')
    .upsert([{ id: 1, name: 'z' }, { id: 100, n: 7 }], { defaultToNull: false })
    .select('id, name, n')
  t.equal(merged.error, null)
  // Row 1's n and row 100's name were absent: their defaults (the counter's next values, 'anon') are set.
  t.same(merged.data, [{ id: 1, name: 'z', n: 4 }, { id: 100, name: 'anon', n: 7 }])
  // Without missing=default the listed columns a row lacks are set null; n, not listed, is left as it was.
  const nulled = await s.from('notes').upsert([{ id: 1, note: 'x' }, { id: 100, name: 'y' }]).select('id, name, n, note')
  t.equal(nulled.error, null)
  t.same(nulled.data, [{ id: 1, name: null, n: 4, note: 'x' }, { id: 100, name: 'y', n: 7, note: null }])
  const stored = await f.sql(`select id, name, n::int, note from notes where id in (1, 100) order by id`)
  t.same(stored.rows, [{ id: 1, name: null, n: 4, note: 'x' }, { id: 100, name: 'y', n: 7, note: null }])
})
