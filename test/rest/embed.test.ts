// Embedded resources through the unmodified supabase-js client, as PostgREST
// 13 answers them: to-one and to-many both ways, one-to-one, many-to-many
// through a junction, `!inner`, `!hint` on a table with two keys to the same
// table, spreads, filters, order and limits on an embed, `rel=not.is.null`,
// related orders, each PGRST error in full, RLS inside an embed, writes that
// return embeds, the limits before SQL, and a new foreign key embeddable on
// the next request.
import t from 'tap'
import { restProject } from './helpers.ts'

const u1 = '00000000-0000-4000-8000-0000000000a1'
const u2 = '00000000-0000-4000-8000-0000000000a2'

const f = await restProject(t, `
  create table authors (id int primary key, name text not null);
  create table profiles (author_id int primary key references authors(id), bio text);
  create table posts (id int primary key, title text not null, author_id int references authors(id));
  create table comments (id int primary key, post_id int not null references posts(id), body text not null);
  create table tags (id int primary key, label text not null);
  create table post_tags (post_id int references posts(id), tag_id int references tags(id), primary key (post_id, tag_id));
  create table teams (id int primary key, name text not null);
  create table matches (
    id int primary key,
    home_id int not null constraint matches_home_fkey references teams(id),
    away_id int not null constraint matches_away_fkey references teams(id)
  );
  create table notes (id int primary key, post_id int not null references posts(id), owner uuid not null, body text not null);
  alter table notes enable row level security;
  create policy own on notes for select to authenticated using (owner = auth.uid());
  create table lonely (id int primary key);
  insert into authors values (1, 'Ada'), (2, 'Bob'), (3, 'Cy');
  insert into profiles values (1, 'math');
  insert into posts values (1, 'Hello', 1), (2, 'World', 2), (3, 'Orphan', null);
  insert into comments values (1, 1, 'c1'), (2, 1, 'c2'), (3, 2, 'c3');
  insert into tags values (1, 'red'), (2, 'blue');
  insert into post_tags values (1, 1), (1, 2), (2, 2);
  insert into teams values (1, 'Lions'), (2, 'Tigers');
  insert into matches values (1, 1, 2);
  insert into notes values (1, 1, '${u1}', 'for u1'), (2, 1, '${u2}', 'for u2');
  grant select on all tables in schema public to anon, authenticated;
  grant insert on comments to anon;
`)
const s = f.anon()

t.test('to-one and to-many embeds, aliased, in one answer', async (t) => {
  const r = await s.from('posts').select('id, title, author:authors(name), comments(id, body)').order('id').order('id', { referencedTable: 'comments' })
  t.equal(r.error, null)
  t.equal(r.status, 200)
  t.same(r.data, [
    { id: 1, title: 'Hello', author: { name: 'Ada' }, comments: [{ id: 1, body: 'c1' }, { id: 2, body: 'c2' }] },
    { id: 2, title: 'World', author: { name: 'Bob' }, comments: [{ id: 3, body: 'c3' }] },
    { id: 3, title: 'Orphan', author: null, comments: [] },
  ])
  const back = await s.from('authors').select('name, posts(title, comments(body))').order('id').order('id', { referencedTable: 'posts.comments' })
  t.equal(back.error, null)
  t.same(back.data, [
    { name: 'Ada', posts: [{ title: 'Hello', comments: [{ body: 'c1' }, { body: 'c2' }] }] },
    { name: 'Bob', posts: [{ title: 'World', comments: [{ body: 'c3' }] }] },
    { name: 'Cy', posts: [] },
  ])
  const star = await s.from('posts').select('*, authors(*)').eq('id', 2)
  t.equal(star.error, null)
  t.same(star.data, [{ id: 2, title: 'World', author_id: 2, authors: { id: 2, name: 'Bob' } }])
})

t.test('one-to-one both ways gives an object or null', async (t) => {
  const from = await s.from('authors').select('name, profiles(bio)').order('id')
  t.equal(from.error, null)
  t.same(from.data, [{ name: 'Ada', profiles: { bio: 'math' } }, { name: 'Bob', profiles: null }, { name: 'Cy', profiles: null }])
  const to = await s.from('profiles').select('bio, authors(name)')
  t.equal(to.error, null)
  t.same(to.data, [{ bio: 'math', authors: { name: 'Ada' } }])
})

