// GET {base_url}/rest/v1/<table> through the unmodified supabase-js client:
// select forms, every filter operator, logic trees, order, ranges, counts,
// single objects, CSV and HEAD, as PostgREST 13 answers them.
import t from 'tap'
import { restProject } from './helpers.ts'

const f = await restProject(t, `
  create table notes (
    id int primary key, title text not null, done boolean, rank int, meta jsonb,
    tags text[], during int4range, body tsvector, note text
  );
  insert into notes values
    (1, 'Alpha', false, 3, '{"tags": {"x": "1"}, "n": 20}', '{a,b}', '[1,5)', to_tsvector('english', 'the fat cats'), 'fat cat sat'),
    (2, 'beta', true, null, null, '{b}', '[5,9)', to_tsvector('english', 'lazy dogs'), 'lazy dog'),
    (3, 'Gamma, delta', false, 1, '{"tags": {"x": "3"}, "n": 5}', '{c}', '[10,20)', to_tsvector('english', 'fat dogs run'), 'fat dogs run'),
    (4, 'omega', null, 2, '{"n": 30}', '{}', null, null, null);
  create view open_notes as select id, title from notes where done is not true;
  grant select on notes, open_notes to anon;
`)
const s = f.anon()
const ids = (data: unknown) => (data as Array<{ id: number }>).map((r) => r.id)

t.test('select: columns, star, alias, cast, JSON paths', async (t) => {
  const all = await s.from('notes').select('*').eq('id', 1)
  t.equal(all.error, null)
  t.match(all.data, [{ id: 1, title: 'Alpha', done: false, rank: 3, tags: ['a', 'b'], during: '[1,5)' }])
  const shaped = await s.from('notes').select('id, name:title, rank::text, x:meta->tags->>x, meta->n, meta->>n').order('id').limit(1)
  t.equal(shaped.error, null)
  t.same(shaped.data, [{ id: 1, name: 'Alpha', rank: '3', x: '1', n: '20' }].map((r) => ({ ...r })))
  t.same(Object.keys(shaped.data![0]!), ['id', 'name', 'rank', 'x', 'n'])
  const view = await s.from('open_notes').select('id').order('id')
  t.equal(view.error, null)
  t.same(ids(view.data), [1, 3, 4])
  const quoted = await f.raw('/notes?select=%22title%22&id=eq.2')
  t.same(quoted.json, [{ title: 'beta' }])
})

