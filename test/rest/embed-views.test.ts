// Relationships of views through the unmodified supabase-js client, as
// PostgREST 13 derives them: a view's columns shown straight from its base
// table carry that table's keys, so views embed tables, tables embed views and
// views embed views (through views of views, materialized views, and views of
// tables in a schema not exposed), with the same one-to-one and many-to-many
// rules and hints; a view showing a key twice, or a view of a junction beside
// the junction, is PGRST201; a UNION view has no keys; RLS still decides
// inside an embedded view; a new view is embeddable on the next request; the
// OpenAPI description notes a view's keys; an upsert through a view merges on
// the primary key it shows.
import t from 'tap'
import { restProject } from './helpers.ts'

const u1 = '00000000-0000-4000-8000-0000000000b1'
const u2 = '00000000-0000-4000-8000-0000000000b2'

const f = await restProject(t, `
  create table authors (id int primary key, name text not null);
  create table profiles (author_id int primary key references authors(id), bio text);
  create table posts (id int primary key, title text not null, author_id int references authors(id), published boolean not null default true);
  create table comments (id int primary key, post_id int not null references posts(id), body text not null);
  create table tags (id int primary key, label text not null);
  create table post_tags (post_id int references posts(id), tag_id int references tags(id), primary key (post_id, tag_id));
  create table notes (id int primary key, post_id int not null references posts(id), owner uuid not null, body text not null);
  alter table notes enable row level security;
  create policy own on notes for select to authenticated using (owner = auth.uid());
  create schema private;
  create table private.memberships (id int primary key, author_id int not null references authors(id), role text not null);

  create view posts_view as select id, title, author_id from posts where published;
  create view authors_view as select id as author_key, name from authors;
  create view posts_view_view as select v.* from (select * from posts_view) v;
  create view profiles_view as select author_id, bio from profiles;
  create view posts_twice as select id, author_id, author_id as writer_id, title from posts;
  create view notes_view with (security_invoker = true) as select * from notes;
  create view memberships as select id, author_id, role from private.memberships;
  create view union_posts as select id, author_id from posts union all select id, author_id from posts;
  create materialized view post_stats as
    select p.id as post_id, count(c.id)::int as n_comments from posts p left join comments c on c.post_id = p.id group by p.id;

  insert into authors values (1, 'Ada'), (2, 'Bob'), (3, 'Cy');
  insert into profiles values (1, 'math');
  insert into posts values (1, 'Hello', 1, true), (2, 'World', 2, true), (3, 'Draft', 1, false), (4, 'Orphan', null, true);
  insert into comments values (1, 1, 'c1'), (2, 1, 'c2'), (3, 2, 'c3');
  insert into tags values (1, 'red'), (2, 'blue');
  insert into post_tags values (1, 1), (1, 2), (2, 2);
  insert into notes values (1, 1, '${u1}', 'for u1'), (2, 1, '${u2}', 'for u2');
  insert into private.memberships values (1, 1, 'editor'), (2, 2, 'viewer');
  refresh materialized view post_stats;
  grant select on all tables in schema public to anon, authenticated;
  grant select on post_stats to anon, authenticated;
`)
const s = f.anon()

t.test('a view embeds the table its base table references, and the table embeds the view back', async (t) => {
  const r = await s.from('posts_view').select('id, title, authors(name)').order('id')
  t.equal(r.error, null)
  t.same(r.data, [
    { id: 1, title: 'Hello', authors: { name: 'Ada' } },
    { id: 2, title: 'World', authors: { name: 'Bob' } },
    { id: 4, title: 'Orphan', authors: null },
  ])
  const star = await s.from('posts_view').select('*, authors(*)').eq('id', 2)
  t.equal(star.error, null)
  t.same(star.data, [{ id: 2, title: 'World', author_id: 2, authors: { id: 2, name: 'Bob' } }])
  // The view's own filter holds inside the embed: the unpublished Draft is not Ada's there.
  const back = await s.from('authors').select('name, posts_view(title)').order('id').order('title', { referencedTable: 'posts_view' })
  t.equal(back.error, null)
  t.same(back.data, [
    { name: 'Ada', posts_view: [{ title: 'Hello' }] },
    { name: 'Bob', posts_view: [{ title: 'World' }] },
    { name: 'Cy', posts_view: [] },
  ])
  const inner = await s.from('authors').select('name, posts_view!inner(title)').eq('posts_view.title', 'World')
  t.equal(inner.error, null)
  t.same(inner.data, [{ name: 'Bob', posts_view: [{ title: 'World' }] }])
})

