// Per-project exposed schemas (issue 29 item 4): PostgREST's db-schemas, set
// by the operator (admin API `/platform/v1/projects/{ref}/rest`, CLI
// `baseplane projects rest`), and Accept-Profile / Content-Profile as
// PostgREST 13 answers them, through the unmodified supabase-js
// (`.schema('api')`, `db: { schema: 'api' }`): the default schema, a second
// schema read, written, called and embedded in once exposed, PGRST106 for
// one not exposed, the reply's Content-Profile, the search path, a change
// followed on the next request, the setting's refusals (nothing written),
// two projects that never see each other's lists, RLS and grants inside the
// second schema, and its OpenAPI description.
import { createClient } from '@supabase/supabase-js'
import t from 'tap'
import { runCli } from '../helpers/cli.ts'
import { request } from '../helpers/http.ts'
import { restProject } from './helpers.ts'

const SETUP = `
  create table public.notes (id int primary key, body text not null);
  insert into public.notes values (1, 'public note');
  grant select on public.notes to anon;
  create function public.where_am_i() returns text language sql stable as $$ select current_setting('search_path') $$;
  create function public.label() returns text language sql stable as $$ select 'public' $$;

  create schema api;
  comment on schema api is 'The api schema';
  create table api.authors (id int primary key, name text not null);
  create table api.books (id serial primary key, title text not null, author_id int references api.authors(id));
  create table api.diary (id serial primary key, owner uuid not null default auth.uid(), entry text not null);
  alter table api.diary enable row level security;
  create policy own on api.diary for all to authenticated using (owner = auth.uid()) with check (owner = auth.uid());
  insert into api.authors values (1, 'Ada'), (2, 'Bob');
  insert into api.books (title, author_id) values ('Notes on the engine', 1), ('Letters', 2);
  insert into api.diary (owner, entry) values ('00000000-0000-4000-8000-00000000000a', 'ada''s'), ('00000000-0000-4000-8000-00000000000b', 'bob''s');
  create function api.add(a int, b int) returns int language sql immutable as 'select a + b';
  create function api.where_am_i() returns text language sql stable as $$ select current_setting('search_path') $$;
  create function api.label() returns text language sql stable as $$ select 'api' $$;
  -- Unqualified: resolved on the request's search path, so the schema asked for wins.
  create function public.which_label() returns text language sql stable as $$ select label() $$;
  create function api.which_label() returns text language sql stable as $$ select label() $$;
  grant usage on schema api to anon, authenticated, service_role;
  grant select on api.authors, api.books to anon;
  grant select, insert, update, delete on all tables in schema api to authenticated, service_role;
  grant usage on all sequences in schema api to authenticated, service_role;

  -- Exposed later without USAGE for anon: PostgreSQL's refusal, as PostgREST's.
  create schema closed;
  create table closed.things (id int primary key);
  grant select on closed.things to anon;
`

const f = await restProject(t, SETUP)
const { project, platform } = f
const ADA = '00000000-0000-4000-8000-00000000000a'
const adminHeaders = { authorization: `Bearer ${platform.config.adminToken}` }
const settings = (ref: string, method = 'GET', body?: unknown) =>
  request<{ ref: string; schemas: string[]; code?: string; message?: string }>(`${platform.origin}/platform/v1/projects/${ref}/rest`, { method, headers: adminHeaders, body: body as object })
const expose = async (schemas: string[], ref = project.ref) => {
  const reply = await settings(ref, 'PATCH', { schemas })
  if (reply.status !== 200) throw new Error(`PATCH rest: ${reply.status} ${reply.text}`)
  return reply
}
const s = f.anon()

