// Request bodies besides JSON, as PostgREST 13 takes them, over raw HTTP
// (supabase-js sends only JSON): CSV (a header line, rows, unquoted NULL,
// quoted fields with "" escapes and line breaks, CRLF or LF) and
// form-urlencoded bodies for POST, PATCH and PUT, written through the same
// JSON path (values as text, converted by PostgreSQL per column); form and
// CSV bodies as a function's named arguments; text/plain, text/xml and
// application/octet-stream as the one unnamed argument of a function; the
// refusals (ragged rows, an unterminated quote, other media) in PostgREST's
// words, before any SQL, with nothing written.
import t from 'tap'
import { restProject } from './helpers.ts'

const f = await restProject(t, `
  create table films (id int primary key, title text not null, year int, rating numeric, tags text[], note text);
  grant all on films to anon;
  create function add(a int, b int) returns int language sql immutable as 'select a + b';
  create function greet(name text, punct text default '!') returns text language sql immutable as $$select 'hello ' || name || punct$$;
  create function shout(text) returns text language sql immutable as 'select upper($1)';
  create function root_name(xml) returns text language sql immutable as $$select (xpath('name(/*)', $1))[1]::text$$;
  create function byte_count(bytea) returns int language sql immutable as 'select length($1)';
  create function digest_of(bytea) returns text language sql immutable as $$select length($1) || ' ' || md5($1)$$;
  create function named_text(body text) returns text language sql immutable as 'select body';
  create function log_note(text) returns void language sql as $$insert into films (id, title, note) values (1000, 'log', $1)$$;
  grant execute on all functions in schema public to anon;
`)
const s = f.anon()
const films = async () => (await f.sql('select id, title, year, rating::text, tags, note from films order by id')).rows
const count = async () => Number((await f.sql('select count(*) from films')).rows[0].count)
const post = (path: string, type: string, body: string, headers: Record<string, string> = {}, method = 'POST') =>
  f.raw(path, { method, headers: { 'content-type': type, ...headers }, body })

t.test('CSV: rows inserted, NULL unquoted, quoted fields, CRLF and LF', async (t) => {
  const csv = 'id,title,year,rating,tags,note\r\n1,Dune,1965,4.5,"{desert,spice}",NULL\r\n2,"Heretics of Dune, the fifth",1984,NULL,{},"NULL"\n3,"He said ""hi""",2001,3,NULL,"two\nlines"\n'
  const created = await post('/films', 'text/csv', csv)
  t.equal(created.status, 201, created.text)
  t.equal(created.text, '')
  t.equal(created.headers['content-range'], '*/*')
  t.same(await films(), [
    { id: 1, title: 'Dune', year: 1965, rating: '4.5', tags: ['desert', 'spice'], note: null },
    { id: 2, title: 'Heretics of Dune, the fifth', year: 1984, rating: null, tags: [], note: 'NULL' },
    { id: 3, title: 'He said "hi"', year: 2001, rating: '3', tags: null, note: 'two\nlines' },
  ], 'values read per column type; quoted NULL is the text')

  // The representation, as CSV too, through the same select=.
  const back = await post('/films?select=id,title', 'text/csv; charset=utf-8', 'id,title\n4,Children of Dune\n5,"God Emperor"', { accept: 'text/csv', prefer: 'return=representation' })
  t.equal(back.status, 201)
  t.equal(back.headers['content-type'], 'text/csv; charset=utf-8')
  t.equal(back.text, 'id,title\n4,"Children of Dune"\n5,"God Emperor"')

  const empty = await post('/films', 'text/csv', 'id,title\n', { prefer: 'return=representation' })
  t.equal(empty.status, 201, 'a header and no rows inserts nothing')
  t.same(empty.json, [])
  t.equal(await count(), 5)
  // supabase-js reads what the CSV wrote.
  const read = await s.from('films').select('id, title').in('id', [4, 5]).order('id')
  t.equal(read.error, null)
  t.same(read.data, [{ id: 4, title: 'Children of Dune' }, { id: 5, title: 'God Emperor' }])
})

