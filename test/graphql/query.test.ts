// Queries: collections, paging both ways with cursors, every filter operator,
// orderBy, by-key lookups, nodeId/node, relations both ways, max_rows,
// totalCount, aggregate and inflection, compared as whole responses.
import t from 'tap'
import { graphqlProject } from './helpers.ts'

const SETUP = `
  create type mood as enum ('happy', 'sad', 'in_between');
  create table account (
    id serial primary key,
    email varchar(20) not null,
    mood mood,
    score numeric,
    big bigint,
    active boolean not null default true,
    born date,
    tags text[],
    nums int[],
    meta jsonb
  );
  create table blog (
    id serial primary key,
    owner_id int not null references account(id),
    title text
  );
  create table profile (
    account_id int primary key references account(id),
    bio text
  );
  insert into account (email, mood, score, big, active, born, tags, nums, meta) values
    ('ann@x.io', 'happy', 1.5, 9007199254740993, true, '2000-01-01', '{a,b}', '{1,2}', '{"k": 1}'),
    ('bob@x.io', 'sad', 2.25, 2, false, '1990-06-15', '{b}', '{2,3}', null),
    ('cid@y.io', null, null, null, true, null, null, null, '"s"'),
    ('dan@y.io', 'in_between', 10, 4, true, '2010-12-31', '{}', '{}', '[1]');
  insert into blog (owner_id, title) values (1, 'a1'), (1, 'a2'), (2, 'b1'), (4, null);
  insert into profile values (1, 'hi');
  create table item (id int primary key, v int);
  insert into item select g, g % 3 from generate_series(1, 10) g;
`

