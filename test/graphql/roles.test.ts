// Roles besides the three API roles (issue 13 item 8): pg_graphql serves any
// role, with the schema its grants allow and the rows its policies allow.
// Through the library a request runs as any role the project's API login role
// may SET ROLE to. Roles are the server's, not the database's, so each test
// names its own and drops it.
import crypto from 'node:crypto'
import t from 'tap'
import { escapeIdentifier } from 'pg'
import { adminQuery, serverUrl, withDatabase } from '../helpers/db.ts'
import { graphqlProject, type GraphqlProject } from './helpers.ts'

interface Teardown {
  teardown(fn: () => unknown): void
}

const SETUP = `
  comment on schema public is e'@graphql({"introspection": true})';
  create table post (id int primary key, title text not null, published boolean not null);
  create table draft (id int primary key, body text);
  insert into post values (1, 'out', true), (2, 'unpublished', false);
  insert into draft values (1, 'idea');
  alter table post enable row level security;
`

/**
 * A role made by the platform's admin for the project and granted to its API
 * login role: the owner cannot make one (it has no CREATEROLE, see below).
 */
async function projectRole(t: Teardown, p: GraphqlProject, prefix: string): Promise<string> {
  const role = `${prefix}_${crypto.randomBytes(4).toString('hex')}`
  const server = await serverUrl()
  await adminQuery(server, `create role ${escapeIdentifier(role)} nologin noinherit; grant ${escapeIdentifier(role)} to ${escapeIdentifier(p.project.dbApiRole)}`)
  t.teardown(async () => {
    // Whichever teardown runs first, the project database's or this one.
    await adminQuery(withDatabase(server, p.project.dbName), `drop owned by ${escapeIdentifier(role)}`).catch(() => {})
    await adminQuery(server, `drop role if exists ${escapeIdentifier(role)}`)
  })
  return role
}

const posts = '{ postCollection { edges { node { id title } } } }'

t.test('a role of the project sees what its grants and policies allow', async (t) => {
  const p = await graphqlProject(t, SETUP)
  const editor = await projectRole(t, p, 'editor')
  await p.sql(`grant select on post to ${escapeIdentifier(editor)};
    create policy editor_reads_published on post for select to ${escapeIdentifier(editor)} using (published)`)

  t.strictSame(await p.gql(posts, { role: editor }), { data: { postCollection: { edges: [{ node: { id: 1, title: 'out' } }] } } }, 'rows: its policy')
  t.strictSame(await p.gql(posts), {
    data: { postCollection: { edges: [{ node: { id: 1, title: 'out' } }, { node: { id: 2, title: 'unpublished' } }] } },
  }, 'service_role is not held to it')
  t.strictSame(await p.gql(posts, { role: 'anon' }), { data: { postCollection: { edges: [] } } }, 'nor does it open rows to anon')

  const types = '{ post: __type(name: "post") { name } draft: __type(name: "draft") { name } __schema { queryType { fields { name } } mutationType { name } } }'
  t.strictSame(await p.gql(types, { role: editor }), {
    data: {
      post: { name: 'post' },
      draft: null,
      __schema: { queryType: { fields: [{ name: 'node' }, { name: 'postByPk' }, { name: 'postCollection' }] }, mutationType: null },
    },
  }, 'schema: the granted table only, and no mutations without a write grant')
  t.strictSame(await p.gql('{ draftCollection { edges { node { id } } } }', { role: editor }), {
    data: null,
    errors: [{ message: 'Cannot query field "draftCollection" on type "Query". Did you mean "postCollection"?' }],
  }, 'the table not granted is not there')

  await p.sql(`grant insert on post to ${escapeIdentifier(editor)};
    create policy editor_writes_published on post for insert to ${escapeIdentifier(editor)} with check (published)`)
  t.strictSame(await p.gql('mutation { insertIntopostCollection(objects: [{id: 3, title: "new", published: true}]) { affectedCount } }', { role: editor }), {
    data: { insertIntopostCollection: { affectedCount: 1 } },
  }, 'a write grant brings the mutation, a GRANT moves the schema version')
  t.strictSame(await p.gql('mutation { insertIntopostCollection(objects: [{id: 4, title: "kept back", published: false}]) { affectedCount } }', { role: editor }), {
    data: null,
    errors: [{ message: 'new row violates row-level security policy for table "post"' }],
  }, 'its write policy holds')
})

t.test('a role with no grants gets the empty schema', async (t) => {
  const p = await graphqlProject(t, SETUP)
  const nobody = await projectRole(t, p, 'nobody')
  t.strictSame(await p.gql('{ __schema { queryType { name fields { name } } mutationType { name } } }', { role: nobody }), {
    data: { __schema: { queryType: { name: 'Query', fields: [{ name: 'node' }] }, mutationType: null } },
  })
  t.strictSame(await p.gql(posts, { role: nobody }), {
    data: null,
    errors: [{ message: 'Cannot query field "postCollection" on type "Query".' }],
  })
})

t.test('what the platform allows today', async (t) => {
  const p = await graphqlProject(t, SETUP)
  await t.rejects(p.sql('create role editor_by_owner'), /permission denied to create role/, 'the owner has no CREATEROLE')
  const stranger = `stranger_${crypto.randomBytes(4).toString('hex')}`
  const server = await serverUrl()
  await adminQuery(server, `create role ${escapeIdentifier(stranger)} nologin`)
  t.teardown(() => adminQuery(server, `drop role if exists ${escapeIdentifier(stranger)}`))
  await t.rejects(p.gql(posts, { role: stranger }), new RegExp(`permission denied to set role "${stranger}"`), 'a role not granted to the API login role is refused by PostgreSQL')
})
