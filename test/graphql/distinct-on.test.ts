// distinctOn (SPEC 2.4, issue 14 item 4): `distinctOn: [genre]` keeps the
// first row of each value in the collection's own order, and the page is in
// that order. The distinct rows are the collection: cursors page through
// them, totalCount and aggregate count them. Under row level security the
// first row is the first the caller sees. Compared as whole responses.
import t from 'tap'
import { graphqlProject } from './helpers.ts'

const USER = '11111111-1111-1111-1111-111111111111'
const fails = (message: string) => ({ data: null, errors: [{ message }] })

// Books (id, title, genre, year, shelf): 1 a crime 2001 L, 2 b poetry 1999 L, 3 c crime 1990 L, 4 d - 2005 L,
// 5 e poetry 2010 R, 6 f - 1980 R, 7 g scifi 2003 R (the user's), 8 h crime 1995 R (the user's).
const SETUP = `
  comment on schema public is e'@graphql({"inflect_names": true})';
  create table shelf (id serial primary key, name text not null);
  create table book (id serial primary key, title text not null, genre text, year int, shelf_id int references shelf(id), owner uuid, meta jsonb);
  comment on table book is e'@graphql({"distinctOn": {"enabled": true}, "orderByRelated": {"enabled": true}, "totalCount": {"enabled": true}, "aggregate": {"enabled": true}})';
  create function label(b book) returns text stable language sql as $$ select b.title || '/' || coalesce(b.genre, '-') $$;
  insert into shelf (name) values ('Left'), ('Right');
  insert into book (title, genre, year, shelf_id, owner) values
    ('a', 'crime', 2001, 1, null), ('b', 'poetry', 1999, 1, null), ('c', 'crime', 1990, 1, null), ('d', null, 2005, 1, null),
    ('e', 'poetry', 2010, 2, null), ('f', null, 1980, 2, null), ('g', 'scifi', 2003, 2, '${USER}'), ('h', 'crime', 1995, 2, '${USER}');
  alter table book enable row level security;
  create policy visible on book for select using (owner is null or owner = auth.uid());
`

const edges = (key: string, ids: number[], more: Record<string, unknown> = {}) => ({ data: { [key]: { edges: ids.map((id) => ({ node: { id } })), ...more } } })