t.test('view to view, renamed columns and views of views', async (t) => {
  const r = await s.from('posts_view').select('title, writer:authors_view(author_key, name)').order('id')
  t.equal(r.error, null)
  t.same(r.data, [
    { title: 'Hello', writer: { author_key: 1, name: 'Ada' } },
    { title: 'World', writer: { author_key: 2, name: 'Bob' } },
    { title: 'Orphan', writer: null },
  ])
  const back = await s.from('authors_view').select('name, posts_view(title)').eq('author_key', 1)
  t.equal(back.error, null)
  t.same(back.data, [{ name: 'Ada', posts_view: [{ title: 'Hello' }] }])
  const nested = await s.from('posts_view_view').select('title, authors(name), comments(body)').eq('id', 1).order('id', { referencedTable: 'comments' })
  t.equal(nested.error, null)
  t.same(nested.data, [{ title: 'Hello', authors: { name: 'Ada' }, comments: [{ body: 'c1' }, { body: 'c2' }] }])
  const toNested = await s.from('authors_view').select('name, posts_view_view(title)').eq('author_key', 2)
  t.equal(toNested.error, null)
  t.same(toNested.data, [{ name: 'Bob', posts_view_view: [{ title: 'World' }] }])
})

t.test('hints name the base key, or a view column', async (t) => {
  const byKey = await s.from('posts_view').select('id, authors!posts_author_id_fkey(name)').eq('id', 1)
  t.equal(byKey.error, null)
  t.same(byKey.data, [{ id: 1, authors: { name: 'Ada' } }])
  const byColumn = await s.from('posts_view').select('id, authors_view!author_id(name)').eq('id', 2)
  t.equal(byColumn.error, null)
  t.same(byColumn.data, [{ id: 2, authors_view: { name: 'Bob' } }])
  const byReferenced = await s.from('posts_view').select('id, authors_view!author_key(name)').eq('id', 2)
  t.equal(byReferenced.error, null)
  t.same(byReferenced.data, [{ id: 2, authors_view: { name: 'Bob' } }])
  const wrong = await s.from('posts_view').select('id, authors!nope(name)')
  t.equal(wrong.status, 400)
  t.same(wrong.error, {
    code: 'PGRST200',
    details: "Searched for a foreign key relationship between 'posts_view' and 'authors' using the hint 'nope' in the schema 'public', but no matches were found.",
    hint: null,
    message: "Could not find a relationship between 'posts_view' and 'authors' in the schema cache",
  })
})

t.test('one-to-one and many-to-many hold through views', async (t) => {
  const one = await s.from('authors').select('name, profiles_view(bio)').order('id')
  t.equal(one.error, null)
  t.same(one.data, [{ name: 'Ada', profiles_view: { bio: 'math' } }, { name: 'Bob', profiles_view: null }, { name: 'Cy', profiles_view: null }])
  const oneBack = await s.from('profiles_view').select('bio, authors_view(name)')
  t.equal(oneBack.error, null)
  t.same(oneBack.data, [{ bio: 'math', authors_view: { name: 'Ada' } }])
  const many = await s.from('posts_view').select('title, tags(label)').order('id').order('label', { referencedTable: 'tags' })
  t.equal(many.error, null)
  t.same(many.data, [
    { title: 'Hello', tags: [{ label: 'blue' }, { label: 'red' }] },
    { title: 'World', tags: [{ label: 'blue' }] },
    { title: 'Orphan', tags: [] },
  ])
  const manyBack = await s.from('tags').select('label, posts_view(title)').eq('id', 2).order('id', { referencedTable: 'posts_view' })
  t.equal(manyBack.error, null)
  t.same(manyBack.data, [{ label: 'blue', posts_view: [{ title: 'Hello' }, { title: 'World' }] }])
})

t.test('a materialized view has its base keys too', async (t) => {
  const r = await s.from('post_stats').select('post_id, n_comments, comments(body)').eq('post_id', 1).order('id', { referencedTable: 'comments' })
  t.equal(r.error, null)
  t.same(r.data, [{ post_id: 1, n_comments: 2, comments: [{ body: 'c1' }, { body: 'c2' }] }])
  const back = await s.from('comments').select('body, post_stats(n_comments)').eq('id', 3)
  t.equal(back.error, null)
  t.same(back.data, [{ body: 'c3', post_stats: { n_comments: 1 } }])
})

t.test('a view of a table in a schema not exposed relates through that table\'s keys', async (t) => {
  const r = await s.from('memberships').select('role, authors(name)').order('id')
  t.equal(r.error, null)
  t.same(r.data, [{ role: 'editor', authors: { name: 'Ada' } }, { role: 'viewer', authors: { name: 'Bob' } }])
  const back = await s.from('authors_view').select('name, memberships(role)').eq('author_key', 2)
  t.equal(back.error, null)
  t.same(back.data, [{ name: 'Bob', memberships: [{ role: 'viewer' }] }])
})

t.test('a view showing a key twice is ambiguous, each column a hint', async (t) => {
  const r = await s.from('posts_twice').select('id, authors(name)')
  t.equal(r.status, 300)
  t.same(r.error, {
    code: 'PGRST201',
    details: [
      { cardinality: 'many-to-one', embedding: 'posts_twice with authors', relationship: 'posts_author_id_fkey using posts_twice(author_id) and authors(id)' },
      { cardinality: 'many-to-one', embedding: 'posts_twice with authors', relationship: 'posts_author_id_fkey using posts_twice(writer_id) and authors(id)' },
    ],
    hint: "Try changing 'authors' to one of the following: 'authors!posts_author_id_fkey', 'authors!posts_author_id_fkey'. Find the desired relationship in the 'details' key.",
    message: "Could not embed because more than one relationship was found for 'posts_twice' and 'authors'",
  })
  const hinted = await s.from('posts_twice').select('id, writer:authors!writer_id(name)').eq('id', 2)
  t.equal(hinted.error, null)
  t.same(hinted.data, [{ id: 2, writer: { name: 'Bob' } }])
})

