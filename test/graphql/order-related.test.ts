// orderByRelated (SPEC 2.4, issue 14 item 2): ordering a collection by a
// to-one row's fields (`{author: {name: DescNullsLast}}`, nesting) and by
// the number of related rows (`{bookCollection: {count: DescNullsLast}}`);
// cursors carry the related values, so paging two rows at a time forwards
// and backwards meets every row once, in the full order, through ties and
// nulls. Related rows are read as the caller: row level security decides
// which exist and count. Compared as whole responses.
import t from 'tap'
import { graphqlProject, type GraphqlProject } from './helpers.ts'

const USER = '11111111-1111-1111-1111-111111111111'
const fails = (message: string) => ({ data: null, errors: [{ message }] })

// Authors 1 Ann, 2 Bob, 3 (no name), 4 Ann (the user's), 5 Cy (no books).
// Books 1..9 by author 2, 4, none, 3, 2, 4, 2, 1, none; books 1 and 5 are the user's.
const SETUP = `
  comment on schema public is e'@graphql({"inflect_names": true, "orderByRelated": {"enabled": true}})';
  create table author (id serial primary key, name text, owner uuid);
  create table book (id serial primary key, title text not null, author_id int references author(id), owner uuid);
  comment on table book is e'@graphql({"totalCount": {"enabled": true}})';
  insert into author (name, owner) values ('Ann', null), ('Bob', null), (null, null), ('Ann', '${USER}'), ('Cy', null);
  insert into book (title, author_id, owner) values
    ('a', 2, '${USER}'), ('b', 4, null), ('c', null, null), ('d', 3, null), ('e', 2, '${USER}'),
    ('f', 4, null), ('g', 2, null), ('h', 1, null), ('i', null, null);
  alter table author enable row level security;
  create policy visible on author for select using (owner is null or owner = auth.uid());
  alter table book enable row level security;
  create policy visible on book for select using (owner is null or owner = auth.uid());
`

interface Edge { cursor: string; node: { id: number } }
interface Conn { edges: Edge[]; pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null } }

/** Every id of `collection` in `orderBy`'s order, in pages of two: forwards with `after`, and backwards with `before`. */
async function pagedBothWays(p: GraphqlProject, collection: string, orderBy: string, who: { role?: string; sub?: string } = {}, filter?: string) {
  const filterArg = filter === undefined ? '' : `, filter: ${filter}`
  const forwardDoc = `query($after: Cursor) { c: ${collection}(first: 2, after: $after, orderBy: ${orderBy}${filterArg}) { edges { cursor node { id } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`
  const backwardDoc = `query($before: Cursor) { c: ${collection}(last: 2, before: $before, orderBy: ${orderBy}${filterArg}) { edges { cursor node { id } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`
  const forward: number[] = []
  let after: string | null = null
  for (let i = 0; i < 20; i++) {
    const r = await p.gql(forwardDoc, { ...who, variables: { after } })
    if (!r.data) throw new Error(JSON.stringify(r))
    const c = (r.data as { c: Conn }).c
    forward.push(...c.edges.map((e) => e.node.id))
    if (c.pageInfo.hasPreviousPage !== (after !== null)) throw new Error(`hasPreviousPage ${c.pageInfo.hasPreviousPage} after ${after}`)
    if (!c.pageInfo.hasNextPage) break
    after = c.pageInfo.endCursor
  }
  const backward: number[] = []
  let before: string | null = null
  for (let i = 0; i < 20; i++) {
    const r = await p.gql(backwardDoc, { ...who, variables: { before } })
    if (!r.data) throw new Error(JSON.stringify(r))
    const c = (r.data as { c: Conn }).c
    backward.unshift(...c.edges.map((e) => e.node.id))
    if (c.pageInfo.hasNextPage !== (before !== null)) throw new Error(`hasNextPage ${c.pageInfo.hasNextPage} before ${before}`)
    if (!c.pageInfo.hasPreviousPage) break
    before = c.pageInfo.startCursor
  }
  return { forward, backward }
}

