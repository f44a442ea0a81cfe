// POST and GET {base_url}/rest/v1/rpc/<fn> through supabase.rpc(): named
// arguments, overloads, scalar, void, composite and set results with
// filters, order and select, params=single-object, and the refusals.
import t from 'tap'
import { restProject } from './helpers.ts'

const f = await restProject(t, `
  create table items (id int primary key, name text, price numeric);
  insert into items values (1, 'apple', 1.5), (2, 'pear', 2), (3, 'plum', 3.25);
  grant select, insert on items to anon;
  create function add(a int, b int default 10) returns int language sql immutable as 'select a + b';
  create function hello() returns text language sql stable as $$select 'hi'$$;
  create function touch(n text) returns void language sql as 'insert into items values ((select max(id) + 1 from items), n, 100)';
  create function cheap(max_price numeric) returns setof items language sql stable as 'select * from items where price <= max_price';
  create function first_item() returns items language sql stable as 'select * from items order by id limit 1';
  create function numbers(n int) returns setof int language sql immutable as 'select generate_series(1, n)';
  create function pairs(n int) returns table (k int, sq int) language sql immutable as 'select i, i * i from generate_series(1, n) i';
  create function echo(body json) returns json language sql immutable as 'select body';
  create function whole(jsonb) returns jsonb language sql immutable as 'select $1';
  create function twice(x int) returns int language sql immutable as 'select x * 2';
  create function twice(x text) returns text language sql immutable as 'select x || x';
  create function fails() returns int language plpgsql as $$begin raise exception 'nope' using hint = 'try later', detail = 'it failed'; end$$;
  create function teapot() returns int language plpgsql as $$begin raise sqlstate 'PT418' using message = 'short and stout'; end$$;
  grant execute on all functions in schema public to anon;
`)
const s = f.anon()

t.test('scalar, void and default arguments', async (t) => {
  const sum = await s.rpc('add', { a: 1, b: 2 })
  t.equal(sum.error, null)
  t.equal(sum.data, 3)
  const defaulted = await s.rpc('add', { a: 1 })
  t.equal(defaulted.data, 11)
  const viaGet = await s.rpc('add', { a: 5, b: 5 }, { get: true })
  t.equal(viaGet.error, null)
  t.equal(viaGet.data, 10)
  const text = await s.rpc('hello')
  t.equal(text.data, 'hi')
  const nothing = await s.rpc('touch', { n: 'fig' })
  t.equal(nothing.error, null)
  t.equal(nothing.status, 204)
  t.equal(nothing.data, null)
  t.equal((await f.sql(`select count(*) from items where name = 'fig'`)).rows[0].count, '1')
  const readOnly = await s.rpc('touch', { n: 'kiwi' }, { get: true })
  t.equal(readOnly.status, 405)
  t.match(readOnly.error, { code: '25006', message: 'cannot execute INSERT in a read-only transaction' })
})

t.test('set-returning functions take filters, order, select and ranges', async (t) => {
  const cheap = await s.rpc('cheap', { max_price: 3 }).select('id, name').gt('id', 1).order('id', { ascending: false })
  t.equal(cheap.error, null)
  t.same(cheap.data, [{ id: 2, name: 'pear' }])
  const counted = await s.rpc('cheap', { max_price: 10 }, { count: 'exact' }).select('id').order('id').range(0, 1)
  t.equal(counted.error, null)
  t.equal(counted.count, 3)
  t.same(counted.data, [{ id: 1 }, { id: 2 }])
  const viaGet = await s.rpc('cheap', { max_price: 2 }, { get: true }).eq('name', 'pear')
  t.same(viaGet.data, [{ id: 2, name: 'pear', price: 2 }])
  const one = await s.rpc('first_item')
  t.equal(one.error, null)
  t.same(one.data, { id: 1, name: 'apple', price: 1.5 })
  const numbers = await s.rpc('numbers', { n: 3 })
  t.same(numbers.data, [1, 2, 3])
  const table = await s.rpc('pairs', { n: 3 }).gte('sq', 4).select('sq')
  t.equal(table.error, null)
  t.same(table.data, [{ sq: 4 }, { sq: 9 }])
  const single = await s.rpc('cheap', { max_price: 1.5 }).single()
  t.same(single.data, { id: 1, name: 'apple', price: 1.5 })
})

t.test('json arguments, single-object, overloads', async (t) => {
  const echoed = await s.rpc('echo', { body: { a: [1, 2] } })
  t.same(echoed.data, { a: [1, 2] })
  const whole = await s.rpc('whole', { any: 'thing', n: 1 })
  t.equal(whole.error, null)
  t.same(whole.data, { any: 'thing', n: 1 })
  const single = await f.raw('/rpc/echo', { method: 'POST', headers: { prefer: 'params=single-object' }, body: { x: 1 } })
  t.same(single.json, { x: 1 })
  const ambiguous = await s.rpc('twice', { x: 2 })
  t.equal(ambiguous.status, 300)
  t.same(ambiguous.error, {
    code: 'PGRST203',
    details: null,
    hint: 'Try renaming the parameters or the function itself in the database so function overloading can be resolved',
    message: 'Could not choose the best candidate function between: public.twice(x => integer), public.twice(x => text)',
  })
})

t.test('refusals', async (t) => {
  const missing = await s.rpc('ad', { a: 1 })
  t.equal(missing.status, 404)
  t.same(missing.error, {
    code: 'PGRST202',
    details: 'Searched for the function public.ad with parameter a or with a single unnamed json/jsonb parameter, but no matches were found in the schema cache.',
    hint: 'Perhaps you meant to call the function public.add',
    message: 'Could not find the function public.ad(a) in the schema cache',
  })
  const wrongArgs = await s.rpc('add', { c: 1 })
  t.equal(wrongArgs.status, 404)
  t.match(wrongArgs.error, { code: 'PGRST202', message: 'Could not find the function public.add(c) in the schema cache' })
  const raised = await s.rpc('fails')
  t.equal(raised.status, 400)
  t.same(raised.error, { code: 'P0001', details: 'it failed', hint: 'try later', message: 'nope' })
  const teapot = await s.rpc('teapot')
  t.equal(teapot.status, 418)
  t.match(teapot.error, { code: 'PT418', message: 'short and stout' })
  const method = await f.raw('/rpc/add', { method: 'DELETE' })
  t.same({ status: method.status, body: method.json }, { status: 405, body: { code: 'PGRST101', details: null, hint: null, message: 'Cannot use the DELETE method on RPC' } })
})
