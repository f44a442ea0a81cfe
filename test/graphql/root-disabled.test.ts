// SPEC 2.4 `root` `{"enabled": false}` on a table: no collection or by-key
// field of its own on Query, but its type stays: reached through relations
// and `node(nodeId)`, and its mutations stay. Row-level security still
// decides which of its rows a relation shows, as anon and as a signed-in user.
import t from 'tap'
import { graphqlProject } from './helpers.ts'

const ANN = '11111111-1111-1111-1111-111111111111'
/** pg_graphql's nodeId: base64 of the jsonb text of [schema, table, ...key]. */
const nodeId = (id: number) => Buffer.from(`["public", "author", ${id}]`).toString('base64')

t.test('root disabled', async (t) => {
  const p = await graphqlProject(t, `
    comment on schema public is e'@graphql({"introspection": true})';
    create table author (id int primary key, name text not null, owner uuid, public boolean not null default true);
    create table book (id int primary key, author_id int not null references author (id), title text not null);
    comment on table author is e'@graphql({"root": {"enabled": false}})';
    comment on table book is e'@graphql({"root": {"enabled": true}})';
    alter table author enable row level security;
    create policy read on author for select using (public or owner = auth.uid());
    create policy write on author for all to authenticated using (owner = auth.uid()) with check (owner = auth.uid());
    insert into author values (1, 'Ann', '${ANN}', false), (2, 'Bob', null, true);
    insert into book values (1, 1, 'Ann one'), (2, 2, 'Bob one'), (3, 2, 'Bob two');
  `)

  t.test('Query has no author fields; the type, its relations and its mutations stay', async (t) => {
    t.strictSame(
      await p.gql(`{
        q: __type(name: "Query") { fields { name } }
        m: __type(name: "Mutation") { fields { name } }
        a: __type(name: "author") { name fields { name } }
      }`),
      {
        data: {
          q: { fields: [{ name: 'bookByPk' }, { name: 'bookCollection' }, { name: 'node' }] },
          m: {
            fields: [
              { name: 'deleteFromauthorCollection' }, { name: 'deleteFrombookCollection' },
              { name: 'insertIntoauthorCollection' }, { name: 'insertIntobookCollection' },
              { name: 'updateauthorCollection' }, { name: 'updatebookCollection' },
            ],
          },
          a: { name: 'author', fields: [{ name: 'nodeId' }, { name: 'id' }, { name: 'name' }, { name: 'owner' }, { name: 'public' }, { name: 'bookCollection' }] },
        },
      },
    )
    t.strictSame(await p.gql(`{ authorCollection { edges { node { name } } } }`), {
      data: null,
      errors: [{ message: 'Cannot query field "authorCollection" on type "Query". Did you mean "bookCollection"?' }],
    })
    t.strictSame(await p.gql(`{ authorByPk(id: 2) { name } }`), {
      data: null,
      errors: [{ message: 'Cannot query field "authorByPk" on type "Query". Did you mean "bookByPk"?' }],
    })
  })

  t.test('reached through relations and node, under row-level security', async (t) => {
    const books = `{ bookCollection { edges { node { title author { nodeId name bookCollection { edges { node { title } } } } } } } }`
    const anon = await p.gql(books, { role: 'anon' })
    t.strictSame(anon, {
      data: {
        bookCollection: {
          edges: [
            { node: { title: 'Ann one', author: null } },
            { node: { title: 'Bob one', author: { nodeId: nodeId(2), name: 'Bob', bookCollection: { edges: [{ node: { title: 'Bob one' } }, { node: { title: 'Bob two' } }] } } } },
            { node: { title: 'Bob two', author: { nodeId: nodeId(2), name: 'Bob', bookCollection: { edges: [{ node: { title: 'Bob one' } }, { node: { title: 'Bob two' } }] } } } },
          ],
        },
      },
    })
    const ann = await p.gql(books, { role: 'authenticated', sub: ANN })
    const annId = nodeId(1)
    t.strictSame(ann, {
      data: {
        bookCollection: {
          edges: [
            { node: { title: 'Ann one', author: { nodeId: annId, name: 'Ann', bookCollection: { edges: [{ node: { title: 'Ann one' } }] } } } },
            { node: { title: 'Bob one', author: { nodeId: nodeId(2), name: 'Bob', bookCollection: { edges: [{ node: { title: 'Bob one' } }, { node: { title: 'Bob two' } }] } } } },
            { node: { title: 'Bob two', author: { nodeId: nodeId(2), name: 'Bob', bookCollection: { edges: [{ node: { title: 'Bob one' } }, { node: { title: 'Bob two' } }] } } } },
          ],
        },
      },
    })
    const byNode = `query($id: ID!) { node(nodeId: $id) { __typename ... on author { id name } } }`
    t.strictSame(await p.gql(byNode, { role: 'authenticated', sub: ANN, variables: { id: annId } }), {
      data: { node: { __typename: 'author', id: 1, name: 'Ann' } },
    }, 'node still finds a row of it')
    t.strictSame(await p.gql(byNode, { role: 'anon', variables: { id: annId } }), { data: { node: null } }, 'the policy hides it from anon')
  })

  t.test('its mutations stay, under its policies', async (t) => {
    t.strictSame(
      await p.gql(`mutation {
        insertIntoauthorCollection(objects: [{id: 3, name: "Cy", owner: "${ANN}"}]) { affectedCount records { id name } }
        updateauthorCollection(set: {name: "Ann B"}, filter: {id: {eq: 1}}) { affectedCount records { name } }
      }`, { role: 'authenticated', sub: ANN }),
      { data: { insertIntoauthorCollection: { affectedCount: 1, records: [{ id: 3, name: 'Cy' }] }, updateauthorCollection: { affectedCount: 1, records: [{ name: 'Ann B' }] } } },
    )
    t.strictSame(await p.gql(`mutation { deleteFromauthorCollection(filter: {id: {eq: 3}}) { affectedCount records { name } } }`, { role: 'authenticated', sub: ANN }), {
      data: { deleteFromauthorCollection: { affectedCount: 1, records: [{ name: 'Cy' }] } },
    })
    t.strictSame(await p.gql(`mutation { insertIntoauthorCollection(objects: [{id: 4, name: "Dee"}]) { affectedCount } }`, { role: 'anon' }), {
      data: null,
      errors: [{ message: 'new row violates row-level security policy for table "author"' }],
    })
    t.strictSame((await p.sql('select id, name from author order by id')).rows, [{ id: 1, name: 'Ann B' }, { id: 2, name: 'Bob' }])
  })

  t.test('with validation off the planner does not know the fields either', async (t) => {
    await p.sql(`comment on schema public is e'@graphql({"validation": {"enabled": false}})'`)
    t.teardown(() => p.sql(`comment on schema public is e'@graphql({"introspection": true})'`))
    t.strictSame(await p.gql(`{ authorCollection { edges { node { name } } } }`), {
      data: null,
      errors: [{ message: 'Unknown field "authorCollection" on type Query' }],
    })
    t.strictSame(await p.gql(`{ authorByPk(id: 2) { name } }`), {
      data: null,
      errors: [{ message: 'Unknown field "authorByPk" on type Query' }],
    })
    t.strictSame(await p.gql(`{ bookByPk(id: 2) { title author { name } } }`), { data: { bookByPk: { title: 'Bob one', author: { name: 'Bob' } } } })
  })

  t.test('turned back on, the fields return', async (t) => {
    await p.sql(`comment on table author is e'@graphql({"root": {"enabled": true}})'`)
    t.strictSame(await p.gql(`{ authorByPk(id: 2) { name } authorCollection { edges { node { id } } } }`, { role: 'anon' }), {
      data: { authorByPk: { name: 'Bob' }, authorCollection: { edges: [{ node: { id: 2 } }] } },
    })
  })
})

