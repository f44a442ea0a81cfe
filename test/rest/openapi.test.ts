// GET {base_url}/rest/v1/: PostgREST's OpenAPI 2.0 description, following the
// caller's privileges (tables it may read, the methods it may use, functions
// it may execute), with the columns' types, formats, required columns and key
// notes; the schema following DDL on the next request.
import t from 'tap'
import { restProject } from './helpers.ts'

const f = await restProject(t, `
  comment on schema public is 'Notes API
  What the notes app reads.';
  create type mood as enum ('calm', 'busy');
  create table authors (id int primary key, name text not null);
  create table notes (
    id bigint generated always as identity primary key,
    title varchar(80) not null,
    body text,
    done boolean not null default false,
    rank numeric,
    tags text[],
    meta jsonb,
    feeling mood,
    author_id int references authors (id),
    created_at timestamptz not null default now(),
    status text not null default 'draft',
    code varchar(8) default 'A-1'::character varying,
    priority int not null default 3,
    weight real default 1.5,
    offset_by int default -1,
    settings jsonb default '{}'::jsonb,
    labels text[] default '{}'
  );
  comment on table notes is 'A note';
  comment on column notes.title is 'Shown first';
  create table secrets (id int primary key, value text);
  create view note_titles as select id, title from notes;
  -- The project's default privileges give the API roles everything: take it back, then grant.
  revoke all on notes, authors, note_titles, secrets from anon;
  grant select on notes, authors, note_titles to anon;
  grant insert, update on notes to anon;
  grant all on secrets to service_role;
  create function add(a int, b int default 1) returns int language sql immutable as 'select a + b';
  comment on function add(int, int) is 'Adds two numbers';
  create function bump() returns void language sql as 'select';
  create function hidden() returns int language sql as 'select 1';
  revoke execute on function hidden() from public, anon, authenticated, service_role;
  grant execute on function add(int, int), bump() to anon;
`)

interface Doc {
  swagger: string
  info: { title: string; description: string; version: string }
  host: string
  basePath: string
  schemes: string[]
  paths: Record<string, Record<string, { tags: string[]; parameters?: Array<Record<string, unknown>>; responses: Record<string, unknown>; summary?: string }>>
  definitions: Record<string, { description?: string; required?: string[]; properties: Record<string, Record<string, unknown>>; type: string }>
  parameters: Record<string, Record<string, unknown>>
}