t.test('by default the data API exposes public only', async (t) => {
  const view = await settings(project.ref)
  t.equal(view.status, 200)
  t.same(view.json, { ref: project.ref, schemas: ['public'], max_rows: null, pre_request: null, pre_request_problem: null, tx_end: 'commit', plans: false })

  const notes = await s.from('notes').select('id, body')
  t.equal(notes.error, null)
  t.same(notes.data, [{ id: 1, body: 'public note' }])
  const bare = await f.raw('/notes?select=id')
  t.equal(bare.status, 200)
  t.equal(bare.headers['content-profile'], undefined, 'no profile header sent and one schema exposed: none in the reply')
  const asked = await f.raw('/notes?select=id', { headers: { 'accept-profile': 'public' } })
  t.equal(asked.headers['content-profile'], 'public', 'a profile header sent: the reply names the schema')

  const api = await s.schema('api').from('authors').select()
  t.equal(api.status, 406)
  t.same(api.error, { code: 'PGRST106', details: null, hint: 'Only the following schemas are exposed: public', message: 'Invalid schema: api' })
  const auth = await s.schema('auth').from('users').select()
  t.same(auth.error, { code: 'PGRST106', details: null, hint: 'Only the following schemas are exposed: public', message: 'Invalid schema: auth' })
  const write = await f.raw('/authors', { method: 'POST', headers: { 'content-profile': 'api' }, body: { id: 3, name: 'Cy' } })
  t.same({ status: write.status, code: (write.json as { code: string }).code }, { status: 406, code: 'PGRST106' }, 'Content-Profile is checked on writes')

  const path = await s.rpc('where_am_i')
  t.equal(path.error, null)
  t.equal(path.data, '"public", "extensions"', "the request's search path: its schema, quoted as PostgREST sets it")
})

t.test('a second schema, exposed by the admin API, is served from the next request', async (t) => {
  const set = await expose(['public', 'api'])
  t.same(set.json, { ref: project.ref, schemas: ['public', 'api'], max_rows: null, pre_request: null, pre_request_problem: null, tx_end: 'commit', plans: false })
  t.same((await settings(project.ref)).json.schemas, ['public', 'api'])

  const api = s.schema('api')
  const authors = await api.from('authors').select('id, name').order('id')
  t.equal(authors.error, null)
  t.same(authors.data, [{ id: 1, name: 'Ada' }, { id: 2, name: 'Bob' }])
  const embedded = await api.from('books').select('title, authors(name)').order('id')
  t.equal(embedded.error, null)
  t.same(embedded.data, [{ title: 'Notes on the engine', authors: { name: 'Ada' } }, { title: 'Letters', authors: { name: 'Bob' } }])
  const reverse = await api.from('authors').select('name, books(title)').eq('id', 2)
  t.equal(reverse.error, null)
  t.same(reverse.data, [{ name: 'Bob', books: [{ title: 'Letters' }] }])

  const sum = await api.rpc('add', { a: 40, b: 2 })
  t.equal(sum.error, null)
  t.equal(sum.data, 42)
  const got = await api.rpc('add', { a: 1, b: 2 }, { get: true })
  t.equal(got.error, null)
  t.equal(got.data, 3, 'GET /rpc with Accept-Profile')
  const path = await api.rpc('where_am_i')
  t.equal(path.error, null)
  t.equal(path.data, '"api", "public", "extensions"', 'the schema first on the search path, then public and extensions (PostgREST as Supabase configures it)')
  const label = await api.rpc('which_label')
  t.same([label.error, label.data], [null, 'api'], "an unqualified name resolves in the request's schema first")
  const publicLabel = await s.rpc('which_label')
  t.same([publicLabel.error, publicLabel.data], [null, 'public'])

  // The public schema is still served, and is still the default.
  const notes = await s.from('notes').select('body')
  t.equal(notes.error, null)
  t.same(notes.data, [{ body: 'public note' }])
  const bare = await f.raw<Array<{ id: number }>>('/notes?select=id')
  t.same([bare.status, bare.headers['content-profile']], [200, 'public'], 'several schemas exposed: the reply names the default')
  const named = await f.raw('/authors?select=id&limit=1', { headers: { 'accept-profile': 'api' } })
  t.same([named.status, named.headers['content-profile']], [200, 'api'])
  const notThere = await f.raw<{ code: string }>('/authors?select=id')
  t.same([notThere.status, notThere.json.code], [404, 'PGRST205'], 'without a profile the request is for public, where there is no authors')
  const elsewhere = await s.schema('api').from('books').select('title, notes(body)')
  t.equal(elsewhere.error?.code, 'PGRST200', 'an embed stays within the request schema')
})