t.test('!inner drops unmatched parents (and counts them out); !left keeps them', async (t) => {
  const inner = await s.from('posts').select('id, authors!inner(name)', { count: 'exact' }).eq('authors.name', 'Ada')
  t.equal(inner.error, null)
  t.same(inner.data, [{ id: 1, authors: { name: 'Ada' } }])
  t.equal(inner.count, 1)
  const left = await s.from('posts').select('id, authors!left(name)').eq('authors.name', 'Ada').order('id')
  t.equal(left.error, null)
  t.same(left.data, [{ id: 1, authors: { name: 'Ada' } }, { id: 2, authors: null }, { id: 3, authors: null }])
  const many = await s.from('posts').select('id, comments!inner(id)').order('id').order('id', { referencedTable: 'comments' })
  t.equal(many.error, null)
  t.same(many.data, [{ id: 1, comments: [{ id: 1 }, { id: 2 }] }, { id: 2, comments: [{ id: 3 }] }])
  const empty = await s.from('posts').select('id, authors!inner()').eq('authors.name', 'Bob')
  t.equal(empty.error, null)
  t.same(empty.data, [{ id: 2 }])
})

t.test('two keys to the same table: PGRST201, then each hint form', async (t) => {
  const ambiguous = await s.from('matches').select('id, teams(name)')
  t.equal(ambiguous.status, 300)
  t.same(ambiguous.error, {
    code: 'PGRST201',
    details: [
      { cardinality: 'many-to-one', embedding: 'matches with teams', relationship: 'matches_away_fkey using matches(away_id) and teams(id)' },
      { cardinality: 'many-to-one', embedding: 'matches with teams', relationship: 'matches_home_fkey using matches(home_id) and teams(id)' },
    ],
    hint: "Try changing 'teams' to one of the following: 'teams!matches_away_fkey', 'teams!matches_home_fkey'. Find the desired relationship in the 'details' key.",
    message: "Could not embed because more than one relationship was found for 'matches' and 'teams'",
  })
  const hinted = await s.from('matches').select('id, home:teams!matches_home_fkey(name), away:teams!away_id(name)')
  t.equal(hinted.error, null)
  t.same(hinted.data, [{ id: 1, home: { name: 'Lions' }, away: { name: 'Tigers' } }])
  const back = await s.from('teams').select('name, home:matches!home_id(id), away:matches!matches_away_fkey!inner(id)')
  t.equal(back.error, null)
  t.same(back.data, [{ name: 'Tigers', home: [], away: [{ id: 1 }] }])
  const byReferenced = await s.from('posts').select('id, authors!id(name)').eq('id', 1)
  t.equal(byReferenced.error, null)
  t.same(byReferenced.data, [{ id: 1, authors: { name: 'Ada' } }])
})

t.test('many-to-many through a junction table', async (t) => {
  const r = await s.from('posts').select('title, tags(label)').order('id').order('label', { referencedTable: 'tags' })
  t.equal(r.error, null)
  t.same(r.data, [
    { title: 'Hello', tags: [{ label: 'blue' }, { label: 'red' }] },
    { title: 'World', tags: [{ label: 'blue' }] },
    { title: 'Orphan', tags: [] },
  ])
  const back = await s.from('tags').select('label, posts!post_tags(title)').eq('id', 1)
  t.equal(back.error, null)
  t.same(back.data, [{ label: 'red', posts: [{ title: 'Hello' }] }])
})

t.test('spread: to-one lifts columns, to-many gives correlated arrays', async (t) => {
  const one = await s.from('posts').select('title, ...authors(author:name)').order('id')
  t.equal(one.error, null)
  t.same(one.data, [{ title: 'Hello', author: 'Ada' }, { title: 'World', author: 'Bob' }, { title: 'Orphan', author: null }])
  const many = await s.from('posts').select('id, ...comments(cid:id, body)').order('id').order('id', { referencedTable: 'comments' })
  t.equal(many.error, null)
  t.same(many.data, [
    { id: 1, cid: [1, 2], body: ['c1', 'c2'] },
    { id: 2, cid: [3], body: ['c3'] },
    { id: 3, cid: [], body: [] },
  ])
})

