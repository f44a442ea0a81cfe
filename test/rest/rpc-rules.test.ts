// Which functions /rpc/<fn> may call and which overload, decided as PostgREST
// 13 decides them before any SQL: all parameters named, or one unnamed
// json/jsonb/text/xml/bytea parameter; the overload whose parameters the keys
// are (PGRST203 naming the candidates in PostgREST's order, never
// PostgreSQL's 42725); PGRST202 worded as PostgREST's, with its hint.
import t from 'tap'
import { restProject } from './helpers.ts'

const f = await restProject(t, `
  create function uj(json) returns json language sql immutable as 'select $1';
  create function ujb(jsonb) returns jsonb language sql immutable as 'select $1';
  create function ut(text) returns text language sql immutable as 'select $1';
  create function ux(xml) returns text language sql immutable as 'select $1::text';
  create function ub(bytea) returns int language sql immutable as 'select length($1)';
  create function int_only(int) returns int language sql immutable as 'select $1';
  create function mixed(a int, numeric) returns numeric language sql immutable as 'select a + $2';
  create function g(a int, b int) returns int language sql immutable as 'select a + b';
  create function g(int) returns int language sql immutable as 'select $1 * 100';
  create function ov() returns text language sql immutable as $$select 'none'$$;
  create function ov(text default 'x') returns text language sql immutable as 'select $1';
  create function ovn() returns text language sql immutable as $$select 'none'$$;
  create function ovn(t text default 'x') returns text language sql immutable as 'select t';
  create function twice(x text) returns text language sql immutable as 'select x || x';
  create function twice(x int) returns int language sql immutable as 'select x * 2';
  grant execute on all functions in schema public to anon;
`)
const s = f.anon()
const post = (fn: string, type: string, body: string) =>
  f.raw(`/rpc/${fn}`, { method: 'POST', headers: { 'content-type': type }, body })

t.test('one unnamed json, jsonb, text, xml or bytea parameter is callable', async (t) => {
  const json = await s.rpc('uj', { a: 1 })
  t.equal(json.error, null)
  t.same(json.data, { a: 1 })
  const jsonb = await s.rpc('ujb', { b: [1, 2] })
  t.equal(jsonb.error, null)
  t.same(jsonb.data, { b: [1, 2] })
  // The key '' names the unnamed parameter; as in PostgREST, the parameter is then passed the whole body.
  const keyed = await s.rpc('uj', { '': { x: 1 } })
  t.equal(keyed.error, null)
  t.same(keyed.data, { '': { x: 1 } })
  const text = await post('ut', 'text/plain', 'plain words')
  t.equal(text.status, 200)
  t.equal(text.json, 'plain words')
  const textByKey = await s.rpc('ut', { '': 'hi' })
  t.equal(textByKey.error, null)
  t.equal(textByKey.data, '{"":"hi"}')
  const xml = await post('ux', 'text/xml', '<a>b</a>')
  t.equal(xml.status, 200)
  t.equal(xml.json, '<a>b</a>')
  const bytes = await post('ub', 'application/octet-stream', 'four')
  t.equal(bytes.status, 200)
  t.equal(bytes.json, 4)
})

t.test('a function outside the rule is not found: PGRST202, never 42883', async (t) => {
  const named = await s.rpc('int_only', { x: 1 })
  t.equal(named.status, 404)
  t.equal(named.error?.code, 'PGRST202')
  t.equal(named.error?.message, 'Could not find the function public.int_only(x) in the schema cache')
  t.equal(
    named.error?.details,
    'Searched for the function public.int_only with parameter x or with a single unnamed json/jsonb parameter, but no matches were found in the schema cache.',
  )
  const none = await s.rpc('int_only')
  t.same(none.error, {
    code: 'PGRST202',
    details: 'Searched for the function public.int_only without parameters or with a single unnamed json/jsonb parameter, but no matches were found in the schema cache.',
    hint: null,
    message: 'Could not find the function public.int_only without parameters in the schema cache',
  })
  const text = await post('int_only', 'text/plain', '1')
  t.same({ status: text.status, body: text.json }, {
    status: 404,
    body: {
      code: 'PGRST202',
      details: 'Searched for the function public.int_only with a single unnamed text parameter, but no matches were found in the schema cache.',
      hint: null,
      message: 'Could not find the function public.int_only in the schema cache',
    },
  })
  const viaGet = await s.rpc('int_only', {}, { get: true })
  t.equal(viaGet.status, 404)
  t.equal(viaGet.error?.details, 'Searched for the function public.int_only without parameters, but no matches were found in the schema cache.')
  // Named and unnamed parameters together: not callable either.
  const mixed = await s.rpc('mixed', { a: 1 })
  t.equal(mixed.status, 404)
  t.equal(mixed.error?.code, 'PGRST202')
  t.equal(mixed.error?.message, 'Could not find the function public.mixed(a) in the schema cache')
})

