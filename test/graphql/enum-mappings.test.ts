// SPEC 2.4 enum `mappings` (pg_graphql 1.6, issue 26 item 7): a mapping
// renames a database label to a GraphQL value name; results are written with
// the names, and a name given in a filter, a variable or a mutation's input
// is read back to its label before it reaches SQL. pg_graphql reads a name
// back through the mappings first (BiBTreeMap::get_by_right), so a name a
// mapping gives one label means that label even where another, unmapped
// label is spelt the same.
import t from 'tap'
import { graphqlProject } from './helpers.ts'

t.test('pg_graphql enum_mappings', async (t) => {
  const p = await graphqlProject(t, `
    create type my_enum as enum ('test', 'valid value', 'another value');
    comment on type my_enum is e'@graphql({"mappings": {"valid value": "valid_value", "another value": "another_value"}})';
    create table enums (id serial primary key, value my_enum);
    insert into enums (value) values ('test');
  `)
  const values = (...names: string[]) => ({ data: { enumsCollection: { edges: names.map((value) => ({ node: { value } })) } } })
  t.strictSame(await p.gql(`mutation { insertIntoenumsCollection(objects: [{value: valid_value}]) { affectedCount } }`), {
    data: { insertIntoenumsCollection: { affectedCount: 1 } },
  })
  t.strictSame(await p.gql(`mutation { updateenumsCollection(set: {value: another_value}, filter: {value: {eq: test}}) { records { value } } }`), {
    data: { updateenumsCollection: { records: [{ value: 'another_value' }] } },
  })
  t.strictSame(await p.gql(`{ enumsCollection { edges { node { value } } } }`), values('another_value', 'valid_value'))
  t.strictSame(await p.gql(`{ enumsCollection(filter: {value: {eq: another_value}}) { edges { node { value } } } }`), values('another_value'))
  t.strictSame(await p.gql(`{ enumsCollection(filter: {value: {in: [another_value]}}) { edges { node { value } } } }`), values('another_value'))
  t.strictSame((await p.sql(`select value::text from enums order by id`)).rows, [{ value: 'another value' }, { value: 'valid value' }])
})

t.test('a mapped name spelt like another label means the mapped label', async (t) => {
  const p = await graphqlProject(t, `
    create type my_enum as enum ('test', 'valid value', 'another_value');
    comment on type my_enum is e'@graphql({"mappings": {"test": "another_value", "valid value": "valid_value"}})';
    create table enums (id int primary key, value my_enum, tags my_enum[]);
    comment on table enums is e'@graphql({"enumArrays": {"enabled": true}})';
    insert into enums values (1, 'test', '{test}'), (2, 'valid value', '{valid value}'), (3, 'another_value', '{another_value}'), (4, null, null);
  `)
  const ids = (...list: number[]) => ({ data: { enumsCollection: { edges: list.map((id) => ({ node: { id } })) } } })
  const where = (filter: string) => p.gql(`{ enumsCollection(filter: ${filter}) { edges { node { id } } } }`)
  const labels = async () => (await p.sql(`select id, value::text from enums order by id`)).rows

  t.test('results use the names', async (t) => {
    t.strictSame(await p.gql(`{ enumsCollection { edges { node { id value tags } } } }`), {
      data: {
        enumsCollection: {
          edges: [
            { node: { id: 1, value: 'another_value', tags: ['another_value'] } },
            { node: { id: 2, value: 'valid_value', tags: ['valid_value'] } },
            { node: { id: 3, value: 'another_value', tags: ['another_value'] } },
            { node: { id: 4, value: null, tags: null } },
          ],
        },
      },
    })
  })

  t.test('eq, neq and in compare the mapped label', async (t) => {
    t.strictSame(await where(`{value: {eq: another_value}}`), ids(1))
    t.strictSame(await where(`{value: {neq: another_value}}`), ids(2, 3))
    t.strictSame(await where(`{value: {in: [another_value, valid_value]}}`), ids(1, 2))
    t.strictSame(await where(`{tags: {overlaps: [another_value]}}`), ids(1), 'an enum array too')
    t.strictSame(await p.gql(`query ($v: my_enum) { enumsCollection(filter: {value: {eq: $v}}) { edges { node { id } } } }`, { variables: { v: 'another_value' } }), ids(1),
      'a variable too')
  })

  t.test('order and cursors follow the labels', async (t) => {
    const page = (args: string) => p.gql(`{ enumsCollection(${args}, orderBy: [{value: DescNullsLast}]) { pageInfo { endCursor } edges { node { id } } } }`)
    const first = (await page('first: 2')) as { data: { enumsCollection: { pageInfo: { endCursor: string }; edges: unknown[] } } }
    t.strictSame(first.data.enumsCollection.edges, ids(3, 2).data.enumsCollection.edges)
    const next = (await page(`first: 2, after: "${first.data.enumsCollection.pageInfo.endCursor}"`)) as { data: { enumsCollection: { edges: unknown[] } } }
    t.strictSame(next.data.enumsCollection.edges, ids(1, 4).data.enumsCollection.edges)
  })

  t.test('mutations write the mapped label', async (t) => {
    t.strictSame(await p.gql(`mutation { insertIntoenumsCollection(objects: [{id: 5, value: another_value, tags: [another_value]}]) { records { id value } } }`), {
      data: { insertIntoenumsCollection: { records: [{ id: 5, value: 'another_value' }] } },
    })
    t.strictSame(await p.gql(`mutation { updateenumsCollection(set: {value: another_value}, filter: {id: {eq: 2}}) { records { id value } } }`), {
      data: { updateenumsCollection: { records: [{ id: 2, value: 'another_value' }] } },
    })
    t.strictSame(await labels(), [
      { id: 1, value: 'test' }, { id: 2, value: 'test' }, { id: 3, value: 'another_value' }, { id: 4, value: null }, { id: 5, value: 'test' },
    ])
    t.strictSame((await p.sql(`select tags::text from enums where id = 5`)).rows, [{ tags: '{test}' }])
  })
})