t.test('CSV: upsert, PATCH and PUT take the same rows', async (t) => {
  const upsert = await post('/films', 'text/csv', 'id,title,year\n1,Dune (1965),1965\n6,Chapterhouse,1985', { prefer: 'resolution=merge-duplicates, return=representation' })
  t.equal(upsert.status, 201)
  t.same((upsert.json as Array<{ id: number }>).map((r) => r.id), [1, 6])
  t.equal((await f.sql('select title from films where id = 1')).rows[0].title, 'Dune (1965)')

  const patched = await post('/films?id=in.(1,6)', 'text/csv', 'rating,note\n5,NULL', { prefer: 'return=representation' }, 'PATCH')
  t.equal(patched.status, 200)
  t.same((patched.json as Array<{ rating: number; note: null }>).map((r) => [r.rating, r.note]), [[5, null], [5, null]])
  const none = await post('/films?id=eq.1', 'text/csv', 'rating\n', {}, 'PATCH')
  t.equal(none.status, 204, 'no rows: nothing to set')

  const put = await post('/films?id=eq.7', 'text/csv', 'id,title,year\n7,Hunters,2006', { prefer: 'return=representation' }, 'PUT')
  t.equal(put.status, 201)
  t.same(put.json, [{ id: 7, title: 'Hunters', year: 2006, rating: null, tags: null, note: null }])
})

t.test('CSV refusals: PostgREST 102 before any SQL, nothing written', async (t) => {
  const before = await films()
  const ragged = await post('/films', 'text/csv', 'id,title\n20,a\n21')
  t.same({ status: ragged.status, body: ragged.json }, { status: 400, body: { code: 'PGRST102', details: null, hint: null, message: 'All lines must have same number of fields' } })
  const wide = await post('/films', 'text/csv', 'id,title\n20,a,extra\n')
  t.same(wide.json, { code: 'PGRST102', details: null, hint: null, message: 'All lines must have same number of fields' })
  const open = await post('/films', 'text/csv', 'id,title\n20,"never closed\n21,b\n')
  t.same({ status: open.status, body: open.json }, {
    status: 400,
    body: { code: 'PGRST102', details: null, hint: null, message: 'parse error (unterminated quoted field starting on line 2)' },
  })
  const stray = await post('/films', 'text/csv', 'id,title\n20,a"b\n')
  t.same(stray.json, { code: 'PGRST102', details: null, hint: null, message: 'parse error (a quote inside an unquoted field on line 2)' })
  const nothing = await post('/films', 'text/csv', '')
  t.same(nothing.json, { code: 'PGRST102', details: null, hint: null, message: 'parse error (not enough input)' })
  const unknown = await post('/films', 'text/csv', 'id,title,nope\n20,a,b\n')
  t.same({ status: unknown.status, body: unknown.json }, { status: 400, body: { code: 'PGRST204', details: null, hint: null, message: "Could not find the 'nope' column of 'films' in the schema cache" } })
  const typed = await post('/films', 'text/csv', 'id,title,year\n20,a,1990\n21,b,soon\n')
  t.equal(typed.status, 400)
  t.match(typed.json, { code: '22P02', message: 'invalid input syntax for type integer: "soon"' })
  t.same(await films(), before, 'nothing of any refused body was written')
})

t.test('form bodies: one row, values as text', async (t) => {
  const created = await post('/films?select=id,title,year', 'application/x-www-form-urlencoded', 'id=30&title=Form+film%3A+%C3%A9t%C3%A9&year=2001', { prefer: 'return=representation' })
  t.equal(created.status, 201)
  t.same(created.json, [{ id: 30, title: 'Form film: été', year: 2001 }])
  const patched = await post('/films?id=eq.30', 'application/x-www-form-urlencoded', 'note=patched&year=2002', {}, 'PATCH')
  t.equal(patched.status, 204)
  t.same((await f.sql('select year, note from films where id = 30')).rows, [{ year: 2002, note: 'patched' }])
  const before = await count()
  const unknown = await post('/films', 'application/x-www-form-urlencoded', 'id=31&title=x&nope=1')
  t.same({ status: unknown.status, code: (unknown.json as { code: string }).code }, { status: 400, code: 'PGRST204' })
  const missing = await post('/films', 'application/x-www-form-urlencoded', 'id=31')
  t.match({ status: missing.status, body: missing.json }, { status: 400, body: { code: '23502' } })
  t.equal(await count(), before, 'nothing written')
})

t.test('functions: form and CSV bodies as named arguments', async (t) => {
  const sum = await post('/rpc/add', 'application/x-www-form-urlencoded', 'a=2&b=40')
  t.same({ status: sum.status, body: sum.json }, { status: 200, body: 42 })
  const defaulted = await post('/rpc/greet', 'application/x-www-form-urlencoded', 'name=Ada+Lovelace')
  t.equal(defaulted.json, 'hello Ada Lovelace!')
  const csv = await post('/rpc/add', 'text/csv', 'a,b\n1,2\n')
  t.equal(csv.json, 3)
  const missing = await post('/rpc/add', 'application/x-www-form-urlencoded', 'a=1&c=2')
  // A form is no JSON body: no single unnamed json/jsonb parameter is looked for.
  t.match({ status: missing.status, body: missing.json }, {
    status: 404,
    body: {
      code: 'PGRST202',
      details: 'Searched for the function public.add with parameters a, c, but no matches were found in the schema cache.',
      message: 'Could not find the function public.add(a, c) in the schema cache',
    },
  })
})