t.test('writes in the second schema, with the client made for it', async (t) => {
  const service = createClient(project.baseUrl, project.serviceRoleKey, { db: { schema: 'api' }, auth: { persistSession: false, autoRefreshToken: false } })
  const inserted = await service.from('books').insert({ title: 'Sketches', author_id: 1 }).select('title, authors(name)')
  t.equal(inserted.error, null)
  t.same(inserted.data, [{ title: 'Sketches', authors: { name: 'Ada' } }])
  const raw = await f.raw('/books', {
    method: 'POST',
    headers: { apikey: project.serviceRoleKey, authorization: `Bearer ${project.serviceRoleKey}`, 'content-profile': 'api', prefer: 'return=representation' },
    body: { title: 'Raw', author_id: 2 },
  })
  t.same([raw.status, raw.headers['content-profile']], [201, 'api'], 'a write answers with Content-Profile')
  const updated = await service.from('books').update({ title: 'Sketches, revised' }).eq('title', 'Sketches').select('title')
  t.equal(updated.error, null)
  t.same(updated.data, [{ title: 'Sketches, revised' }])
  const upserted = await service.from('authors').upsert({ id: 2, name: 'Bob B.' }).select()
  t.equal(upserted.error, null)
  t.same(upserted.data, [{ id: 2, name: 'Bob B.' }])
  const deleted = await service.from('books').delete().in('title', ['Sketches, revised', 'Raw']).select('title')
  t.equal(deleted.error, null)
  t.equal(deleted.data?.length, 2)
  const rows = await f.sql('select title from api.books order by id')
  t.same(rows.rows.map((r: { title: string }) => r.title), ['Notes on the engine', 'Letters'])
  await f.sql("update api.authors set name = 'Bob' where id = 2")

  // anon was granted nothing but SELECT there: PostgreSQL's refusal.
  const anonWrite = await s.schema('api').from('authors').insert({ id: 9, name: 'Eve' })
  t.equal(anonWrite.status, 401)
  t.equal(anonWrite.error?.code, '42501')
})

t.test('row-level security still decides inside the second schema', async (t) => {
  const ada = (await f.user(ADA)).schema('api')
  const mine = await ada.from('diary').select('entry')
  t.equal(mine.error, null)
  t.same(mine.data, [{ entry: "ada's" }])
  const wrote = await ada.from('diary').insert({ entry: 'more' }).select('entry, owner')
  t.equal(wrote.error, null)
  t.same(wrote.data, [{ entry: 'more', owner: ADA }])
  const forged = await ada.from('diary').insert({ entry: 'forged', owner: '00000000-0000-4000-8000-00000000000b' })
  t.equal(forged.status, 403)
  t.equal(forged.error?.code, '42501')
  const bobs = await ada.from('diary').update({ entry: 'changed' }).eq('entry', "bob's").select()
  t.equal(bobs.error, null)
  t.same(bobs.data, [], "another's row is not seen, so not changed")
  const anon = await s.schema('api').from('diary').select()
  t.equal(anon.status, 401, 'anon has no grant on diary')
  t.equal(anon.error?.code, '42501')
})

t.test('the OpenAPI description of the schema asked for', async (t) => {
  type Doc = { paths: Record<string, unknown>; info: { title: string } }
  const api = await f.raw<Doc>('/', { headers: { 'accept-profile': 'api' } })
  t.equal(api.status, 200)
  t.equal(api.headers['content-profile'], 'api')
  t.equal(api.json.info.title, 'The api schema', "the schema's comment")
  t.ok('/authors' in api.json.paths && '/books' in api.json.paths && '/rpc/add' in api.json.paths)
  t.notOk('/notes' in api.json.paths, "public's tables are not in api's description")
  const pub = await f.raw<Doc>('/')
  t.equal(pub.headers['content-profile'], 'public')
  t.ok('/notes' in pub.json.paths)
  t.notOk('/authors' in pub.json.paths)
  const refused = await f.raw<{ code: string }>('/', { headers: { 'accept-profile': 'closed' } })
  t.same([refused.status, refused.json.code], [406, 'PGRST106'])
})

