// Bad input is a 400, not an outage signal (issue 36 item 7): a NUL byte in a
// filter value (each operator, inside or=, an RPC argument, a column name)
// answers PostgreSQL's 22021 in PostgREST's shape before any SQL, and keeps
// the pooled connection; a NUL in a body travels as a parameter, and
// PostgreSQL's refusal of it is the request's error, not a dead connection.
import t from 'tap'
import { adminQuery, serverUrl } from '../helpers/db.ts'
import { restProject } from './helpers.ts'

const f = await restProject(
  t,
  `create table notes (id int primary key, body text, tags text[], doc tsvector);
   insert into notes values (1, 'a', '{x}', to_tsvector('simple', 'a'));
   grant select, insert on notes to anon;
   create function echo(word text) returns text language sql as $$ select word $$;
   grant execute on function echo(text) to anon`,
)
const admin = await serverUrl()
const NUL = { code: '22021', details: null, hint: null, message: 'invalid byte sequence for encoding "UTF8": 0x00' }

/** The platform's connections to the project database: the same ones before and after means none was replaced. */
const backends = async () =>
  (
    await adminQuery<{ pid: number }>(admin, `select pid from pg_stat_activity where datname = $1 and application_name = 'baseplane-worker' order by pid`, [f.project.record.dbName])
  ).rows.map((row) => row.pid)

t.test('a NUL in the query string: 400 22021 before any SQL, the connection kept', async (t) => {
  const warm = await f.raw('/notes?select=id')
  t.same({ status: warm.status, body: warm.json }, { status: 200, body: [{ id: 1 }] })
  const before = await backends()
  t.ok(before.length > 0, 'the worker holds a connection')
  const places = [
    'body=eq.%00',
    'body=eq.a%00b',
    'body=in.(a,%00)',
    'body=like.*%00*',
    'doc=fts.%00',
    'tags=cs.{%00}',
    'or=(body.eq.%00,id.eq.1)',
    'and=(id.eq.1,or(body.ilike.%00))',
    'select=id,bo%00dy',
    'order=body%00',
  ]
  for (const place of places) {
    const reply = await f.raw(`/notes?${place}`)
    t.same({ status: reply.status, retryAfter: reply.headers['retry-after'], body: reply.json }, { status: 400, retryAfter: undefined, body: NUL }, place)
  }
  const rpc = await f.raw('/rpc/echo?word=%00')
  t.same({ status: rpc.status, body: rpc.json }, { status: 400, body: NUL }, 'an RPC argument')
  const { data, error, status } = await f.anon().from('notes').select('id').eq('body', 'a\0')
  t.same({ data, error, status }, { data: null, error: NUL, status: 400 }, 'supabase-js sees PostgREST\'s error')
  t.same(await backends(), before, 'no connection was replaced')
  const after = await f.raw('/notes?select=id&body=eq.a')
  t.same({ status: after.status, body: after.json }, { status: 200, body: [{ id: 1 }] }, 'the next request is served')
})

t.test('a NUL in a body is PostgreSQL\'s refusal of the value, not a dead connection', async (t) => {
  const before = await backends()
  const inserted = await f.anon().from('notes').insert({ id: 2, body: 'a\0b' })
  t.equal(inserted.status, 400, 'refused as bad input')
  t.match(inserted.error, { code: /^22/ }, 'with PostgreSQL\'s data exception')
  const called = await f.raw('/rpc/echo', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"word":"a\\u0000"}' })
  t.equal(called.status, 400, 'an RPC argument in a body')
  t.match(called.json, { code: /^22/ })
  t.same(await backends(), before, 'no connection was replaced')
})