t.test('queries', async (t) => {
  const p = await graphqlProject(t, SETUP)
  const ids = (edges: { node: { id: number } }[]) => edges.map((e) => e.node.id)
  const filterIds = async (filter: string) => {
    const r = (await p.gql(`{ accountCollection(filter: ${filter}) { edges { node { id } } } }`)) as {
      data: { accountCollection: { edges: { node: { id: number } }[] } } | null
      errors?: unknown
    }
    if (!r.data) return r
    return ids(r.data.accountCollection.edges)
  }

  t.test('forward paging with cursors', async (t) => {
    const page = `query($after: Cursor) { itemCollection(first: 4, after: $after) {
      edges { cursor node { id } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`
    t.strictSame(await p.gql(page), {
      data: {
        itemCollection: {
          edges: [
            { cursor: 'WzFd', node: { id: 1 } },
            { cursor: 'WzJd', node: { id: 2 } },
            { cursor: 'WzNd', node: { id: 3 } },
            { cursor: 'WzRd', node: { id: 4 } },
          ],
          pageInfo: { hasNextPage: true, hasPreviousPage: false, startCursor: 'WzFd', endCursor: 'WzRd' },
        },
      },
    })
    t.strictSame(await p.gql(page, { variables: { after: 'Wzhd' } }), {
      data: {
        itemCollection: {
          edges: [
            { cursor: 'Wzld', node: { id: 9 } },
            { cursor: 'WzEwXQ==', node: { id: 10 } },
          ],
          pageInfo: { hasNextPage: false, hasPreviousPage: true, startCursor: 'Wzld', endCursor: 'WzEwXQ==' },
        },
      },
    })
  })

  t.test('backward paging with cursors', async (t) => {
    const page = `query($before: Cursor) { itemCollection(last: 3, before: $before) {
      edges { node { id } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`
    t.strictSame(await p.gql(page), {
      data: {
        itemCollection: {
          edges: [{ node: { id: 8 } }, { node: { id: 9 } }, { node: { id: 10 } }],
          pageInfo: { hasNextPage: false, hasPreviousPage: true, startCursor: 'Wzhd', endCursor: 'WzEwXQ==' },
        },
      },
    })
    t.strictSame(await p.gql(page, { variables: { before: 'WzNd' } }), {
      data: {
        itemCollection: {
          edges: [{ node: { id: 1 } }, { node: { id: 2 } }],
          pageInfo: { hasNextPage: true, hasPreviousPage: false, startCursor: 'WzFd', endCursor: 'WzJd' },
        },
      },
    })
  })

  t.test('offset paging and paging errors', async (t) => {
    t.strictSame(await p.gql(`{ itemCollection(first: 2, offset: 3) { edges { node { id } } pageInfo { hasPreviousPage hasNextPage } } }`), {
      data: { itemCollection: { edges: [{ node: { id: 4 } }, { node: { id: 5 } }], pageInfo: { hasPreviousPage: true, hasNextPage: true } } },
    })
    const cases: [string, string][] = [
      ['first: 1, last: 1', 'only one of "first" and "last" may be provided'],
      ['before: "WzFd", after: "WzFd"', 'only one of "before" and "after" may be provided'],
      ['first: 1, before: "WzFd"', '"first" may only be used with "after"'],
      ['last: 1, after: "WzFd"', '"last" may only be used with "before"'],
      ['last: 1, offset: 1', '"offset" may only be used with "first" and "after"'],
      ['first: -1', '`first` must be an unsigned integer'],
      ['after: "WzEsMl0="', 'orderBy clause incompatible with pagination cursor'],
      ['after: "%%%"', 'Failed to decode cursor, error 1'],
    ]
    for (const [args, message] of cases) {
      t.strictSame(await p.gql(`{ itemCollection(${args}) { edges { node { id } } } }`), { data: null, errors: [{ message }] }, args)
    }
  })

  t.test('orderBy in the four directions, primary key as tie-breaker, cursors through it', async (t) => {
    const order = async (dir: string) => {
      const r = (await p.gql(`{ accountCollection(orderBy: [{score: ${dir}}]) { edges { node { id } } } }`)) as {
        data: { accountCollection: { edges: { node: { id: number } }[] } }
      }
      return ids(r.data.accountCollection.edges)
    }
    t.strictSame(await order('AscNullsFirst'), [3, 1, 2, 4])
    t.strictSame(await order('AscNullsLast'), [1, 2, 4, 3])
    t.strictSame(await order('DescNullsFirst'), [3, 4, 2, 1])
    t.strictSame(await order('DescNullsLast'), [4, 2, 1, 3])
    const tie = (await p.gql(`{ itemCollection(orderBy: [{v: DescNullsLast}], first: 4) { edges { cursor node { id v } } } }`)) as {
      data: { itemCollection: { edges: { cursor: string; node: { id: number; v: number } }[] } }
    }
    t.strictSame(tie.data.itemCollection.edges.map((e) => e.node), [{ id: 2, v: 2 }, { id: 5, v: 2 }, { id: 8, v: 2 }, { id: 1, v: 1 }])
    const after = tie.data.itemCollection.edges[3]!.cursor
    t.equal(Buffer.from(after, 'base64').toString(), '[1, 1]')
    t.strictSame(await p.gql(`{ itemCollection(orderBy: [{v: DescNullsLast}], first: 3, after: "${after}") { edges { node { id } } } }`), {
      data: { itemCollection: { edges: [{ node: { id: 4 } }, { node: { id: 7 } }, { node: { id: 10 } }] } },
    })
    // Paging backwards through a nullable ordering.
    t.strictSame(await p.gql(`{ accountCollection(orderBy: [{score: AscNullsFirst}], last: 2, before: "WzEuNSwgMV0=") { edges { node { id } } } }`), {
      data: { accountCollection: { edges: [{ node: { id: 3 } }] } },
    })
  })

  t.test('every filter operator', async (t) => {
    t.strictSame(await filterIds('{id: {eq: 2}}'), [2])
    t.strictSame(await filterIds('{id: {neq: 2}}'), [1, 3, 4])
    t.strictSame(await filterIds('{id: {lt: 2}}'), [1])
    t.strictSame(await filterIds('{id: {lte: 2}}'), [1, 2])
    t.strictSame(await filterIds('{id: {gt: 3}}'), [4])
    t.strictSame(await filterIds('{id: {gte: 3}}'), [3, 4])
    t.strictSame(await filterIds('{id: {in: [1, 3]}}'), [1, 3])
    t.strictSame(await filterIds('{mood: {is: NULL}}'), [3])
    t.strictSame(await filterIds('{mood: {is: NOT_NULL}}'), [1, 2, 4])
    t.strictSame(await filterIds('{mood: {eq: sad}}'), [2])
    t.strictSame(await filterIds('{mood: {in: [happy, in_between]}}'), [1, 4])
    t.strictSame(await filterIds('{mood: {neq: happy}}'), [2, 4])
    t.strictSame(await filterIds('{email: {like: "%@y.io"}}'), [3, 4])
    t.strictSame(await filterIds('{email: {ilike: "ANN%"}}'), [1])
    t.strictSame(await filterIds('{email: {startsWith: "b"}}'), [2])
    t.strictSame(await filterIds('{email: {regex: "^[ab]"}}'), [1, 2])
    t.strictSame(await filterIds('{email: {iregex: "^D"}}'), [4])
    t.strictSame(await filterIds('{score: {gt: "2"}}'), [2, 4])
    t.strictSame(await filterIds('{big: {eq: "9007199254740993"}}'), [1])
    t.strictSame(await filterIds('{active: {eq: false}}'), [2])
    t.strictSame(await filterIds('{born: {lt: "2000-01-01"}}'), [2])
    t.strictSame(await filterIds('{tags: {contains: ["b"]}}'), [1, 2])
    t.strictSame(await filterIds('{tags: {containedBy: ["a", "b"]}}'), [1, 2, 4])
    t.strictSame(await filterIds('{nums: {overlaps: [3, 7]}}'), [2])
    t.strictSame(await filterIds('{nums: {eq: [1, 2]}}'), [1])
    t.strictSame(await filterIds('{tags: {is: NULL}}'), [3])
    t.strictSame(await filterIds('{and: [{id: {gt: 1}}, {id: {lt: 4}}]}'), [2, 3])
    t.strictSame(await filterIds('{or: [{id: {eq: 1}}, {email: {startsWith: "d"}}]}'), [1, 4])
    t.strictSame(await filterIds('{not: {id: {eq: 1}}}'), [2, 3, 4])
    t.strictSame(await filterIds('{and: [], or: [], not: {}}'), [1, 2, 3, 4])
    t.strictSame(await filterIds('{nodeId: {eq: "WyJwdWJsaWMiLCAiYWNjb3VudCIsIDNd"}}'), [3])
    t.strictSame(await filterIds('{nodeId: {eq: "WyJwdWJsaWMiLCAiYmxvZyIsIDFd"}}'), { data: null, errors: [{ message: 'nodeId belongs to a different collection' }] })
    t.strictSame(await filterIds('{email: {eq: "far-too-long-for-this-column"}}'), {
      data: null,
      errors: [{ message: 'Invalid input for String type. Maximum character length 20' }],
    })
  })

  t.test('scalars as pg_graphql writes them', async (t) => {
    t.strictSame(await p.gql(`{ accountByPk(id: 1) { id email mood score big active born tags nums meta } }`), {
      data: {
        accountByPk: {
          id: 1, email: 'ann@x.io', mood: 'happy', score: '1.5', big: '9007199254740993', active: true, born: '2000-01-01',
          tags: ['a', 'b'], nums: [1, 2], meta: '{"k": 1}',
        },
      },
    })
    t.strictSame(await p.gql(`{ accountByPk(id: 99) { id } }`), { data: { accountByPk: null } })
  })

  t.test('nodeId and node', async (t) => {
    const r = (await p.gql(`{ blogByPk(id: 3) { nodeId } }`)) as { data: { blogByPk: { nodeId: string } } }
    t.equal(r.data.blogByPk.nodeId, 'WyJwdWJsaWMiLCAiYmxvZyIsIDNd')
    t.strictSame(
      await p.gql(`query($id: ID!) { node(nodeId: $id) { nodeId __typename ... on blog { id title } ... on account { email } } }`, {
        variables: { id: r.data.blogByPk.nodeId },
      }),
      { data: { node: { nodeId: 'WyJwdWJsaWMiLCAiYmxvZyIsIDNd', __typename: 'blog', id: 3, title: 'b1' } } },
    )
    t.strictSame(await p.gql(`{ node(nodeId: "bm9wZQ==") { nodeId } }`), { data: null, errors: [{ message: 'Invalid value passed to nodeId argument. Error 3' }] })
  })

  t.test('relations both ways, nested collections take the same arguments', async (t) => {
    t.strictSame(
      await p.gql(`{ accountCollection(first: 2) { edges { node { id profile { bio } blogCollection(orderBy: [{id: DescNullsLast}], first: 1) {
        edges { node { title account { id } } } pageInfo { hasNextPage } } } } } }`),
      {
        data: {
          accountCollection: {
            edges: [
              { node: { id: 1, profile: { bio: 'hi' }, blogCollection: { edges: [{ node: { title: 'a2', account: { id: 1 } } }], pageInfo: { hasNextPage: true } } } },
              { node: { id: 2, profile: null, blogCollection: { edges: [{ node: { title: 'b1', account: { id: 2 } } }], pageInfo: { hasNextPage: false } } } },
            ],
          },
        },
      },
    )
    t.strictSame(await p.gql(`{ profileCollection { edges { node { accountId: account_id account { email } } } } }`), {
      data: { profileCollection: { edges: [{ node: { accountId: 1, account: { email: 'ann@x.io' } } }] } },
    })
    // To-one relations chained (blog -> account -> profile), found and missing, in a page, a single row and mutation records.
    const chain = `account { email profile { bio account { id } } }`
    t.strictSame(await p.gql(`{ blogCollection(first: 3) { edges { node { id ${chain} } } } }`), {
      data: {
        blogCollection: {
          edges: [
            { node: { id: 1, account: { email: 'ann@x.io', profile: { bio: 'hi', account: { id: 1 } } } } },
            { node: { id: 2, account: { email: 'ann@x.io', profile: { bio: 'hi', account: { id: 1 } } } } },
            { node: { id: 3, account: { email: 'bob@x.io', profile: null } } },
          ],
        },
      },
    })
    t.strictSame(await p.gql(`{ blogByPk(id: 2) { title ${chain} } }`), {
      data: { blogByPk: { title: 'a2', account: { email: 'ann@x.io', profile: { bio: 'hi', account: { id: 1 } } } } },
    })
    t.strictSame(await p.gql(`mutation { updateblogCollection(set: {title: "a2!"}, filter: {id: {eq: 2}}) { records { title ${chain} } } }`), {
      data: { updateblogCollection: { records: [{ title: 'a2!', account: { email: 'ann@x.io', profile: { bio: 'hi', account: { id: 1 } } } }] } },
    })
    await p.sql(`update blog set title = 'a2' where id = 2`)
  })

  t.test('max_rows, totalCount, aggregate, inflection and names', async (t) => {
    await p.sql(`
      comment on schema public is e'@graphql({"inflect_names": true, "max_rows": 3})';
      comment on table item is e'@graphql({"totalCount": {"enabled": true}, "aggregate": {"enabled": true}, "max_rows": 4})';
      comment on table account is e'@graphql({"name": "Member"})';
      comment on column account.email is e'@graphql({"name": "mail"})';
      comment on constraint blog_owner_id_fkey on blog is e'@graphql({"foreign_name": "writer", "local_name": "posts"})';
      comment on type mood is e'@graphql({"mappings": {"in_between": "MEH"}})';
      create table blog_post (id int primary key, created_at date);
    `)
    t.strictSame(await p.gql(`{ itemCollection(first: 100, filter: {v: {eq: 1}}) { totalCount edges { node { id } } aggregate { count sum { v } avg { v } min { id } max { id } } } }`), {
      data: {
        itemCollection: {
          totalCount: 4,
          edges: [{ node: { id: 1 } }, { node: { id: 4 } }, { node: { id: 7 } }, { node: { id: 10 } }],
          aggregate: { count: 4, sum: { v: 4 }, avg: { v: 1 }, min: { id: 1 }, max: { id: 10 } },
        },
      },
    })
    const r = (await p.gql(`{ blogCollection { edges { node { id } } } }`)) as { data: { blogCollection: { edges: unknown[] } } }
    t.equal(r.data.blogCollection.edges.length, 3, 'schema max_rows caps the page')
    t.strictSame(await p.gql(`{ memberCollection(filter: {mood: {eq: MEH}}) { edges { node { mail mood posts: postsCollection { totalCount } } } } }`), {
      data: null,
      errors: [{ message: 'Cannot query field "postsCollection" on type "Member".' }],
    })
    t.strictSame(await p.gql(`{ memberCollection(filter: {mood: {eq: MEH}}) { edges { node { mail mood posts { edges { node { title writer { mail } } } } } } } }`), {
      data: { memberCollection: { edges: [{ node: { mail: 'dan@y.io', mood: 'MEH', posts: { edges: [{ node: { title: null, writer: { mail: 'dan@y.io' } } }] } } }] } },
    })
    t.strictSame(await p.gql(`{ blogPostCollection { edges { node { id createdAt } } } }`), { data: { blogPostCollection: { edges: [] } } })
    t.strictSame(await p.gql(`{ blogCollection { totalCount } }`), {
      data: null,
      errors: [{ message: 'Cannot query field "totalCount" on type "BlogConnection".' }],
    })
  })
})