t.test('the grants a project owner gives: without USAGE on the schema, PostgreSQL refuses', async (t) => {
  await expose(['public', 'api', 'closed'])
  const things = await s.schema('closed').from('things').select()
  t.equal(things.status, 401)
  t.equal(things.error?.code, '42501')
  t.match(things.error?.message, 'permission denied for schema closed')
  const doc = await f.raw<{ paths: Record<string, unknown> }>('/', { headers: { 'accept-profile': 'closed' } })
  t.same(Object.keys(doc.json.paths), ['/'], 'the description offers nothing of a schema the role may not use')
  await f.sql('grant usage on schema closed to anon')
  const granted = await s.schema('closed').from('things').select()
  t.equal(granted.error, null)
  t.same(granted.data, [])
})

t.test('a schema not created yet serves nothing until it is', async (t) => {
  await expose(['public', 'api', 'later'])
  const before = await s.schema('later').from('items').select()
  t.equal(before.status, 404)
  t.equal(before.error?.code, 'PGRST205')
  await f.sql(`create schema later; create table later.items (id int primary key); insert into later.items values (7);
    grant usage on schema later to anon; grant select on later.items to anon`)
  const after = await s.schema('later').from('items').select()
  t.equal(after.error, null)
  t.same(after.data, [{ id: 7 }])
})

t.test('a change of the list is followed on the next request: the first schema is the default', async (t) => {
  await expose(['api'])
  const bare = await f.raw<Array<{ name: string }>>('/authors?select=name&order=id')
  t.equal(bare.status, 200)
  t.same(bare.json, [{ name: 'Ada' }, { name: 'Bob' }], 'no profile: the first exposed schema')
  t.equal(bare.headers['content-profile'], undefined, 'one schema exposed and none asked for')
  const notes = await s.from('notes').select()
  t.same(notes.error, { code: 'PGRST106', details: null, hint: 'Only the following schemas are exposed: api', message: 'Invalid schema: public' }, "supabase-js's default public is no longer exposed")
  const path = await f.raw('/rpc/where_am_i', { method: 'POST', body: {} })
  t.equal(path.json, '"api", "public", "extensions"')

  await expose(['public'])
  const back = await s.from('notes').select('id')
  t.equal(back.error, null)
  t.same(back.data, [{ id: 1 }])
  const gone = await s.schema('api').from('authors').select()
  t.equal(gone.error?.code, 'PGRST106')
})

