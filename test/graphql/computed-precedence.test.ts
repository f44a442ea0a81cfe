// A computed field answers under its name even where a column or a relation
// of the table has that name, as in pg_graphql (its fields are looked up in a
// map filled with columns, then relations, then computed fields), and in a
// mutation's returned records a volatile computed field sees the mutation's
// own change while a stable one sees the statement's snapshot (pg_graphql's
// issue_337 test, ported with its data and answers).
import t from 'tap'
import { graphqlProject } from './helpers.ts'

const PARENT = '8bcf0ee4-95ed-445f-808f-17b8194727ca'
const CHILD = '57738181-3d0f-45ad-96dd-3ba799b2d21d'

t.test('a computed field over a column of the same name (issue_337)', async (t) => {
  const p = await graphqlProject(t, `
    comment on schema public is e'@graphql({"introspection": true})';
    create table parent (id uuid primary key default gen_random_uuid(), count int2);
    create table child (id uuid primary key default gen_random_uuid(), parent_id uuid references parent not null, count int2);
    create function _count(rec parent) returns smallint stable language sql as $$ select sum(count) from child where parent_id = rec.id $$;
    insert into parent (id, count) values ('${PARENT}', 1);
    insert into child (id, parent_id, count) values ('${CHILD}', '${PARENT}', 2), ('cb5993ff-e693-49cd-9114-a6510707e628', '${PARENT}', 3);
  `)

  t.test('the function answers `count`, not the column', async (t) => {
    t.strictSame(await p.gql(`query ParentQuery { parentCollection { edges { node { id count childCollection { edges { node { count } } } } } } }`), {
      data: {
        parentCollection: {
          edges: [{ node: { id: PARENT, count: 5, childCollection: { edges: [{ node: { count: 2 } }, { node: { count: 3 } }] } } }],
        },
      },
    })
    t.strictSame(await p.gql(`{ parentCollection { edges { node { ... on parent { count } } } } node(nodeId: "${(await nodeIdOf(p))}") { ... on parent { count } } }`), {
      data: { parentCollection: { edges: [{ node: { count: 5 } }] }, node: { count: 5 } },
    })
  })

  t.test('the type lists one `count`: the function\'s; the column stays in the filter, ordering and inputs', async (t) => {
    const answer = await p.gql(`{
      parent: __type(name: "parent") { fields { name type { name } } }
      filter: __type(name: "parentFilter") { inputFields { name } }
      orderBy: __type(name: "parentOrderBy") { inputFields { name } }
      insert: __type(name: "parentInsertInput") { inputFields { name } }
    }`)
    t.notOk('errors' in answer, 'no errors')
    const data = answer.data as Record<string, { fields?: { name: string; type: { name: string } }[]; inputFields?: { name: string }[] }>
    t.strictSame(data.parent!.fields!.map((f) => f.name), ['nodeId', 'id', 'childCollection', 'count'])
    t.strictSame(data.parent!.fields!.find((f) => f.name === 'count')!.type, { name: 'Int' })
    t.strictSame(data.filter!.inputFields!.map((f) => f.name), ['id', 'count', 'nodeId', 'and', 'or', 'not'])
    t.strictSame(data.orderBy!.inputFields!.map((f) => f.name), ['id', 'count'])
    t.strictSame(data.insert!.inputFields!.map((f) => f.name), ['id', 'count'])
    // The filter is the column's: parent.count is 1.
    t.strictSame(await p.gql(`{ parentCollection(filter: {count: {eq: 1}}) { edges { node { count } } } }`), {
      data: { parentCollection: { edges: [{ node: { count: 5 } }] } },
    })
  })

  t.test('a stable computed field in returned records sees the statement\'s snapshot', async (t) => {
    t.strictSame(await p.gql(`mutation ChildMutation {
      updatechildCollection(filter: { id: { eq: "${CHILD}" } }, set: { count: 5 }) { records { id count parent { id count } } }
    }`), {
      data: { updatechildCollection: { records: [{ id: CHILD, count: 5, parent: { id: PARENT, count: 5 } }] } },
    })
  })

  t.test('a volatile one sees the mutation\'s own change', async (t) => {
    await p.sql(`create or replace function _count(rec parent) returns smallint volatile language sql as $$ select sum(count) from child where parent_id = rec.id $$`)
    t.strictSame(await p.gql(`mutation ChildMutation {
      updatechildCollection(filter: { id: { eq: "${CHILD}" } }, set: { count: 7 }) { records { id count parent { id count } } }
    }`), {
      data: { updatechildCollection: { records: [{ id: CHILD, count: 7, parent: { id: PARENT, count: 10 } }] } },
    })
    // A volatile function of the row is still a computed field (of Query's rows), never a Mutation field.
    t.strictSame(await p.gql(`{ parentCollection { edges { node { count } } } }`), {
      data: { parentCollection: { edges: [{ node: { count: 10 } }] } },
    })
  })
})

t.test('a computed field over a relation of the same name', async (t) => {
  const p = await graphqlProject(t, `
    create table author (id int primary key, name text);
    create table book (id int primary key, author_id int references author (id));
    create function author(rec book) returns text stable language sql as $$ select 'computed ' || rec.id $$;
    insert into author values (1, 'Ann');
    insert into book values (7, 1);
  `)
  // Without inflection the relation of author_id is named after the type: `author`, the function's name.
  t.strictSame(await p.gql(`{ bookCollection { edges { node { id author } } } }`), {
    data: { bookCollection: { edges: [{ node: { id: 7, author: 'computed 7' } }] } },
  })
})

async function nodeIdOf(p: Awaited<ReturnType<typeof graphqlProject>>): Promise<string> {
  const answer = await p.gql(`{ parentCollection { edges { node { nodeId } } } }`)
  return (answer.data as { parentCollection: { edges: { node: { nodeId: string } }[] } }).parentCollection.edges[0]!.node.nodeId
}