t.test('orderByRelated', async (t) => {
  const p = await graphqlProject(t, SETUP)
  const ids = (collection: string, orderBy: string) => `{ ${collection}(orderBy: ${orderBy}) { edges { node { id } } } }`
  const expectIds = async (collection: string, orderBy: string, expected: number[], message: string, who: { role?: string; sub?: string } = {}) =>
    t.same(await p.gql(ids(collection, orderBy), who), { data: { [collection]: { edges: expected.map((id) => ({ node: { id } })) } } }, message)

  await t.test('a to-one row\'s field, ties broken by the key, nulls where asked', async () => {
    await expectIds('bookCollection', '[{author: {name: DescNullsLast}}]', [1, 5, 7, 2, 6, 8, 3, 4, 9], 'Bob, Ann, then no author or no name')
    await expectIds('bookCollection', '[{author: {name: AscNullsFirst}}]', [3, 4, 9, 2, 6, 8, 1, 5, 7], 'nulls first')
    await expectIds('bookCollection', '[{author: {name: AscNullsLast}}, {author: {id: DescNullsFirst}}]', [2, 6, 8, 1, 5, 7, 3, 9, 4], 'two related keys')
    // graphql-js coerces an input object in its type's field order, as it does for columns: id before name.
    await expectIds('bookCollection', '[{author: {name: AscNullsLast, id: DescNullsFirst}}]', [3, 9, 2, 6, 4, 1, 5, 7, 8], 'two keys in one entry, in field order')
    await expectIds('bookCollection', '[{author: {name: AscNullsLast}}, {title: DescNullsLast}]', [8, 6, 2, 7, 5, 1, 9, 4, 3], 'a related key then a column')
    await expectIds('bookCollection', '[{author: {bookCollection: {count: DescNullsLast}}}]', [1, 5, 7, 2, 6, 4, 8, 3, 9], 'nested: the count of the author\'s books')
  })

  await t.test('the count of related rows', async () => {
    t.same(await p.gql(`{ authorCollection(orderBy: [{bookCollection: {count: DescNullsLast}}]) { edges { node { id bookCollection { totalCount } } } } }`), {
      data: {
        authorCollection: {
          edges: [
            { node: { id: 2, bookCollection: { totalCount: 3 } } },
            { node: { id: 4, bookCollection: { totalCount: 2 } } },
            { node: { id: 1, bookCollection: { totalCount: 1 } } },
            { node: { id: 3, bookCollection: { totalCount: 1 } } },
            { node: { id: 5, bookCollection: { totalCount: 0 } } },
          ],
        },
      },
    })
    await expectIds('authorCollection', '[{bookCollection: {count: AscNullsFirst}}, {name: AscNullsLast}]', [5, 1, 3, 4, 2], 'ascending, ties by name')
    await expectIds('authorCollection', '[{bookCollection: {}}, {bookCollection: {count: null}}]', [1, 2, 3, 4, 5], 'an empty entry orders nothing')
  })

  await t.test('in a nested collection and a to-one relation', async () => {
    t.same(await p.gql(`{ authorCollection(first: 2, orderBy: [{bookCollection: {count: DescNullsLast}}]) { edges { node { name bookCollection(orderBy: [{author: {name: AscNullsLast}}, {title: DescNullsLast}]) { edges { node { title } } } } } } }`), {
      data: {
        authorCollection: {
          edges: [
            { node: { name: 'Bob', bookCollection: { edges: [{ node: { title: 'g' } }, { node: { title: 'e' } }, { node: { title: 'a' } }] } } },
            { node: { name: 'Ann', bookCollection: { edges: [{ node: { title: 'f' } }, { node: { title: 'b' } }] } } },
          ],
        },
      },
    })
  })

  await t.test('cursors page through related orders without gaps or repeats', async () => {
    const cases: [string, string, number[]][] = [
      ['bookCollection', '[{author: {name: DescNullsLast}}]', [1, 5, 7, 2, 6, 8, 3, 4, 9]],
      ['bookCollection', '[{author: {name: AscNullsFirst}}]', [3, 4, 9, 2, 6, 8, 1, 5, 7]],
      ['bookCollection', '[{author: {name: AscNullsLast}}, {author: {id: DescNullsFirst}}]', [2, 6, 8, 1, 5, 7, 3, 9, 4]],
      ['bookCollection', '[{author: {bookCollection: {count: DescNullsLast}}}]', [1, 5, 7, 2, 6, 4, 8, 3, 9]],
      ['bookCollection', '[{author: {bookCollection: {count: AscNullsFirst}}}, {title: DescNullsLast}]', [9, 3, 8, 4, 6, 2, 7, 5, 1]],
      ['authorCollection', '[{bookCollection: {count: DescNullsLast}}]', [2, 4, 1, 3, 5]],
      ['authorCollection', '[{bookCollection: {count: AscNullsLast}}, {name: DescNullsFirst}]', [5, 3, 1, 4, 2]],
    ]
    for (const [collection, orderBy, expected] of cases) {
      await expectIds(collection, orderBy, expected, `full order ${orderBy}`)
      t.same(await pagedBothWays(p, collection, orderBy), { forward: expected, backward: expected }, `paged ${orderBy}`)
    }
  })

  await t.test('the cursor carries the related values', async () => {
    const r = await p.gql(`{ bookCollection(first: 1, orderBy: [{author: {name: DescNullsLast}}, {author: {bookCollection: {count: AscNullsLast}}}]) { edges { cursor } } }`)
    const cursor = (r.data as { bookCollection: { edges: { cursor: string }[] } }).bookCollection.edges[0]!.cursor
    t.same(JSON.parse(Buffer.from(cursor, 'base64').toString('utf8')), ['Bob', 3, 1])
  })

  await t.test('under row level security: anon and a signed-in user', async () => {
    // anon sees neither the user's books (1, 5) nor the user's author (4): books 2 and 6 have no author, Bob has one book.
    await expectIds('bookCollection', '[{author: {name: DescNullsLast}}]', [7, 8, 2, 3, 4, 6, 9], 'anon', { role: 'anon' })
    await expectIds('bookCollection', '[{author: {name: DescNullsLast}}]', [1, 5, 7, 2, 6, 8, 3, 4, 9], 'the user', { role: 'authenticated', sub: USER })
    t.same(await p.gql(`{ authorCollection(orderBy: [{bookCollection: {count: AscNullsLast}}, {name: DescNullsLast}]) { edges { node { id bookCollection { totalCount } } } } }`, { role: 'anon' }), {
      data: {
        authorCollection: {
          edges: [
            { node: { id: 5, bookCollection: { totalCount: 0 } } },
            { node: { id: 2, bookCollection: { totalCount: 1 } } },
            { node: { id: 1, bookCollection: { totalCount: 1 } } },
            { node: { id: 3, bookCollection: { totalCount: 1 } } },
          ],
        },
      },
    }, 'anon counts only the books it sees')
    await expectIds('authorCollection', '[{bookCollection: {count: AscNullsLast}}, {name: DescNullsLast}]', [5, 1, 3, 4, 2], 'the user counts every book', { role: 'authenticated', sub: USER })
    const orderBy = '[{author: {name: DescNullsLast}}]'
    t.same(await pagedBothWays(p, 'bookCollection', orderBy, { role: 'anon' }), { forward: [7, 8, 2, 3, 4, 6, 9], backward: [7, 8, 2, 3, 4, 6, 9] }, 'anon pages')
    const user = { role: 'authenticated', sub: USER }
    t.same(await pagedBothWays(p, 'authorCollection', '[{bookCollection: {count: DescNullsLast}}]', user), { forward: [2, 4, 1, 3, 5], backward: [2, 4, 1, 3, 5] }, 'the user pages')
  })

  await t.test('a filtered collection counts the related rows of the rows that pass', async () => {
    // Root collections count in one grouped scan restricted by the collection's filter: the same answers as counting per row.
    const doc = (filter: string, orderBy: string) => `{ authorCollection(filter: ${filter}, orderBy: ${orderBy}) { edges { node { id bookCollection { totalCount } } } } }`
    const answer = (rows: [number, number][]) => ({ data: { authorCollection: { edges: rows.map(([id, totalCount]) => ({ node: { id, bookCollection: { totalCount } } })) } } })
    const user = { role: 'authenticated', sub: USER }
    t.same(await p.gql(doc('{name: {eq: "Ann"}}', '[{bookCollection: {count: DescNullsLast}}]'), user), answer([[4, 2], [1, 1]]), 'the user: both Anns')
    t.same(await p.gql(doc('{name: {eq: "Ann"}}', '[{bookCollection: {count: DescNullsLast}}]'), { role: 'anon' }), answer([[1, 1]]), 'anon: the Ann it sees')
    const either = '{or: [{name: {eq: "Bob"}}, {id: {eq: 5}}]}'
    t.same(await p.gql(doc(either, '[{bookCollection: {count: AscNullsFirst}}]'), { role: 'anon' }), answer([[5, 0], [2, 1]]), 'anon: Bob\'s one visible book')
    t.same(await p.gql(doc(either, '[{bookCollection: {count: DescNullsLast}}]'), user), answer([[2, 3], [5, 0]]), 'the user: all three of Bob\'s')
    t.same(await p.gql(doc('{id: {gt: 100}}', '[{bookCollection: {count: DescNullsLast}}]')), answer([]), 'nothing passes')
    t.same(await pagedBothWays(p, 'authorCollection', '[{bookCollection: {count: AscNullsLast}}]', user, '{id: {neq: 2}}'), { forward: [5, 1, 3, 4], backward: [5, 1, 3, 4] }, 'the user pages a filtered set')
  })

  await t.test('refusals', async () => {
    t.same(await p.gql(ids('authorCollection', '[{bookCollection: {count: AscNullsLast, title: AscNullsLast}}]')),
      fails('Field "title" is not defined by type "BookAggregateOrderBy".'))
    t.same(await p.gql(ids('bookCollection', '[{author: {nope: AscNullsLast}}]')), fails('Field "nope" is not defined by type "AuthorOrderBy". Did you mean "name"?'))
    t.same(await p.gql(ids('bookCollection', '[{author: AscNullsLast}]')), fails('Expected value of type "AuthorOrderBy", found AscNullsLast.'))
    const r = await p.gql(`{ bookCollection(first: 1, orderBy: [{author: {name: DescNullsLast}}, {title: AscNullsLast}]) { edges { cursor } } }`)
    const cursor = (r.data as { bookCollection: { edges: { cursor: string }[] } }).bookCollection.edges[0]!.cursor
    t.same(await p.gql(`{ bookCollection(after: "${cursor}", orderBy: [{author: {name: DescNullsLast}}]) { edges { node { id } } } }`),
      fails('orderBy clause incompatible with pagination cursor'), 'a cursor longer than the order')
  })

  await t.test('off unless turned on; a table can turn it off', async () => {
    await p.sql(`comment on table author is e'@graphql({"orderByRelated": {"enabled": false}})'`)
    t.same(await p.gql(ids('authorCollection', '[{bookCollection: {count: AscNullsLast}}]')), fails('Field "bookCollection" is not defined by type "AuthorOrderBy".'))
    await expectIds('bookCollection', '[{author: {name: DescNullsLast}}]', [1, 5, 7, 2, 6, 8, 3, 4, 9], 'book still inherits it from the schema')
    t.same(await p.gql(ids('bookCollection', '[{author: {bookCollection: {count: AscNullsLast}}}]')),
      fails('Field "bookCollection" is not defined by type "AuthorOrderBy".'), 'nesting follows the related table\'s own setting')
    await p.sql(`comment on table author is null; comment on schema public is e'@graphql({"inflect_names": true})'`)
    t.same(await p.gql(ids('bookCollection', '[{author: {name: DescNullsLast}}]')), fails('Field "author" is not defined by type "BookOrderBy". Did you mean "authorId"?'))
    t.same(await p.gql(ids('bookCollection', '[{title: DescNullsLast}]')), {
      data: { bookCollection: { edges: [9, 8, 7, 6, 5, 4, 3, 2, 1].map((id) => ({ node: { id } })) } },
    }, 'column orders are unchanged')
    await p.sql(`comment on table book is e'@graphql({"totalCount": {"enabled": true}, "orderByRelated": {"enabled": true}})'`)
    await expectIds('bookCollection', '[{author: {name: DescNullsLast}}]', [1, 5, 7, 2, 6, 8, 3, 4, 9], 'turned on by the table alone')
    t.same(await p.gql(ids('authorCollection', '[{bookCollection: {count: AscNullsLast}}]')), fails('Field "bookCollection" is not defined by type "AuthorOrderBy".'))
  })
})
