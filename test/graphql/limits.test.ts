// The schema's `limits {fields, rows}` (SPEC 2.4, issue 14 item 11): counted
// on the operation as it will run (fragments spread, @skip applied, variables
// read), before any SQL; rows multiply each collection's page by the pages
// around it. Refusals name the limit and the figure and write nothing.
import t from 'tap'
import { graphqlProject } from './helpers.ts'

const ANN = '11111111-1111-1111-1111-111111111111'

const SETUP = `
  create table author (id int primary key, name text not null, owner uuid);
  create table book (id int primary key, author_id int not null references author, title text not null);
  alter table author enable row level security;
  create policy read_public on author for select to anon using (owner is null);
  create policy read_own on author for select to authenticated using (owner is null or owner = auth.uid());
  create policy write_own on author for insert to authenticated with check (owner = auth.uid());
  insert into author values (1, 'Ann', '${ANN}'), (2, 'Bob', null);
  insert into book values (1, 1, 'A1'), (2, 1, 'A2'), (3, 2, 'B1');
`

const nested = (outer: string, inner: string) =>
  `{ authorCollection${outer} { edges { node { name bookCollection${inner} { edges { node { title } } } } } } }`
const refused = (message: string) => ({ data: null, errors: [{ message }] })
const bobsBooks = { authorCollection: { edges: [{ node: { name: 'Bob', bookCollection: { edges: [{ node: { title: 'B1' } }] } } }] } }
const allBooks = {
  authorCollection: {
    edges: [
      { node: { name: 'Ann', bookCollection: { edges: [{ node: { title: 'A1' } }, { node: { title: 'A2' } }] } } },
      bobsBooks.authorCollection.edges[0],
    ],
  },
}

t.test('off: no limits key, any document runs (the default page nested in the default page is 930 rows)', async (t) => {
  const p = await graphqlProject(t, SETUP)
  t.same(await p.gql(nested('', ''), { role: 'anon' }), { data: bobsBooks })
})

t.test('rows: pages multiplied by the pages around them', async (t) => {
  const p = await graphqlProject(t, `${SETUP}
    comment on schema public is e'@graphql({"limits": {"rows": 100}})';
    comment on table book is e'@graphql({"max_rows": 5})';
  `)
  // 30 authors (max_rows by default), 5 books each (book's max_rows): 30 + 150.
  t.same(await p.gql(nested('', ''), { role: 'anon' }), refused('Query selects 180 rows, over the limit of 100'))
  // first is capped at the table's max_rows: 10 + 10 * 5.
  t.same(await p.gql(nested('(first: 10)', '(first: 50)'), { role: 'anon' }), { data: bobsBooks }, 'anon: 60 rows run, under RLS')
  t.same(await p.gql(nested('(first: 10)', '(first: 50)'), { role: 'authenticated', sub: ANN }), { data: allBooks }, 'signed in: 60 rows run')
  t.same(await p.gql(nested('(first: 16)', '(first: 5)'), { role: 'authenticated', sub: ANN }), { data: allBooks }, '16 + 16 * 5 = 96 runs')
  t.same(await p.gql(nested('(first: 17)', '(first: 5)'), { role: 'authenticated', sub: ANN }), refused('Query selects 102 rows, over the limit of 100'))
  // last counts as first does; first: 0 makes the pages inside it count nothing.
  t.same(await p.gql(nested('(last: 17)', ''), { role: 'anon' }), refused('Query selects 102 rows, over the limit of 100'))
  t.same(await p.gql(`{ a: authorCollection(first: 0) { edges { node { bookCollection(first: 5) { edges { node { title } } } } } } b: bookCollection(first: 5) { edges { node { title } } } }`, { role: 'anon' }), {
    data: { a: { edges: [] }, b: { edges: [{ node: { title: 'A1' } }, { node: { title: 'A2' } }, { node: { title: 'B1' } }] } },
  })
  // Aliases are separate collections and add up.
  t.same(
    await p.gql(`{ a: authorCollection(first: 30) { edges { node { id } } } b: authorCollection(first: 30) { edges { node { id } } } c: authorCollection(first: 30) { edges { node { id } } } d: authorCollection(first: 11) { edges { node { id } } } }`, { role: 'anon' }),
    refused('Query selects 101 rows, over the limit of 100'),
  )
  // Variables are read before counting: the same text runs or not by its values.
  const byVariable = `query ($n: Int) { authorCollection(first: $n) { edges { node { name bookCollection(first: 5) { edges { node { title } } } } } } }`
  t.same(await p.gql(byVariable, { role: 'anon', variables: { n: 16 } }), { data: bobsBooks })
  t.same(await p.gql(byVariable, { role: 'anon', variables: { n: 17 } }), refused('Query selects 102 rows, over the limit of 100'))
  t.same(await p.gql(byVariable, { role: 'anon' }), refused('Query selects 180 rows, over the limit of 100'), 'no value: the default page')
  // A fragment counts where it is spread; a to-one relation is no page.
  t.same(
    await p.gql(`{ bookCollection(first: 20) { edges { node { ...B } } } } fragment B on book { title author { name } }`, { role: 'anon' }),
    { data: { bookCollection: { edges: [{ node: { title: 'A1', author: null } }, { node: { title: 'A2', author: null } }, { node: { title: 'B1', author: { name: 'Bob' } } }] } } },
  )
})