t.test('every filter operator', async (t) => {
  type NotesQuery = ReturnType<ReturnType<typeof s.from>['select']>
  const cases: Array<[string, (q: NotesQuery) => NotesQuery, number[]]> = [
    ['eq', (q) => q.eq('title', 'beta'), [2]],
    ['neq', (q) => q.neq('id', 1), [2, 3, 4]],
    ['gt', (q) => q.gt('rank', 1), [1, 4]],
    ['gte', (q) => q.gte('rank', 2), [1, 4]],
    ['lt', (q) => q.lt('rank', 2), [3]],
    ['lte', (q) => q.lte('rank', 2), [3, 4]],
    ['like', (q) => q.like('title', '%a'), [1, 2, 3, 4]],
    ['like *', (q) => q.like('title', '*mega'), [4]],
    ['ilike', (q) => q.ilike('title', 'a%'), [1]],
    ['match', (q) => q.match({ id: 3 }), [3]],
    ['regex match', (q) => q.filter('title', 'match', '^[A-Z]'), [1, 3]],
    ['imatch', (q) => q.filter('title', 'imatch', '^g'), [3]],
    ['in', (q) => q.in('id', [1, 3]), [1, 3]],
    ['in with commas', (q) => q.in('title', ['Gamma, delta', 'omega']), [3, 4]],
    ['not in', (q) => q.not('id', 'in', '(1,2)'), [3, 4]],
    ['in ()', (q) => q.in('id', []), []],
    ['is null', (q) => q.is('done', null), [4]],
    ['is true', (q) => q.is('done', true), [2]],
    ['is false', (q) => q.is('done', false), [1, 3]],
    ['not.is.null', (q) => q.not('rank', 'is', null), [1, 3, 4]],
    ['isdistinct', (q) => q.filter('done', 'isdistinct', 'true'), [1, 3, 4]],
    ['fts', (q) => q.textSearch('body', 'fat & dogs'), [3]],
    ['fts config', (q) => q.textSearch('body', 'cats', { config: 'english' }), [1]],
    ['plfts', (q) => q.textSearch('body', 'fat dogs', { type: 'plain', config: 'english' }), [3]],
    ['phfts', (q) => q.textSearch('body', 'fat cats', { type: 'phrase', config: 'english' }), [1]],
    ['wfts', (q) => q.textSearch('body', '"lazy dogs" or run', { type: 'websearch', config: 'english' }), [2, 3]],
    ['fts on text', (q) => q.textSearch('note', 'dog', { config: 'english' }), [2, 3]],
    ['cs array', (q) => q.contains('tags', ['b']), [1, 2]],
    ['cd array', (q) => q.containedBy('tags', ['a', 'b', 'c']), [1, 2, 3, 4]],
    ['ov array', (q) => q.overlaps('tags', ['a', 'c']), [1, 3]],
    ['cs json', (q) => q.contains('meta', { tags: { x: '3' } }), [3]],
    ['cs range', (q) => q.contains('during', '[2,3]'), [1]],
    ['sl', (q) => q.rangeLt('during', '[6,7]'), [1]],
    ['sr', (q) => q.rangeGt('during', '[6,7]'), [3]],
    ['nxr', (q) => q.rangeLte('during', '[1,6)'), [1]],
    ['nxl', (q) => q.rangeGte('during', '[5,6)'), [2, 3]],
    ['adj', (q) => q.rangeAdjacent('during', '[9,10)'), [2, 3]],
    ['any', (q) => q.likeAnyOf('title', ['A%', 'o%']), [1, 4]],
    ['all', (q) => q.ilikeAllOf('title', ['%a%', '%l%']), [1, 3]],
    ['eq(any)', (q) => q.filter('id', 'eq(any)', '{2,4}'), [2, 4]],
    ['json path text', (q) => q.eq('meta->tags->>x', '3'), [3]],
    ['json path number', (q) => q.gt('meta->n', 10), [1, 4]],
    ['not', (q) => q.not('title', 'eq', 'beta'), [1, 3, 4]],
    ['or', (q) => q.or('id.eq.1,rank.is.null'), [1, 2]],
    ['or with and', (q) => q.or('id.eq.4,and(done.is.false,rank.lt.2)'), [3, 4]],
    ['or with quoted', (q) => q.or('title.eq."Gamma, delta",id.eq.2'), [2, 3]],
    ['or with in', (q) => q.or('id.in.(1,2),title.eq.omega'), [1, 2, 4]],
  ]
  for (const [name, apply, expected] of cases) {
    const r = await apply(s.from('notes').select('id')).order('id')
    t.equal(r.error, null, `${name}: ${JSON.stringify(r.error)}`)
    t.same(r.data && ids(r.data), expected, name)
  }
  const notOr = await f.raw<Array<{ id: number }>>('/notes?select=id&not.or=(id.eq.1,id.eq.2)&order=id')
  t.same(notOr.json.map((r) => r.id), [3, 4])
  const and = await f.raw<Array<{ id: number }>>('/notes?select=id&and=(rank.gte.1,rank.lte.2)&order=id')
  t.same(and.json.map((r) => r.id), [3, 4])
  const nested = await f.raw<Array<{ id: number }>>('/notes?select=id&or=(id.eq.2,not.and(rank.gt.0,rank.lt.3))&order=id')
  t.same(nested.json.map((r) => r.id), [1, 2])
})

t.test('order, limit, offset, range', async (t) => {
  const r = await s.from('notes').select('id').order('rank', { ascending: false, nullsFirst: true })
  t.same(ids(r.data), [2, 1, 4, 3])
  const last = await s.from('notes').select('id').order('rank', { ascending: true, nullsFirst: false })
  t.same(ids(last.data), [3, 4, 1, 2])
  const two = await s.from('notes').select('id').order('done').order('id', { ascending: false })
  t.same(ids(two.data), [3, 1, 2, 4])
  const page = await s.from('notes').select('id').order('id').range(1, 2)
  t.equal(page.error, null)
  t.same(ids(page.data), [2, 3])
  const byPath = await f.raw<Array<{ id: number }>>('/notes?select=id&order=meta->n.desc.nullslast')
  t.same(byPath.json.map((r) => r.id), [4, 1, 3, 2])
  const header = await f.raw<Array<{ id: number }>>('/notes?select=id&order=id', { headers: { range: '2-' } })
  t.same(header.json.map((r) => r.id), [3, 4])
  t.equal(header.headers['content-range'], '2-3/*')
  const both = await f.raw<Array<{ id: number }>>('/notes?select=id&order=id&limit=1', { headers: { range: '1-3' } })
  t.same(both.json.map((r) => r.id), [2])
  const zero = await s.from('notes').select('id').limit(0)
  t.same(zero.data, [])
})