t.test('the description as anon', async (t) => {
  const reply = await f.raw<Doc>('/', { headers: { accept: 'application/openapi+json' } })
  t.equal(reply.status, 200)
  t.match(reply.headers['content-type'], /^application\/openapi\+json/)
  const doc = reply.json
  t.equal(doc.swagger, '2.0')
  t.same(doc.info, { title: 'Notes API', description: 'What the notes app reads.', version: '13' })
  const base = new URL(f.project.baseUrl)
  t.equal(doc.host, base.host)
  t.equal(doc.basePath, `${base.pathname.replace(/\/$/, '')}/rest/v1`)
  t.same(doc.schemes, [base.protocol.replace(':', '')])

  t.same(Object.keys(doc.paths).sort(), ['/', '/authors', '/note_titles', '/notes', '/rpc/add', '/rpc/bump'], 'secrets and hidden() are not listed')
  t.notOk('secrets' in doc.definitions)
  t.same(Object.keys(doc.paths['/notes']!).sort(), ['get', 'patch', 'post'], 'no delete without the privilege')
  t.same(Object.keys(doc.paths['/authors']!), ['get'])
  t.equal(doc.paths['/notes']!.get!.summary, 'A note')
  t.same(doc.paths['/notes']!.get!.responses['200'], { description: 'OK', schema: { items: { $ref: '#/definitions/notes' }, type: 'array' } })
  t.ok(doc.paths['/notes']!.get!.parameters!.some((p) => p.$ref === '#/parameters/rowFilter.notes.title'))
  t.same(doc.parameters['rowFilter.notes.title'], { name: 'title', required: false, in: 'query', type: 'string', format: 'character varying' })
  t.same(doc.parameters['body.notes'], { name: 'notes', description: 'notes', required: false, in: 'body', schema: { $ref: '#/definitions/notes' } })

  const notes = doc.definitions.notes!
  t.equal(notes.description, 'A note')
  t.same(notes.required, ['title'], 'not null without a default')
  t.same(notes.properties.id, { description: 'Note:\nThis is a Primary Key.<pk/>', format: 'bigint', type: 'integer' })
  t.same(notes.properties.title, { description: 'Shown first', format: 'character varying', type: 'string', maxLength: 80 })
  t.same(notes.properties.done, { default: false, format: 'boolean', type: 'boolean' })
  t.same(notes.properties.rank, { format: 'numeric', type: 'number' })
  t.same(notes.properties.tags, { format: 'text[]', type: 'array', items: { type: 'string' } })
  t.same(notes.properties.meta, { format: 'jsonb' })
  t.same(notes.properties.feeling, { enum: ['calm', 'busy'], format: 'mood', type: 'string' })
  t.same(notes.properties.author_id, { description: "Note:\nThis is a Foreign Key to `authors.id`.<fk table='authors' column='id'/>", format: 'integer', type: 'integer' })
  t.same(notes.properties.created_at, { default: 'now()', format: 'timestamp with time zone', type: 'string' })
  // Defaults as PostgREST shows them: a string column's without its cast and quotes, others when they are JSON values.
  t.same(notes.properties.status, { default: 'draft', format: 'text', type: 'string' })
  t.same(notes.properties.code, { default: 'A-1', format: 'character varying', type: 'string', maxLength: 8 })
  t.same(notes.properties.priority, { default: 3, format: 'integer', type: 'integer' })
  t.same(notes.properties.weight, { default: 1.5, format: 'real', type: 'number' })
  t.same(notes.properties.offset_by, { format: 'integer', type: 'integer' }, "PostgreSQL prints '-1'::integer, not a JSON value")
  t.same(notes.properties.settings, { format: 'jsonb' })
  t.same(notes.properties.labels, { format: 'text[]', type: 'array', items: { type: 'string' } })
  t.same(doc.definitions.authors!.required, ['id', 'name'])

  const add = doc.paths['/rpc/add']!
  t.same(add.post!.tags, ['(rpc) add'])
  t.equal(add.post!.summary, 'Adds two numbers')
  t.same(add.post!.parameters![0], {
    in: 'body',
    name: 'args',
    required: true,
    schema: { type: 'object', properties: { a: { format: 'integer', type: 'integer' }, b: { format: 'integer', type: 'integer' } }, required: ['a'] },
  })
  t.same(add.get!.parameters, [
    { in: 'query', name: 'a', required: true, format: 'integer', type: 'integer' },
    { in: 'query', name: 'b', required: false, format: 'integer', type: 'integer' },
  ])
  t.same(Object.keys(doc.paths['/rpc/bump']!), ['post'], 'a volatile function is POST only')
})

t.test('it follows the role and the schema', async (t) => {
  const service = await f.raw<Doc>('/', { headers: { apikey: f.project.serviceRoleKey, authorization: `Bearer ${f.project.serviceRoleKey}` } })
  t.equal(service.status, 200)
  t.ok('/secrets' in service.json.paths, 'service_role reads secrets')
  t.same(Object.keys(service.json.paths['/secrets']!).sort(), ['delete', 'get', 'patch', 'post'])
  t.notOk('/rpc/hidden' in service.json.paths, 'nor does it execute hidden()')

  await f.sql('create table later (id int primary key); grant select on later to anon')
  const after = await f.raw<Doc>('/', { headers: { accept: '*/*' } })
  t.equal(after.status, 200)
  t.ok('/later' in after.json.paths, 'a new table is described on the next request')
  const head = await f.raw('/', { method: 'HEAD' })
  t.equal(head.status, 200)
  t.equal(head.text, '')
})

t.test('refusals', async (t) => {
  const csv = await f.raw<{ code: string }>('/', { headers: { accept: 'text/csv' } })
  t.equal(csv.status, 406)
  t.equal(csv.json.code, 'PGRST107')
  const post = await f.raw<{ code: string }>('/', { method: 'POST', body: {} })
  t.equal(post.status, 405)
  t.equal(post.json.code, 'PGRST117')
  const profile = await f.raw<{ code: string }>('/', { headers: { 'accept-profile': 'auth' } })
  t.equal(profile.status, 406)
  t.equal(profile.json.code, 'PGRST106')
})