t.test('fields: response keys as executed, before anything runs', async (t) => {
  const p = await graphqlProject(t, `${SETUP}
    comment on schema public is e'@graphql({"limits": {"fields": 6}})';
  `)
  // authorCollection edges node id name __typename: 6.
  const six = '{ authorCollection { edges { node { id name __typename } } } }'
  t.same(await p.gql(six, { role: 'anon' }), { data: { authorCollection: { edges: [{ node: { id: 2, name: 'Bob', __typename: 'author' } }] } } })
  t.same(await p.gql('{ authorCollection { edges { cursor node { id name __typename } } } }', { role: 'anon' }), refused('Query selects 7 fields, over the limit of 6'))
  // A field repeated under one key counts once; a skipped one not at all.
  t.same(await p.gql('{ authorCollection { edges { node { id name name @skip(if: true) owner } } } }', { role: 'authenticated', sub: ANN }), {
    data: { authorCollection: { edges: [{ node: { id: 1, name: 'Ann', owner: ANN } }, { node: { id: 2, name: 'Bob', owner: null } }] } },
  })
  t.same(await p.gql('query ($s: Boolean!) { authorCollection { edges { node { id name owner @skip(if: $s) __typename } } } }', { role: 'anon', variables: { s: false } }), refused('Query selects 7 fields, over the limit of 6'))
  // A fragment counts each place it is spread: 3 + 2 * 3.
  t.same(
    await p.gql('{ a: authorCollection { ...C } b: authorCollection { ...C } } fragment C on authorConnection { edges { node { id } } }', { role: 'anon' }),
    refused('Query selects 8 fields, over the limit of 6'),
  )
  // Mutations too, and a refused one writes nothing.
  t.same(
    await p.gql(`mutation { insertIntoauthorCollection(objects: [{id: 3, name: "Cy", owner: "${ANN}"}]) { affectedCount records { id name owner __typename nodeId } } }`, { role: 'authenticated', sub: ANN }),
    refused('Query selects 8 fields, over the limit of 6'),
  )
  t.same(await p.gql('{ authorCollection(filter: {id: {eq: 3}}) { edges { node { id } } } }', { role: 'service_role' }), { data: { authorCollection: { edges: [] } } }, 'nothing written')
  t.same(
    await p.gql(`mutation { insertIntoauthorCollection(objects: [{id: 3, name: "Cy", owner: "${ANN}"}]) { affectedCount records { name } } }`, { role: 'authenticated', sub: ANN }),
    { data: { insertIntoauthorCollection: { affectedCount: 1, records: [{ name: 'Cy' }] } } },
  )
})

t.test('a bad limits value fails every request with the loading message', async (t) => {
  const p = await graphqlProject(t, `${SETUP}
    comment on schema public is e'@graphql({"limits": {"rows": "many"}})';
  `)
  t.same(await p.gql('{ __typename }', { role: 'anon' }), refused('Error while loading schema, check comment directives. invalid type: string "many", expected u64'))
})