t.test('distinctOn', async (t) => {
  const p = await graphqlProject(t, SETUP)
  const books = (args: string, extra = '') => `{ bookCollection(${args}) { edges { node { id } } ${extra} } }`

  await t.test('the first row of each value, in the collection\'s order', async () => {
    t.same(await p.gql(books('distinctOn: [genre]')), edges('bookCollection', [1, 2, 4, 7]), 'by key: crime 1, poetry 2, none 4, scifi 7')
    t.same(await p.gql(books('distinctOn: [genre], orderBy: [{year: AscNullsLast}]')), edges('bookCollection', [6, 3, 2, 7]), 'the oldest of each genre, oldest first')
    t.same(await p.gql(books('distinctOn: [genre], orderBy: [{year: DescNullsLast}]')), edges('bookCollection', [5, 4, 7, 1]), 'the newest of each genre, newest first')
    t.same(await p.gql(books('distinctOn: [genre, shelfId]')), edges('bookCollection', [1, 2, 4, 5, 6, 7, 8]), 'pairs of values')
    t.same(await p.gql(books('distinctOn: [genre, genre], orderBy: [{year: AscNullsLast}]')), edges('bookCollection', [6, 3, 2, 7]), 'a column named twice counts once')
    t.same(await p.gql(books('distinctOn: []')), edges('bookCollection', [1, 2, 3, 4, 5, 6, 7, 8]), 'an empty list keeps every row')
    t.same(await p.gql(books('distinctOn: [genre], orderBy: [{year: AscNullsLast}], filter: {year: {gt: 1985}}')), edges('bookCollection', [3, 2, 7, 4]), 'filtered first')
    t.same(await p.gql(books('distinctOn: [genre], orderBy: [{shelf: {name: DescNullsLast}}, {year: AscNullsLast}]')), edges('bookCollection', [6, 8, 7, 5]),
      'ordered by a related row (orderByRelated)')
    t.same(await p.gql(`{ bookCollection(distinctOn: [genre], orderBy: [{year: AscNullsLast}]) { edges { node { title label } } } }`), {
      data: { bookCollection: { edges: [{ node: { title: 'f', label: 'f/-' } }, { node: { title: 'c', label: 'c/crime' } }, { node: { title: 'b', label: 'b/poetry' } }, { node: { title: 'g', label: 'g/scifi' } }] } },
    }, 'computed fields read the distinct rows')
  })

  await t.test('in a nested collection', async () => {
    t.same(await p.gql(`{ shelfCollection { edges { node { name bookCollection(distinctOn: [genre]) { edges { node { id } } } } } } }`), {
      data: {
        shelfCollection: {
          edges: [
            { node: { name: 'Left', bookCollection: { edges: [1, 2, 4].map((id) => ({ node: { id } })) } } },
            { node: { name: 'Right', bookCollection: { edges: [5, 6, 7, 8].map((id) => ({ node: { id } })) } } },
          ],
        },
      },
    })
  })

  await t.test('paging, totalCount and aggregate see the distinct rows', async () => {
    const order = 'distinctOn: [genre], orderBy: [{year: AscNullsLast}]'
    t.same(await p.gql(books(order, 'totalCount aggregate { count sum { year } min { year } max { year } }')),
      edges('bookCollection', [6, 3, 2, 7], { totalCount: 4, aggregate: { count: 4, sum: { year: 7972 }, min: { year: 1980 }, max: { year: 2003 } } }))
    t.same(await p.gql(books(`${order}, first: 2`, 'pageInfo { hasNextPage hasPreviousPage }')), edges('bookCollection', [6, 3], { pageInfo: { hasNextPage: true, hasPreviousPage: false } }))
    t.same(await p.gql(books(`${order}, last: 2`, 'pageInfo { hasNextPage hasPreviousPage }')), edges('bookCollection', [2, 7], { pageInfo: { hasNextPage: false, hasPreviousPage: true } }))
    t.same(await p.gql(books(`${order}, first: 2, offset: 1`, 'totalCount')), edges('bookCollection', [3, 2], { totalCount: 4 }))

    // One row at a time forwards and backwards; the same document each time, cursors as variables.
    for (const [extra, expected] of [[order, [6, 3, 2, 7]], ['distinctOn: [genre], orderBy: [{shelf: {name: DescNullsLast}}, {year: AscNullsLast}]', [6, 8, 7, 5]]] as const) {
      const forward: number[] = []
      let after: string | null = null
      for (let i = 0; i < 10; i++) {
        const r = await p.gql(`query($after: Cursor) { bookCollection(${extra}, first: 1, after: $after) { edges { node { id } } pageInfo { hasNextPage endCursor } } }`, { variables: { after } })
        const c = (r.data as { bookCollection: { edges: { node: { id: number } }[]; pageInfo: { hasNextPage: boolean; endCursor: string } } }).bookCollection
        forward.push(...c.edges.map((e) => e.node.id))
        if (!c.pageInfo.hasNextPage) break
        after = c.pageInfo.endCursor
      }
      const backward: number[] = []
      let before: string | null = null
      for (let i = 0; i < 10; i++) {
        const r = await p.gql(`query($before: Cursor) { bookCollection(${extra}, last: 1, before: $before) { edges { node { id } } pageInfo { hasPreviousPage startCursor } } }`, { variables: { before } })
        const c = (r.data as { bookCollection: { edges: { node: { id: number } }[]; pageInfo: { hasPreviousPage: boolean; startCursor: string } } }).bookCollection
        backward.unshift(...c.edges.map((e) => e.node.id))
        if (!c.pageInfo.hasPreviousPage) break
        before = c.pageInfo.startCursor
      }
      t.same({ forward, backward }, { forward: expected, backward: expected }, `paged: ${extra}`)
    }
  })

  await t.test('under row level security: the first row the caller sees', async () => {
    const q = books('distinctOn: [genre], orderBy: [{title: DescNullsLast}]', 'totalCount')
    t.same(await p.gql(q, { role: 'anon' }), edges('bookCollection', [6, 5, 3], { totalCount: 3 }), 'anon: crime is c, as h is not visible; no scifi')
    t.same(await p.gql(q, { role: 'authenticated', sub: USER }), edges('bookCollection', [8, 7, 6, 5], { totalCount: 4 }), 'the user: h and g')
  })

  await t.test('refusals', async () => {
    t.same(await p.gql(books('distinctOn: [nope]')), fails('Value "nope" does not exist in "BookDistinctOnField" enum.'))
    t.same(await p.gql(books('distinctOn: [meta]')), fails('Value "meta" does not exist in "BookDistinctOnField" enum.'), 'json has no equality to be distinct by')
    t.same(await p.gql(books('distinctOn: ["genre"]')), fails('Enum "BookDistinctOnField" cannot represent non-enum value: "genre". Did you mean the enum value "genre"?'))
  })

  await t.test('off unless turned on', async () => {
    t.same(await p.gql(`{ shelfCollection(distinctOn: [name]) { edges { node { id } } } }`), fails('Unknown argument "distinctOn" on field "Query.shelfCollection".'))
    await p.sql(`comment on table book is e'@graphql({"totalCount": {"enabled": true}})'`)
    t.same(await p.gql(books('distinctOn: [genre]')), fails('Unknown argument "distinctOn" on field "Query.bookCollection".'))
    await p.sql(`comment on schema public is e'@graphql({"inflect_names": true, "distinctOn": {"enabled": true}})'`)
    t.same(await p.gql(`{ shelfCollection(distinctOn: [name]) { edges { node { id } } } }`), edges('shelfCollection', [1, 2]), 'a schema turns it on for its tables')
    await p.sql(`comment on table book is e'@graphql({"distinctOn": {"enabled": false}})'`)
    t.same(await p.gql(books('distinctOn: [genre]')), fails('Unknown argument "distinctOn" on field "Query.bookCollection".'), 'a table turns it off')
  })
})