t.test('filters, or, order, limit and offset on an embed', async (t) => {
  const eq = await s.from('posts').select('id, comments(id)').eq('comments.id', 2).order('id')
  t.equal(eq.error, null)
  t.same(eq.data, [{ id: 1, comments: [{ id: 2 }] }, { id: 2, comments: [] }, { id: 3, comments: [] }])
  const page = await s.from('posts').select('id, comments(id)').eq('id', 1).order('id', { referencedTable: 'comments', ascending: false }).limit(1, { referencedTable: 'comments' })
  t.equal(page.error, null)
  t.same(page.data, [{ id: 1, comments: [{ id: 2 }] }])
  const range = await s.from('posts').select('id, comments(id)').eq('id', 1).order('id', { referencedTable: 'comments' }).range(1, 1, { referencedTable: 'comments' })
  t.equal(range.error, null)
  t.same(range.data, [{ id: 1, comments: [{ id: 2 }] }])
  const or = await s.from('posts').select('id, comments(id)').or('id.eq.1,id.eq.3', { referencedTable: 'comments' }).in('id', [1, 2]).order('id')
  t.equal(or.error, null)
  t.same(or.data, [{ id: 1, comments: [{ id: 1 }] }, { id: 2, comments: [{ id: 3 }] }])
  const nested = await s.from('authors').select('name, posts(title, comments(body))').eq('posts.comments.body', 'c2').eq('id', 1)
  t.equal(nested.error, null)
  t.same(nested.data, [{ name: 'Ada', posts: [{ title: 'Hello', comments: [{ body: 'c2' }] }] }])
})

t.test('rel=not.is.null and rel=is.null filter the parents, also inside or', async (t) => {
  const some = await s.from('posts').select('id, comments(id)').not('comments', 'is', null).order('id').order('id', { referencedTable: 'comments' })
  t.equal(some.error, null)
  t.same(some.data, [{ id: 1, comments: [{ id: 1 }, { id: 2 }] }, { id: 2, comments: [{ id: 3 }] }])
  const none = await s.from('posts').select('id, authors(name)').is('authors', null)
  t.equal(none.error, null)
  t.same(none.data, [{ id: 3, authors: null }])
  const either = await s.from('posts').select('id, authors(name)').or('authors.is.null,id.eq.2').order('id')
  t.equal(either.error, null)
  t.same(either.data, [{ id: 2, authors: { name: 'Bob' } }, { id: 3, authors: null }])
  const counted = await s.from('posts').select('id, comments(id)', { count: 'exact', head: true }).eq('comments.id', 3).not('comments', 'is', null)
  t.equal(counted.error, null)
  t.equal(counted.count, 1)
})

t.test('order by a to-one embed; a to-many one is PGRST118', async (t) => {
  const r = await s.from('posts').select('id, authors(name)').order('authors(name)', { ascending: false, nullsFirst: false })
  t.equal(r.error, null)
  t.same(r.data, [{ id: 2, authors: { name: 'Bob' } }, { id: 1, authors: { name: 'Ada' } }, { id: 3, authors: null }])
  const many = await s.from('authors').select('name, posts(title)').order('posts(title)')
  t.equal(many.status, 400)
  t.same(many.error, {
    code: 'PGRST118',
    details: "'authors' and 'posts' do not form a many-to-one or one-to-one relationship",
    hint: null,
    message: "A related order on 'posts' is not possible",
  })
})

