// The schema's `schemaReport` (SPEC 2.4, issue 14 item 14): with the
// extension `schemaReport: true`, every table, view and function of the
// served schemas that turn it on, whether the caller's GraphQL schema has it
// and, if not, why; a relation a table's type lacks is listed under it.
import t from 'tap'
import { withRequestTransaction } from '../../lib/db/request-transaction.ts'
import { resolve, type GraphqlResponse } from '../../workers/graphql/index.ts'
import { graphqlProject, type GraphqlProject } from './helpers.ts'

const ANN = '11111111-1111-1111-1111-111111111111'
const SETUP = `
  comment on schema public is e'@graphql({"schemaReport": {"enabled": true}})';
  create table blog (id int primary key, owner uuid, title text);
  alter table blog enable row level security;
  create policy read_anon on blog for select to anon using (owner is null);
  create policy read_user on blog for select to authenticated using (owner is null or owner = auth.uid());
  insert into blog values (1, null, 'open'), (2, '${ANN}', 'ann''s');
  create table post (id int primary key, author_blog int references blog, editor_blog int references blog);
  create table log (message text);
  create table "bad name" (id int primary key);
  create table secret (id int primary key, v text);
  revoke all on secret from anon;
  create view recent as select id, title from blog;
  create function add(a int, b int) returns int language sql stable as 'select a + b';
  create function twice(x int) returns int language sql stable as 'select x * 2';
  create function twice(x text) returns text language sql stable as 'select x || x';
  create function hidden() returns int language sql stable as 'select 1';
  -- authenticated keeps its own grant (the project's default privileges).
  revoke execute on function hidden() from public, anon;
  create function total(variadic xs int[]) returns int language sql stable as 'select 0';
  create function title_length(blog) returns int language sql stable as 'select length($1.title)';
`
function ask(p: GraphqlProject, query: string, role: string, sub?: string, extensions?: Record<string, unknown>): Promise<GraphqlResponse> {
  return withRequestTransaction(p.pool, { role, claims: { role, ...(sub ? { sub } : {}) } }, p.project.roleTimeouts, (client) =>
    resolve(client, { query, extensions }, { cache: p.cache }))
}
const table = (name: string, rest: object, kind = 'table') => ({ schema: 'public', name, kind, ...rest })
const fn = (name: string, signature: string, rest: object) => ({ schema: 'public', name, signature, ...rest })
const sharedName = (field: string) => ({ constraint: 'post_editor_blog_fkey', field, reason: 'two relations sharing a field name' })

/** The report as `role` sees it: what differs by role is the grants. */
const reportFor = (grants: { secret: boolean; hidden: boolean }) => ({
  schemaReport: {
    schemas: ['public'],
    tables: [
      table('bad name', { inSchema: false, reason: 'unusable name' }),
      table('blog', { inSchema: true, type: 'blog', leftOut: [sharedName('postCollection')] }),
      table('log', { inSchema: false, reason: 'no primary key' }),
      table('post', { inSchema: true, type: 'post', leftOut: [sharedName('blog')] }),
      table('recent', { inSchema: false, reason: 'no primary key' }, 'view'),
      table('secret', grants.secret ? { inSchema: true, type: 'secret' } : { inSchema: false, reason: 'no grant' }),
    ],
    functions: [
      fn('add', 'add(a integer, b integer)', { inSchema: true, field: 'add', on: 'Query' }),
      fn('hidden', 'hidden()', grants.hidden ? { inSchema: true, field: 'hidden', on: 'Query' } : { inSchema: false, reason: 'no grant' }),
      fn('title_length', 'title_length(blog)', { inSchema: true, field: 'title_length', on: 'blog' }),
      fn('total', 'total(xs integer[])', { inSchema: false, reason: 'variadic function' }),
      fn('twice', 'twice(x integer)', { inSchema: false, reason: 'overloaded function' }),
      fn('twice', 'twice(x text)', { inSchema: false, reason: 'overloaded function' }),
    ],
  },
})
const TITLES = '{ blogCollection(orderBy: [{id: AscNullsLast}]) { edges { node { title } } } }'
const titles = (...items: string[]) => ({ blogCollection: { edges: items.map((title) => ({ node: { title } })) } })

t.test('off: the extension is ignored, as pg_graphql ignores extensions', async (t) => {
  const p = await graphqlProject(t, SETUP.replace(/comment on schema public[^\n]*\n/, ''))
  t.same(await ask(p, TITLES, 'anon', undefined, { schemaReport: true }), { data: titles('open') })
})

t.test('on: every table and function, in or out and why, as the caller sees them', async (t) => {
  const p = await graphqlProject(t, SETUP)
  t.same(await ask(p, TITLES, 'anon'), { data: titles('open') }, 'not asked: the plain answer')
  t.same(await ask(p, TITLES, 'anon', undefined, { schemaReport: true }), { data: titles('open'), extensions: reportFor({ secret: false, hidden: false }) })
  t.same(await ask(p, TITLES, 'authenticated', ANN, { schemaReport: true }), { data: titles('open', "ann's"), extensions: reportFor({ secret: true, hidden: true }) })
  // A failing document is when the report helps most: it says why secretCollection is missing.
  t.same(await ask(p, '{ secretCollection { edges { node { id } } } }', 'anon', undefined, { schemaReport: true }), {
    data: null,
    errors: [{ message: 'Cannot query field "secretCollection" on type "Query". Did you mean "postCollection" or "blogCollection"?' }],
    extensions: reportFor({ secret: false, hidden: false }),
  })
  // Other reasons: no grant on a key column, a computed field named nodeId. A computed field
  // named as a column is served: it answers under the name, as in pg_graphql.
  await p.sql(`
    revoke select on secret from authenticated; grant select (v) on secret to authenticated;
    create function title(blog) returns text language sql stable as 'select $1.title';
    create function "nodeId"(blog) returns text language sql stable as 'select $1.title';
  `)
  const after = await ask(p, TITLES, 'authenticated', ANN, { schemaReport: true })
  const report = (after as unknown as { extensions: ReturnType<typeof reportFor> }).extensions.schemaReport
  t.same(report.tables.find((x) => x.name === 'secret'), table('secret', { inSchema: false, reason: 'no grant on a primary key column' }))
  t.same(report.functions.find((x) => x.name === 'title'), fn('title', 'title(blog)', { inSchema: true, field: 'title', on: 'blog' }))
  t.same(report.functions.find((x) => x.name === 'nodeId'), fn('nodeId', 'nodeId(blog)', { inSchema: false, reason: 'its field name is taken by another field of the type' }))
})