t.test('counts and Content-Range', async (t) => {
  const exact = await s.from('notes').select('id', { count: 'exact' }).order('id').range(0, 1)
  t.equal(exact.error, null)
  t.equal(exact.count, 4)
  t.equal(exact.status, 206)
  const all = await f.raw('/notes?select=id', { headers: { prefer: 'count=exact' } })
  t.equal(all.status, 200)
  t.equal(all.headers['content-range'], '0-3/4')
  t.equal(all.headers['preference-applied'], 'count=exact')
  const planned = await s.from('notes').select('id', { count: 'planned' })
  t.equal(planned.error, null)
  t.ok(Number.isInteger(planned.count))
  const estimated = await s.from('notes').select('id', { count: 'estimated' })
  t.equal(estimated.count, 4)
  const head = await s.from('notes').select('*', { count: 'exact', head: true }).eq('done', false)
  t.equal(head.error, null)
  t.equal(head.count, 2)
  t.equal(head.data, null)
  const beyond = await f.raw('/notes?select=id&offset=10', { headers: { prefer: 'count=exact' } })
  t.equal(beyond.status, 416)
  t.same(beyond.json, { code: 'PGRST103', details: 'An offset of 10 was requested, but there are only 4 rows.', hint: null, message: 'Requested range not satisfiable' })
  const none = await f.raw('/notes?select=id&id=eq.99', { headers: { prefer: 'count=exact' } })
  t.equal(none.headers['content-range'], '*/0')
  const uncounted = await f.raw('/notes?select=id&id=eq.1')
  t.equal(uncounted.headers['content-range'], '0-0/*')
})

t.test('single, maybeSingle, csv, stripped nulls', async (t) => {
  const one = await s.from('notes').select('id, title').eq('id', 2).single()
  t.equal(one.error, null)
  t.same(one.data, { id: 2, title: 'beta' })
  const many = await s.from('notes').select('id').single()
  t.equal(many.status, 406)
  t.same(many.error, { code: 'PGRST116', details: 'The result contains 4 rows', hint: null, message: 'Cannot coerce the result to a single JSON object' })
  const maybe = await s.from('notes').select('id').eq('id', 99).maybeSingle()
  t.equal(maybe.error, null)
  t.equal(maybe.data, null)
  const found = await s.from('notes').select('id').eq('id', 3).maybeSingle()
  t.same(found.data, { id: 3 })
  const csv = await s.from('notes').select('id, title, done').in('id', [1, 3]).order('id').csv()
  t.equal(csv.error, null)
  t.equal(csv.data, 'id,title,done\n1,Alpha,f\n3,"Gamma, delta",f')
  const emptyCsv = await s.from('notes').select('id').eq('id', 99).csv()
  t.equal(emptyCsv.error, null)
  t.equal(emptyCsv.data, null, 'an empty body: supabase-js answers null')
  const stripped = await s.from('notes').select('id, rank').eq('id', 2).stripNulls()
  t.equal(stripped.error, null)
  t.same(stripped.data, [{ id: 2 }])
})

t.test('max rows caps a response at 1,000 by default', async (t) => {
  await f.sql(`create table many (id int primary key); insert into many select generate_series(1, 1500); grant select on many to anon`)
  const r = await s.from('many').select('id', { count: 'exact' })
  t.equal(r.error, null)
  t.equal(r.data!.length, 1000)
  t.equal(r.count, 1500)
  t.equal(r.status, 206)
  const later = await s.from('many').select('id').order('id').range(1200, 1600)
  t.equal(later.data!.length, 300)
})