t.test('the hint lists the parameters of a same-named function', async (t) => {
  const sum = await s.rpc('g', { a: 1, b: 2 })
  t.equal(sum.error, null)
  t.equal(sum.data, 3)
  const one = await s.rpc('g', { a: 1 })
  t.equal(one.status, 404)
  t.same(one.error, {
    code: 'PGRST202',
    details: 'Searched for the function public.g with parameter a or with a single unnamed json/jsonb parameter, but no matches were found in the schema cache.',
    hint: 'Perhaps you meant to call the function public.g(a, b)',
    message: 'Could not find the function public.g(a) in the schema cache',
  })
  // g(int) is not in the cache, so no body reaches it, not even as the unnamed argument.
  const plain = await post('g', 'text/plain', '7')
  t.equal(plain.status, 404)
  t.match(plain.json, { code: 'PGRST202', hint: null })
  const several = await s.rpc('g', { b: 1, c: 2, a: 3 })
  t.equal(several.status, 404)
  t.equal(several.error?.message, 'Could not find the function public.g(a, b, c) in the schema cache')
  t.equal(several.error?.hint, 'Perhaps you meant to call the function public.g(a, b)')
  // On GET, a value with an operator is a filter, not an argument.
  const viaGet = await f.raw('/rpc/g?a=1&b=2')
  t.same({ status: viaGet.status, body: viaGet.json }, { status: 200, body: 3 })
  for (const filter of ['c=fts(english).word', 'c=not.eq.1', 'c=is.null', 'c=eq(any).{1,2}']) {
    const withFilter = await f.raw(`/rpc/g?a=1&b=2&${filter}`)
    t.same({ filter, status: withFilter.status, body: withFilter.json }, { filter, status: 200, body: 3 })
  }
  const filtered = await f.raw('/rpc/g?a=1&b=eq.2')
  t.equal(filtered.status, 404)
  t.match(filtered.json, {
    code: 'PGRST202',
    message: 'Could not find the function public.g(a) in the schema cache',
    details: 'Searched for the function public.g with parameter a, but no matches were found in the schema cache.',
  })
})

t.test('overloads are chosen by PostgREST: PGRST203 with its candidates in its order', async (t) => {
  const hint = 'Try renaming the parameters or the function itself in the database so function overloading can be resolved'
  const unnamed = await s.rpc('ov')
  t.equal(unnamed.status, 300)
  t.same(unnamed.error, { code: 'PGRST203', details: null, hint, message: 'Could not choose the best candidate function between: public.ov(), public.ov( => text)' })
  const unnamedGet = await s.rpc('ov', {}, { get: true })
  t.equal(unnamedGet.status, 300)
  t.equal(unnamedGet.error?.code, 'PGRST203')
  const named = await s.rpc('ovn', {})
  t.equal(named.status, 300)
  t.same(named.error, { code: 'PGRST203', details: null, hint, message: 'Could not choose the best candidate function between: public.ovn(), public.ovn(t => text)' })
  const chosen = await s.rpc('ovn', { t: 'y' })
  t.equal(chosen.error, null)
  t.equal(chosen.data, 'y')
  // twice(x text) was created first; PostgREST orders same-length overloads by their parameters' types.
  const types = await s.rpc('twice', { x: 2 })
  t.equal(types.status, 300)
  t.equal(types.error?.message, 'Could not choose the best candidate function between: public.twice(x => integer), public.twice(x => text)')
})

t.test('the OpenAPI description leaves out what cannot be called', async (t) => {
  const doc = await f.raw<{ paths: Record<string, unknown> }>('/', { headers: { accept: 'application/openapi+json' } })
  t.equal(doc.status, 200)
  t.ok(doc.json.paths['/rpc/ut'])
  t.ok(doc.json.paths['/rpc/g'])
  t.notOk(doc.json.paths['/rpc/int_only'])
  t.notOk(doc.json.paths['/rpc/mixed'])
})
