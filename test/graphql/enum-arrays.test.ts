// SPEC 2.4 `enumArrays`: `contains`, `containedBy`, `overlaps`, `eq` and `is`
// on enum-array columns (an `<Enum>ListFilter`), on a table or inherited from
// its schema; with it off, enum-array columns are readable and unfilterable.
import t from 'tap'
import { graphqlProject } from './helpers.ts'

const ANN = '11111111-1111-1111-1111-111111111111'
const BOB = '22222222-2222-2222-2222-222222222222'

const SETUP = `
  create type genre as enum ('crime', 'drama', 'sci_fi');
  comment on type genre is e'@graphql({"mappings": {"sci_fi": "SCIFI"}})';
  create table book (id int primary key, title text not null, genres genre[], owner uuid);
  comment on table book is e'@graphql({"enumArrays": {"enabled": true}})';
  insert into book values
    (1, 'Both', '{crime,drama}', null),
    (2, 'Crime', '{crime}', null),
    (3, 'Space', '{sci_fi}', '${ANN}'),
    (4, 'None', null, null),
    (5, 'Empty', '{}', '${BOB}');
  alter table book enable row level security;
  create policy read on book for select using (owner is null or owner = auth.uid());
  create policy write on book for update using (owner is null or owner = auth.uid());
  create table film (id int primary key, genres genre[]);
  insert into film values (1, '{crime}'), (2, '{drama}');
`

const titles = (...names: string[]) => ({ data: { bookCollection: { edges: names.map((title) => ({ node: { title } })) } } })

t.test('enumArrays', async (t) => {
  const p = await graphqlProject(t, SETUP)
  const books = (filter: string, options = {}) => p.gql(`{ bookCollection(filter: ${filter}) { edges { node { title } } } }`, options)

  t.test('each operator', async (t) => {
    t.same(await books(`{genres: {contains: [crime]}}`), titles('Both', 'Crime'))
    t.same(await books(`{genres: {contains: [crime, drama]}}`), titles('Both'))
    t.same(await books(`{genres: {containedBy: [crime, SCIFI]}}`), titles('Crime', 'Space', 'Empty'))
    t.same(await books(`{genres: {overlaps: [drama, SCIFI]}}`), titles('Both', 'Space'))
    t.same(await books(`{genres: {eq: [crime]}}`), titles('Crime'))
    t.same(await books(`{genres: {eq: []}}`), titles('Empty'))
    t.same(await books(`{genres: {is: NULL}}`), titles('None'))
    t.same(await books(`{genres: {is: NOT_NULL}, not: {genres: {overlaps: [crime]}}}`), titles('Space', 'Empty'))
    t.same(await books(`{or: [{genres: {contains: [SCIFI]}}, {genres: {eq: [crime]}}]}`), titles('Crime', 'Space'))
  })

  t.test('values as variables: one statement, other values', async (t) => {
    const query = `query ($g: [genre!]) { bookCollection(filter: {genres: {overlaps: $g}}) { edges { node { title } } } }`
    t.same(await p.gql(query, { variables: { g: ['SCIFI'] } }), titles('Space'))
    t.same(await p.gql(query, { variables: { g: ['drama', 'crime'] } }), titles('Both', 'Crime'))
    t.same(await p.gql(query, { variables: { g: [] } }), titles())
  })

  t.test('refusals', async (t) => {
    t.same(await books(`{genres: {contains: ["crime"]}}`), {
      data: null,
      errors: [{ message: 'Enum "genre" cannot represent non-enum value: "crime". Did you mean the enum value "crime"?' }],
    })
    t.same(await books(`{genres: {contains: [sci_fi]}}`), {
      data: null,
      errors: [{ message: 'Value "sci_fi" does not exist in "genre" enum. Did you mean the enum value "SCIFI"?' }],
    })
    t.same(await books(`{genres: {gt: [crime]}}`), {
      data: null,
      errors: [{ message: 'Field "gt" is not defined by type "genreListFilter".' }],
    })
    t.same(await p.gql(`query ($g: [genre!]) { bookCollection(filter: {genres: {overlaps: $g}}) { edges { node { title } } } }`, { variables: { g: ['horror'] } }), {
      data: null,
      errors: [{ message: 'Variable "$g" got invalid value "horror" at "g[0]"; Value "horror" does not exist in "genre" enum.' }],
    })
    t.same(await p.gql(`mutation { updatebookCollection(set: {title: "x"}, filter: {genres: {contains: [nope]}}, atMost: 5) { affectedCount } }`), {
      data: null,
      errors: [{ message: 'Value "nope" does not exist in "genre" enum.' }],
    })
    t.same(await books(`{id: {eq: 1}}`), titles('Both'), 'nothing was written')
  })

  t.test('a mutation filtered by an enum array', async (t) => {
    t.same(await p.gql(`mutation { updatebookCollection(set: {title: "Crime!"}, filter: {genres: {eq: [crime]}}) { affectedCount records { id title genres } } }`), {
      data: { updatebookCollection: { affectedCount: 1, records: [{ id: 2, title: 'Crime!', genres: ['crime'] }] } },
    })
    await p.sql(`update book set title = 'Crime' where id = 2`)
  })

  t.test('row level security: anon and a signed-in user', async (t) => {
    const query = `{ bookCollection(filter: {genres: {containedBy: [SCIFI]}}) { edges { node { title genres } } } }`
    t.same(await p.gql(query, { role: 'anon' }), { data: { bookCollection: { edges: [] } } })
    t.same(await p.gql(query, { role: 'authenticated', sub: ANN }), { data: { bookCollection: { edges: [{ node: { title: 'Space', genres: ['SCIFI'] } }] } } })
    t.same(await p.gql(query, { role: 'authenticated', sub: BOB }), { data: { bookCollection: { edges: [{ node: { title: 'Empty', genres: [] } }] } } })
    const update = `mutation { updatebookCollection(set: {title: "Mine"}, filter: {genres: {overlaps: [SCIFI]}}) { affectedCount } }`
    t.same(await p.gql(update, { role: 'authenticated', sub: BOB }), { data: { updatebookCollection: { affectedCount: 0 } } })
    t.same(await p.gql(update, { role: 'authenticated', sub: ANN }), { data: { updatebookCollection: { affectedCount: 1 } } })
    await p.sql(`update book set title = 'Space' where id = 3`)
  })

  t.test('off: readable, not filterable', async (t) => {
    t.same(await p.gql(`{ filmCollection { edges { node { id genres } } } }`), {
      data: { filmCollection: { edges: [{ node: { id: 1, genres: ['crime'] } }, { node: { id: 2, genres: ['drama'] } }] } },
    })
    t.same(await p.gql(`{ filmCollection(filter: {genres: {contains: [crime]}}) { edges { node { id } } } }`), {
      data: null,
      errors: [{ message: 'Field "genres" is not defined by type "filmFilter".' }],
    })
  })

  t.test('on for a schema, off again for one of its tables', async (t) => {
    await p.sql(`comment on schema public is e'@graphql({"enumArrays": {"enabled": true}})';
      comment on table book is e'@graphql({"enumArrays": {"enabled": false}})'`)
    t.same(await p.gql(`{ filmCollection(filter: {genres: {contains: [crime]}}) { edges { node { id } } } }`), {
      data: { filmCollection: { edges: [{ node: { id: 1 } }] } },
    })
    t.same(await books(`{genres: {contains: [crime]}}`), {
      data: null,
      errors: [{ message: 'Field "genres" is not defined by type "bookFilter".' }],
    })
    await p.sql(`comment on schema public is null; comment on table book is e'@graphql({"enumArrays": {"enabled": true}})'`)
  })
})