t.test('functions: text, xml and bytes as the one unnamed argument', async (t) => {
  const text = await post('/rpc/shout', 'text/plain', 'quiet, please\n')
  t.same({ status: text.status, body: text.json }, { status: 200, body: 'QUIET, PLEASE\n' })
  const xml = await post('/rpc/root_name', 'text/xml', '<film><title>Dune</title></film>')
  t.equal(xml.json, 'film')
  const bytes = await post('/rpc/byte_count', 'application/octet-stream', 'héllo\\x00')
  t.equal(bytes.json, 10, "the body's bytes, a backslash taken as itself")
  const write = await post('/rpc/log_note', 'text/plain', 'from a text body')
  t.equal(write.status, 204)
  t.equal((await f.sql('select note from films where id = 1000')).rows[0].note, 'from a text body')

  for (const [fn, type, param] of [['add', 'text/plain', 'text'], ['named_text', 'text/plain', 'text'], ['shout', 'application/octet-stream', 'bytea'], ['shout', 'text/xml', 'xml']] as const) {
    const refused = await post(`/rpc/${fn}`, type, 'x')
    t.same({ status: refused.status, body: refused.json }, {
      status: 404,
      body: {
        code: 'PGRST202',
        details: `Searched for the function public.${fn} with a single unnamed ${param} parameter, but no matches were found in the schema cache.`,
        hint: null,
        message: `Could not find the function public.${fn} in the schema cache`,
      },
    }, `${fn} with ${type}`)
  }
})

t.test('other media: PGRST102, and a DELETE reads no body', async (t) => {
  const before = await count()
  const plain = await post('/films', 'text/plain', 'id=40')
  t.same({ status: plain.status, body: plain.json }, { status: 400, body: { code: 'PGRST102', details: null, hint: null, message: 'Content-Type not acceptable: text/plain' } })
  const xml = await post('/rpc/shout', 'application/xml', '<a/>')
  t.same(xml.json, { code: 'PGRST102', details: null, hint: null, message: 'Content-Type not acceptable: application/xml' })
  const bytes = await post('/films', 'application/octet-stream', 'x', {}, 'PATCH')
  t.equal(bytes.status, 400)
  t.equal(await count(), before)
  const deleted = await post('/films?id=eq.1000', 'text/plain', 'ignored', {}, 'DELETE')
  t.equal(deleted.status, 204)
  t.equal(await count(), before - 1)
})

t.test('the body limit holds for CSV as for JSON', async (t) => {
  const before = await count()
  const rows = Array.from({ length: 40_000 }, (_, i) => `${100_000 + i},a title long enough to pass the limit`).join('\n')
  const large = await post('/films', 'text/csv', `id,title\n${rows}\n`)
  t.equal(large.status, 413)
  t.equal(await count(), before)
})

t.test('an octet-stream body reaches a bytea parameter byte for byte', async (t) => {
  // Every byte value, most of them not UTF-8 on their own.
  const bytes = new Uint8Array(512).map((_, i) => (i * 7 + 3) % 256)
  const { createHash } = await import('node:crypto')
  const want = `512 ${createHash('md5').update(bytes).digest('hex')}`
  for (let i = 0; i < 2; i++) {
    const response = await fetch(`${f.project.baseUrl}/rest/v1/rpc/digest_of`, {
      method: 'POST',
      headers: { apikey: f.project.anonKey, 'content-type': 'application/octet-stream' },
      body: bytes,
    })
    t.equal(response.status, 200)
    t.equal(await response.json(), want)
  }
  const withCharset = await fetch(`${f.project.baseUrl}/rest/v1/rpc/digest_of`, {
    method: 'POST',
    headers: { apikey: f.project.anonKey, 'content-type': 'Application/Octet-Stream; x=1' },
    body: Uint8Array.from([0xff, 0x00, 0xc3]),
  })
  t.equal(await withCharset.json(), `3 ${createHash('md5').update(Uint8Array.from([0xff, 0x00, 0xc3])).digest('hex')}`)
  const text = await fetch(`${f.project.baseUrl}/rest/v1/rpc/shout`, {
    method: 'POST',
    headers: { apikey: f.project.anonKey, 'content-type': 'text/plain' },
    body: 'héllo',
  })
  t.equal(await text.json(), 'HÉLLO', 'a text body is still read as UTF-8')
})