t.test('PGRST200, PGRST108 and PGRST120 in full', async (t) => {
  const near = await s.from('posts').select('id, comment(id)')
  t.equal(near.status, 400)
  t.same(near.error, {
    code: 'PGRST200',
    details: "Searched for a foreign key relationship between 'posts' and 'comment' in the schema 'public', but no matches were found.",
    hint: "Perhaps you meant 'comments' instead of 'comment'.",
    message: "Could not find a relationship between 'posts' and 'comment' in the schema cache",
  })
  const badHint = await s.from('posts').select('id, authors!nope(name)')
  t.same(badHint.error, {
    code: 'PGRST200',
    details: "Searched for a foreign key relationship between 'posts' and 'authors' using the hint 'nope' in the schema 'public', but no matches were found.",
    hint: null,
    message: "Could not find a relationship between 'posts' and 'authors' in the schema cache",
  })
  const unrelated = await s.from('lonely').select('id, posts(id)')
  t.same(unrelated.error, {
    code: 'PGRST200',
    details: "Searched for a foreign key relationship between 'lonely' and 'posts' in the schema 'public', but no matches were found.",
    hint: null,
    message: "Could not find a relationship between 'lonely' and 'posts' in the schema cache",
  })
  const notEmbedded = await s.from('posts').select('id').eq('comments.id', 1)
  t.equal(notEmbedded.status, 400)
  t.same(notEmbedded.error, { code: 'PGRST108', details: null, hint: "Verify that 'comments' is included in the 'select' query parameter.", message: "'comments' is not an embedded resource in this request" })
  const orderNot = await s.from('posts').select('id').order('authors(name)')
  t.match(orderNot.error, { code: 'PGRST108', message: "'authors' is not an embedded resource in this request" })
  const limitNot = await s.from('posts').select('id, comments(id)').limit(1, { referencedTable: 'tags' })
  t.match(limitNot.error, { code: 'PGRST108', message: "'tags' is not an embedded resource in this request" })
  const badOp = await s.from('posts').select('id, comments(id)').eq('comments', 1)
  t.equal(badOp.status, 400)
  t.same(badOp.error, {
    code: 'PGRST120',
    details: 'Only is null or not is null filters are allowed on embedded resources',
    hint: null,
    message: "Bad operator on the 'comments' embedded resource",
  })
})

t.test('embedding depth and size are limited before any SQL', async (t) => {
  const nine = 'a('.repeat(9) + 'id' + ')'.repeat(9)
  const deep = await f.raw(`/posts?select=${nine}`)
  t.equal(deep.status, 400)
  t.same(deep.json, { code: 'PGRST100', details: null, hint: null, message: 'Request is too deep: embedded resources nest more than 8 levels' })
  const wide = await f.raw(`/posts?select=id,comments(${Array.from({ length: 500 }, (_, i) => `c${i}`).join(',')})`)
  t.equal(wide.status, 400)
  t.match(wide.json, { code: 'PGRST100', message: 'Request is too large: select has 501 items, more than the 500 allowed' })
})

t.test('RLS applies inside an embed, per user', async (t) => {
  const anon = await s.from('posts').select('id, notes(body)').eq('id', 1)
  t.equal(anon.error, null)
  t.same(anon.data, [{ id: 1, notes: [] }])
  const one = await (await f.user(u1)).from('posts').select('id, notes(body)').eq('id', 1)
  t.equal(one.error, null)
  t.same(one.data, [{ id: 1, notes: [{ body: 'for u1' }] }])
  const two = await (await f.user(u2)).from('posts').select('id, notes!inner(body)')
  t.equal(two.error, null)
  t.same(two.data, [{ id: 1, notes: [{ body: 'for u2' }] }])
})

t.test('a write returns its rows with their embeds', async (t) => {
  const r = await s.from('comments').insert({ id: 10, post_id: 2, body: 'new' }).select('id, post:posts(title, author:authors(name))')
  t.equal(r.error, null)
  t.equal(r.status, 201)
  t.same(r.data, [{ id: 10, post: { title: 'World', author: { name: 'Bob' } } }])
})

t.test('a new foreign key is embeddable on the next request', async (t) => {
  await f.sql(`create table reviews (id int primary key, body text); grant select on reviews to anon; insert into reviews values (1, 'fine')`)
  const before = await s.from('reviews').select('id, posts(title)')
  t.match(before.error, { code: 'PGRST200' })
  await f.sql(`alter table reviews add column post_id int references posts(id); update reviews set post_id = 1`)
  const after = await s.from('reviews').select('id, posts(title)')
  t.equal(after.error, null)
  t.same(after.data, [{ id: 1, posts: { title: 'Hello' } }])
  const back = await s.from('posts').select('id, reviews(body)').eq('id', 1)
  t.equal(back.error, null)
  t.same(back.data, [{ id: 1, reviews: [{ body: 'fine' }] }])
})