t.test('a UNION view shows no base column as it is, so it has no relationships', async (t) => {
  const r = await s.from('union_posts').select('id, authors(name)')
  t.equal(r.status, 400)
  t.match(r.error, { code: 'PGRST200', message: "Could not find a relationship between 'union_posts' and 'authors' in the schema cache" })
})

t.test('RLS still decides inside an embedded view', async (t) => {
  const anon = await s.from('posts').select('id, notes_view(body)').eq('id', 1)
  t.equal(anon.error, null)
  t.same(anon.data, [{ id: 1, notes_view: [] }])
  const one = await (await f.user(u1)).from('posts_view').select('id, notes_view(body)').eq('id', 1)
  t.equal(one.error, null)
  t.same(one.data, [{ id: 1, notes_view: [{ body: 'for u1' }] }])
  const two = await (await f.user(u2)).from('notes_view').select('body, posts_view(title)')
  t.equal(two.error, null)
  t.same(two.data, [{ body: 'for u2', posts_view: { title: 'Hello' } }])
})

t.test('a new view is embeddable on the next request; a view of the junction makes many-to-many ambiguous', async (t) => {
  const before = await s.from('authors').select('name, recent_posts(title)')
  t.match(before.error, { code: 'PGRST200' })
  await f.sql(`create view recent_posts as select id, author_id, title from posts where id > 1; grant select on recent_posts to anon`)
  const after = await s.from('authors').select('name, recent_posts(title)').eq('id', 1)
  t.equal(after.error, null)
  t.same(after.data, [{ name: 'Ada', recent_posts: [{ title: 'Draft' }] }])

  await f.sql(`create view post_tags_view as select post_id, tag_id from post_tags; grant select on post_tags_view to anon`)
  const ambiguous = await s.from('posts').select('title, tags(label)')
  t.equal(ambiguous.status, 300)
  t.same(ambiguous.error, {
    code: 'PGRST201',
    details: [
      { cardinality: 'many-to-many', embedding: 'posts with tags', relationship: 'post_tags using post_tags_post_id_fkey(post_id) and post_tags_tag_id_fkey(tag_id)' },
      { cardinality: 'many-to-many', embedding: 'posts with tags', relationship: 'post_tags_view using post_tags_post_id_fkey(post_id) and post_tags_tag_id_fkey(tag_id)' },
    ],
    hint: "Try changing 'tags' to one of the following: 'tags!post_tags', 'tags!post_tags_view'. Find the desired relationship in the 'details' key.",
    message: "Could not embed because more than one relationship was found for 'posts' and 'tags'",
  })
  const through = await s.from('posts').select('title, tags!post_tags_view(label)').eq('id', 2)
  t.equal(through.error, null)
  t.same(through.data, [{ title: 'World', tags: [{ label: 'blue' }] }])
  await f.sql(`drop view post_tags_view`)
  const again = await s.from('posts').select('title, tags(label)').eq('id', 2)
  t.equal(again.error, null)
  t.same(again.data, [{ title: 'World', tags: [{ label: 'blue' }] }])
})

t.test('the OpenAPI description notes the keys a view shows', async (t) => {
  const r = await f.raw<{ definitions: Record<string, { properties: Record<string, { description?: string }> }> }>('/')
  t.equal(r.status, 200)
  const defs = r.json.definitions
  t.equal(defs.posts_view!.properties.id!.description, 'Note:\nThis is a Primary Key.<pk/>')
  t.equal(defs.posts_view!.properties.author_id!.description, "Note:\nThis is a Foreign Key to `authors.id`.<fk table='authors' column='id'/>")
  t.equal(defs.authors_view!.properties.author_key!.description, 'Note:\nThis is a Primary Key.<pk/>')
  t.equal(defs.profiles_view!.properties.author_id!.description, "Note:\nThis is a Primary Key.<pk/>\nThis is a Foreign Key to `authors.id`.<fk table='authors' column='id'/>")
  t.equal(defs.union_posts!.properties.id!.description, undefined)
})

t.test('a view has the primary key it shows: an upsert through it merges on that key', async (t) => {
  await f.sql(`grant insert, update on posts_view to anon`)
  const first = await s.from('posts_view').upsert({ id: 5, title: 'New', author_id: 3 }).select()
  t.equal(first.error, null)
  t.same(first.data, [{ id: 5, title: 'New', author_id: 3 }])
  const again = await s.from('posts_view').upsert({ id: 5, title: 'Again', author_id: 3 }).select('title, authors(name)')
  t.equal(again.error, null)
  t.same(again.data, [{ title: 'Again', authors: { name: 'Cy' } }])
})