t.test('refusals of the admin API and the CLI write nothing', async (t) => {
  await expose(['public', 'api'])
  const bad: Array<[unknown, RegExp]> = [
    [{ schemas: [] }, /schemas must name at least one schema/],
    [{ schemas: 'public,api' }, /schemas must be a list of schema names/],
    [{ schemas: ['auth'] }, /schemas may not name "auth"/],
    [{ schemas: ['public', 'Graphql'] }, /schemas may not name "Graphql"/],
    [{ schemas: ['pg_catalog'] }, /schemas may not name "pg_catalog"/],
    [{ schemas: ['pg_toast'] }, /schemas may not name/],
    [{ schemas: ['information_schema'] }, /schemas may not name/],
    [{ schemas: ['baseplane'] }, /schemas may not name/],
    [{ schemas: ['push'] }, /schemas may not name/],
    [{ schemas: ['a b'] }, /schemas must hold schema names of letters, digits/],
    [{ schemas: ['api"; drop table x; --'] }, /schemas must hold schema names/],
    [{ schemas: ['1api'] }, /schemas must hold schema names/],
    [{ schemas: ['x'.repeat(64)] }, /schemas must hold schema names/],
    [{ schemas: [7] }, /schemas must hold schema names/],
    [{ schemas: ['api', 'api'] }, /schemas names "api" twice/],
    [{ schemas: Array.from({ length: 21 }, (_, i) => `s${i}`) }, /schemas may name at most 20 schemas, got 21/],
    [{}, /Give schemas/],
    [{ schemas: ['public'], db_schemas: 5 }, /Unknown setting "db_schemas": use schemas, max_rows, pre_request, tx_end or plans/],
    [{ schemas: ['auth'], max_rows: 5 }, /schemas may not name "auth"/],
  ]
  for (const [body, message] of bad) {
    const reply = await settings(project.ref, 'PATCH', body)
    t.equal(reply.status, 400, JSON.stringify(body).slice(0, 60))
    t.equal(reply.json.code, 'invalid_argument')
    t.match(reply.json.message, message)
  }
  t.same((await settings(project.ref)).json.schemas, ['public', 'api'], 'nothing was written')
  t.equal((await settings('nosuchproject00000000', 'PATCH', { schemas: ['public'] })).status, 404)
  t.ok((await settings(project.ref, 'PATCH', { schemas: ['x'.repeat(63), 'A$b_9'] })).status === 200, '63 bytes and $ are fine')
  await expose(['public', 'api'])

  const cli = (args: string[]) => runCli(['projects', 'rest', project.ref, ...args], { DATABASE_URL: platform.catalogueUrl })
  const shown = await cli([])
  t.equal(shown.code, 0, shown.stderr)
  t.match(shown.stdout, /exposed schemas\s+public, api/)
  t.match(shown.stdout, /default schema\s+public/)
  for (const [value, message] of [
    ['auth', /--schemas may not name "auth"/],
    ['public,,api', /--schemas must hold schema names/],
    ['public,public', /--schemas names "public" twice/],
  ] as const) {
    const refused = await cli(['--schemas', value])
    t.equal(refused.code, 1, value)
    t.equal(refused.stdout, '')
    t.match(refused.stderr, message)
  }
  t.same((await settings(project.ref)).json.schemas, ['public', 'api'], 'nothing was written by the CLI either')
  const changed = await cli(['--schemas', 'api, public'])
  t.equal(changed.code, 0, changed.stderr)
  t.match(changed.stdout, /exposed schemas\s+api, public/)
  t.match(changed.stdout, /default schema\s+api/)
  const json = await cli(['--json'])
  t.same(JSON.parse(json.stdout), { ref: project.ref, schemas: ['api', 'public'], max_rows: null, pre_request: null, pre_request_problem: null, tx_end: 'commit', plans: false })
  const bare = await f.raw('/authors?select=id&limit=1')
  t.equal(bare.status, 200, 'served as the CLI set it, on the next request')
  await expose(['public', 'api'])
})

t.test("two projects with different lists never see each other's", async (t) => {
  const other = await restProject(t, `
    create schema api;
    create table api.authors (id int primary key, name text);
    insert into api.authors values (1, 'Other');
    grant usage on schema api to anon; grant select on api.authors to anon;`, platform)
  t.same((await settings(other.project.ref)).json.schemas, ['public'])
  const refused = await other.anon().schema('api').from('authors').select()
  t.equal(refused.error?.code, 'PGRST106', "the other project's list is its own: api is not exposed there")
  const mine = await s.schema('api').from('authors').select('name').order('id')
  t.equal(mine.error, null)
  t.same(mine.data, [{ name: 'Ada' }, { name: 'Bob' }])

  await expose(['api'], other.project.ref)
  const theirs = await other.anon().schema('api').from('authors').select('name')
  t.equal(theirs.error, null)
  t.same(theirs.data, [{ name: 'Other' }], 'its own rows, from its own database')
  const stillMine = await s.from('notes').select('id')
  t.equal(stillMine.error, null, "this project's public is still exposed")
  t.same((await settings(project.ref)).json.schemas, ['public', 'api'])
})
