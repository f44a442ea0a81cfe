// Connections as pg_graphql 1.6 answers them: every combination of edges,
// pageInfo, totalCount, aggregate and __typename (at the root, nested, in a
// mutation's records, from a set-returning function), aggregates with
// PostgreSQL's own values (pg_graphql's test/expected/aggregate.out and
// aggregate_directive.out), pageInfo for every paging argument
// (page_info.out, pagination_cursor_nulls.out), columns named like the
// engine's own SQL names, and objects wider than json_build_object's 100
// arguments. Compared as whole responses.
import t from 'tap'
import { graphqlProject } from './helpers.ts'

const fails = (message: string) => ({ data: null, errors: [{ message }] })

t.test('aggregates (pg_graphql aggregate.out)', async (t) => {
  const p = await graphqlProject(t, `
    comment on schema public is e'@graphql({"inflect_names": true})';
    create table account(id serial primary key, email varchar(255) not null, created_at timestamp not null);
    create table blog(
      id serial primary key, owner_id integer not null references account(id) on delete cascade,
      name varchar(255) not null, description varchar(255), created_at timestamp not null
    );
    create type blog_post_status as enum ('PENDING', 'RELEASED');
    create table blog_post(
      id uuid not null default gen_random_uuid() primary key, blog_id integer not null references blog(id) on delete cascade,
      title varchar(255) not null, body varchar(10000), tags text[], status blog_post_status not null, created_at timestamp not null
    );
    comment on table account is e'@graphql({"aggregate": {"enabled": true}})';
    comment on table blog is e'@graphql({"aggregate": {"enabled": true}})';
    comment on table blog_post is e'@graphql({"totalCount": {"enabled": true}, "aggregate": {"enabled": true}})';
    insert into account(email, created_at) values
      ('aardvark@x.com', '2025-04-27 12:00:00'), ('bat@x.com', '2025-04-28 12:00:00'), ('cat@x.com', '2025-04-29 12:00:00'),
      ('dog@x.com', '2025-04-30 12:00:00'), ('elephant@x.com', '2025-05-01 12:00:00');
    insert into blog(owner_id, name, description, created_at) values
      (1, 'A: Blog 1', 'a desc1', '2025-04-22 12:00:00'), (1, 'A: Blog 2', 'a desc2', '2025-04-23 12:00:00'),
      (1, 'A: Blog 3', 'a desc3', '2025-04-24 12:00:00'), (2, 'B: Blog 3', 'b desc1', '2025-04-25 12:00:00');
    insert into blog_post(blog_id, title, body, tags, status, created_at) values
      (1, 'Post 1 in A Blog 1', 'c', '{"tech", "update"}', 'RELEASED', '2025-04-02 12:00:00'),
      (1, 'Post 2 in A Blog 1', 'c', '{"announcement", "tech"}', 'PENDING', '2025-04-07 12:00:00'),
      (2, 'Post 1 in A Blog 2', 'c', '{"personal"}', 'RELEASED', '2025-04-12 12:00:00'),
      (2, 'Post 2 in A Blog 2', 'c', '{"update"}', 'RELEASED', '2025-04-17 12:00:00'),
      (3, 'Post 1 in A Blog 3', 'c', '{"travel", "adventure"}', 'PENDING', '2025-04-22 12:00:00'),
      (4, 'Post 1 in B Blog 3', 'c', '{"tech", "review"}', 'RELEASED', '2025-04-27 12:00:00'),
      (4, 'Post 2 in B Blog 3', 'c', '{"coding", "tutorial"}', 'PENDING', '2025-05-02 12:00:00');
    create table product(id serial primary key, name text not null, price numeric not null, stock int not null);
    comment on table product is e'@graphql({"aggregate": {"enabled": true}})';
    insert into product(name, price, stock) values ('Widget', 9.99, 100), ('Gadget', 19.99, 50), ('Gizmo', 29.99, 25);
  `)
  const all = 'count sum { id } avg { id } min { id } max { id }'

  t.strictSame(await p.gql(`{ accountCollection { aggregate { count } } }`), { data: { accountCollection: { aggregate: { count: 5 } } } })
  t.strictSame(await p.gql(`{ accountCollection(filter: {id: {gt: 3}}) { aggregate { count } } }`), { data: { accountCollection: { aggregate: { count: 2 } } } })
  t.strictSame(await p.gql(`{ blogCollection { aggregate { ${all} } } }`), {
    data: { blogCollection: { aggregate: { count: 4, sum: { id: 10 }, avg: { id: 2.5 }, min: { id: 1 }, max: { id: 4 } } } },
  })
  t.strictSame(await p.gql(`{ blogCollection(filter: {ownerId: {lt: 2}}) { aggregate { ${all} } } }`), {
    data: { blogCollection: { aggregate: { count: 3, sum: { id: 6 }, avg: { id: 2 }, min: { id: 1 }, max: { id: 3 } } } },
  })
  t.strictSame(await p.gql(`{ blogCollection(first: 1) { edges { node { id name } } aggregate { count sum { id } } } }`), {
    data: { blogCollection: { edges: [{ node: { id: 1, name: 'A: Blog 1' } }], aggregate: { count: 4, sum: { id: 10 } } } },
  }, 'pagination leaves aggregates alone')
  t.strictSame(await p.gql(`{ accountCollection(filter: {id: {gt: 1000}}) { aggregate { ${all} } } }`), {
    data: { accountCollection: { aggregate: { count: 0, sum: { id: null }, avg: { id: null }, min: { id: null }, max: { id: null } } } },
  }, 'an empty set: count 0, every other aggregate null')
  t.strictSame(await p.gql(`{ a: blogCollection(filter: {description: {is: NOT_NULL}}) { aggregate { count } } b: blogCollection(filter: {description: {is: NULL}}) { aggregate { count } } }`), {
    data: { a: { aggregate: { count: 4 } }, b: { aggregate: { count: 0 } } },
  })
  t.strictSame(await p.gql(`{ blogCollection { aggregate { min { name description createdAt } max { name description createdAt } } } }`), {
    data: {
      blogCollection: {
        aggregate: {
          min: { name: 'A: Blog 1', description: 'a desc1', createdAt: '2025-04-22T12:00:00' },
          max: { name: 'B: Blog 3', description: 'b desc1', createdAt: '2025-04-25T12:00:00' },
        },
      },
    },
  }, 'min and max of text and timestamps')
  t.strictSame(await p.gql(`{ accountCollection { edges { node { email blogCollection { aggregate { count sum { id } } } } } } }`), {
    data: {
      accountCollection: {
        edges: [
          { node: { email: 'aardvark@x.com', blogCollection: { aggregate: { count: 3, sum: { id: 6 } } } } },
          { node: { email: 'bat@x.com', blogCollection: { aggregate: { count: 1, sum: { id: 4 } } } } },
          { node: { email: 'cat@x.com', blogCollection: { aggregate: { count: 0, sum: { id: null } } } } },
          { node: { email: 'dog@x.com', blogCollection: { aggregate: { count: 0, sum: { id: null } } } } },
          { node: { email: 'elephant@x.com', blogCollection: { aggregate: { count: 0, sum: { id: null } } } } },
        ],
      },
    },
  }, 'nested aggregates, per parent row')
  t.strictSame(await p.gql(`{
    blogCollection {
      edges { node { name blogPostCollection { aggregate { count min { createdAt } max { createdAt } } } } }
      aggregate { count min { id createdAt } max { id createdAt } sum { id } avg { id } }
    }
  }`), {
    data: {
      blogCollection: {
        edges: [
          { node: { name: 'A: Blog 1', blogPostCollection: { aggregate: { count: 2, min: { createdAt: '2025-04-02T12:00:00' }, max: { createdAt: '2025-04-07T12:00:00' } } } } },
          { node: { name: 'A: Blog 2', blogPostCollection: { aggregate: { count: 2, min: { createdAt: '2025-04-12T12:00:00' }, max: { createdAt: '2025-04-17T12:00:00' } } } } },
          { node: { name: 'A: Blog 3', blogPostCollection: { aggregate: { count: 1, min: { createdAt: '2025-04-22T12:00:00' }, max: { createdAt: '2025-04-22T12:00:00' } } } } },
          { node: { name: 'B: Blog 3', blogPostCollection: { aggregate: { count: 2, min: { createdAt: '2025-04-27T12:00:00' }, max: { createdAt: '2025-05-02T12:00:00' } } } } },
        ],
        aggregate: {
          count: 4,
          min: { id: 1, createdAt: '2025-04-22T12:00:00' },
          max: { id: 4, createdAt: '2025-04-25T12:00:00' },
          sum: { id: 10 },
          avg: { id: 2.5 },
        },
      },
    },
  })
  t.strictSame(await p.gql(`{
    a: blogPostCollection(filter: {or: [{status: {eq: RELEASED}}, {title: {startsWith: "Post"}}]}) { aggregate { count } }
    b: blogPostCollection(filter: {and: [{status: {eq: PENDING}}, {not: {blogId: {eq: 4}}}]}) { aggregate { count } }
    c: blogPostCollection(filter: {tags: {contains: "tech"}}) { aggregate { count } }
    d: blogPostCollection(filter: {title: {eq: "This title does not exist"}}) { aggregate { count min { createdAt } max { createdAt } } }
    e: blogPostCollection(filter: {status: {eq: RELEASED}}) { totalCount aggregate { count } }
  }`), {
    data: {
      a: { aggregate: { count: 7 } },
      b: { aggregate: { count: 2 } },
      c: { aggregate: { count: 3 } },
      d: { aggregate: { count: 0, min: { createdAt: null }, max: { createdAt: null } } },
      e: { totalCount: 4, aggregate: { count: 4 } },
    },
  }, 'filters apply to aggregates')
  t.strictSame(await p.gql(`{ blogCollection { edges { node { name blogPostCollection(filter: {status: {eq: RELEASED}}) { aggregate { count } } } } } }`), {
    data: {
      blogCollection: {
        edges: [
          { node: { name: 'A: Blog 1', blogPostCollection: { aggregate: { count: 1 } } } },
          { node: { name: 'A: Blog 2', blogPostCollection: { aggregate: { count: 2 } } } },
          { node: { name: 'A: Blog 3', blogPostCollection: { aggregate: { count: 0 } } } },
          { node: { name: 'B: Blog 3', blogPostCollection: { aggregate: { count: 1 } } } },
        ],
      },
    },
  })
  // aggregate_directive.out: numeric aggregates are JSON numbers too (a numeric column in a record is a string).
  t.strictSame(await p.gql(`{ productCollection { aggregate { count sum { price stock } avg { price } max { price name } min { stock } } edges { node { price } } } }`), {
    data: {
      productCollection: {
        aggregate: { count: 3, sum: { price: 59.97, stock: 175 }, avg: { price: 19.99 }, max: { price: 29.99, name: 'Widget' }, min: { stock: 25 } },
        edges: [{ node: { price: '9.99' } }, { node: { price: '19.99' } }, { node: { price: '29.99' } }],
      },
    },
  })
  t.strictSame(await p.gql(`{ blogPostCollection { aggregate { min { id } } } }`), fails('Cannot query field "id" on type "BlogPostMinAggregateResult".'), 'UUIDs have no min or max')
})

t.test('aggregate types and values of every scalar', async (t) => {
  const p = await graphqlProject(t, `
    comment on schema public is e'@graphql({"inflect_names": true, "introspection": true})';
    create table measure(
      id int primary key, i2 int2, i4 int4, i8 int8, num numeric(6, 2), f4 real, f8 float8,
      t text, vc varchar(10), d date, ts timestamp, tstz timestamptz, tm time, b boolean, u uuid, j jsonb, arr int[]
    );
    comment on table measure is e'@graphql({"aggregate": {"enabled": true}})';
    insert into measure values
      (1, 1, 10, 10000000000, 1.50, 0.5, 1.25, 'b', 'y', '2024-01-02', '2024-01-02 03:04:05', '2024-01-02 03:04:05+00', '10:00', true, null, null, null),
      (2, 2, 20, 20000000000, 2.25, 1.5, 2.5, 'a', 'z', '2024-03-04', '2024-03-04 05:06:07.5', '2024-03-04 05:06:07+00', '11:30:15', false, null, null, null),
      (3, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null);
  `)
  const numeric = 'id i2 i4 i8 num f4 f8'
  const comparable = `${numeric} t vc d ts tstz tm`
  t.strictSame(await p.gql(`{ measureCollection { aggregate { count sum { ${numeric} } avg { ${numeric} } min { ${comparable} } max { ${comparable} } } } }`), {
    data: {
      measureCollection: {
        aggregate: {
          count: 3,
          sum: { id: 6, i2: 3, i4: 30, i8: 30000000000, num: 3.75, f4: 2, f8: 3.75 },
          avg: { id: 2, i2: 1.5, i4: 15, i8: 15000000000, num: 1.875, f4: 1, f8: 1.875 },
          min: { id: 1, i2: 1, i4: 10, i8: 10000000000, num: 1.5, f4: 0.5, f8: 1.25, t: 'a', vc: 'y', d: '2024-01-02', ts: '2024-01-02T03:04:05', tstz: '2024-01-02T03:04:05+00:00', tm: '10:00:00' },
          max: { id: 3, i2: 2, i4: 20, i8: 20000000000, num: 2.25, f4: 1.5, f8: 2.5, t: 'b', vc: 'z', d: '2024-03-04', ts: '2024-03-04T05:06:07.5', tstz: '2024-03-04T05:06:07+00:00', tm: '11:30:15' },
        },
      },
    },
  })

  // Which columns each result type has, and their types: sum of an integer is a BigInt, any other sum
  // and every avg a BigFloat; min and max keep the column's type. Fields sorted by name here.
  const fieldsOf = async (name: string) => {
    const r = (await p.gql(`{ __type(name: "${name}") { name fields { name type { name kind } } } }`)) as { data: { __type: { fields: { name: string }[] } } }
    r.data.__type.fields.sort((a, b) => a.name.localeCompare(b.name))
    return r
  }
  const field = (name: string, type: string) => ({ name, type: { name: type, kind: 'SCALAR' } })
  const numericFields = (type: (c: string) => string) => ['f4', 'f8', 'i2', 'i4', 'i8', 'id', 'num'].map((c) => field(c, type(c)))
  const integer = new Set(['i2', 'i4', 'i8', 'id'])
  t.strictSame(await fieldsOf('MeasureSumAggregateResult'), {
    data: { __type: { name: 'MeasureSumAggregateResult', fields: numericFields((c) => (integer.has(c) ? 'BigInt' : 'BigFloat')) } },
  })
  t.strictSame(await fieldsOf('MeasureAvgAggregateResult'), { data: { __type: { name: 'MeasureAvgAggregateResult', fields: numericFields(() => 'BigFloat') } } })
  const own: Record<string, string> = { f4: 'Float', f8: 'Float', i2: 'Int', i4: 'Int', i8: 'BigInt', id: 'Int', num: 'BigFloat', d: 'Date', t: 'String', tm: 'Time', ts: 'Datetime', tstz: 'Datetime', vc: 'String' }
  const comparableFields = Object.keys(own).sort((a, b) => a.localeCompare(b)).map((c) => field(c, own[c]!))
  t.strictSame(await fieldsOf('MeasureMinAggregateResult'), { data: { __type: { name: 'MeasureMinAggregateResult', fields: comparableFields } } })
  t.strictSame(await fieldsOf('MeasureMaxAggregateResult'), { data: { __type: { name: 'MeasureMaxAggregateResult', fields: comparableFields } } })
})

t.test('every combination of a connection fields', async (t) => {
  const p = await graphqlProject(t, `
    comment on schema public is e'@graphql({"inflect_names": true})';
    create table author(id int primary key, name text not null);
    create table book(id int primary key, author_id int not null references author(id), title text not null, pages int not null);
    comment on table book is e'@graphql({"totalCount": {"enabled": true}, "aggregate": {"enabled": true}})';
    insert into author values (1, 'Ann'), (2, 'Bob');
    insert into book values (1, 1, 'a', 100), (2, 1, 'b', 200), (3, 1, 'c', 300), (4, 2, 'd', 50);
    create function books_by(author int) returns setof book stable language sql as $$ select * from book where author_id = author $$;
  `)
  const parts = {
    edges: ['edges { cursor node { id title } }', [{ cursor: 'WzFd', node: { id: 1, title: 'a' } }, { cursor: 'WzJd', node: { id: 2, title: 'b' } }]],
    pageInfo: ['pageInfo { hasNextPage hasPreviousPage startCursor endCursor }', { hasNextPage: true, hasPreviousPage: false, startCursor: 'WzFd', endCursor: 'WzJd' }],
    totalCount: ['totalCount', 3],
    aggregate: ['aggregate { count sum { pages } }', { count: 3, sum: { pages: 600 } }],
    __typename: ['__typename', 'BookConnection'],
  } as const
  const names = Object.keys(parts) as (keyof typeof parts)[]
  const places: [string, (selection: string) => string, (connection: unknown) => unknown][] = [
    ['root', (s) => `{ x: bookCollection(first: 2, filter: {authorId: {eq: 1}}) { ${s} } }`, (c) => ({ x: c })],
    ['nested', (s) => `{ authorCollection(first: 1) { edges { node { bookCollection(first: 2) { ${s} } } } } }`, (c) => ({ authorCollection: { edges: [{ node: { bookCollection: c } }] } })],
    ['function', (s) => `{ booksBy(author: 1, first: 2) { ${s} } }`, (c) => ({ booksBy: c })],
    ['mutation records', (s) => `mutation { updateAuthorCollection(set: {name: "Ann"}, filter: {id: {eq: 1}}) { records { bookCollection(first: 2) { ${s} } } } }`, (c) => ({ updateAuthorCollection: { records: [{ bookCollection: c }] } })],
  ]
  for (const [place, query, wrap] of places) {
    for (let mask = 1; mask < 1 << names.length; mask++) {
      const chosen = names.filter((_, i) => mask & (1 << i))
      const expected = Object.fromEntries(chosen.map((k) => [k, parts[k][1]]))
      t.strictSame(await p.gql(query(chosen.map((k) => parts[k][0]).join(' '))), { data: wrap(expected) }, `${place}: ${chosen.join(' ')}`)
    }
  }
  t.strictSame(await p.gql(`{ bookCollection(filter: {authorId: {eq: 9}}) { __typename totalCount edges { cursor } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } aggregate { count max { title } } } }`), {
    data: {
      bookCollection: {
        __typename: 'BookConnection',
        totalCount: 0,
        edges: [],
        pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null },
        aggregate: { count: 0, max: { title: null } },
      },
    },
  }, 'an empty collection still answers every field')
  t.strictSame(await p.gql(`{ bookCollection(first: 1) { t1: totalCount a1: aggregate { count } t2: totalCount a2: aggregate { min { pages } max { pages } } edges { node { id } } } }`), {
    data: { bookCollection: { t1: 4, a1: { count: 4 }, t2: 4, a2: { min: { pages: 50 }, max: { pages: 300 } }, edges: [{ node: { id: 1 } }] } },
  }, 'aliases of totalCount and aggregate')
  t.strictSame(await p.gql(`{ authorCollection { edges { node { name bookCollection(filter: {pages: {gt: 60}}) { totalCount aggregate { avg { pages } } } } } } }`), {
    data: {
      authorCollection: {
        edges: [
          { node: { name: 'Ann', bookCollection: { totalCount: 3, aggregate: { avg: { pages: 200 } } } } },
          { node: { name: 'Bob', bookCollection: { totalCount: 0, aggregate: { avg: { pages: null } } } } },
        ],
      },
    },
  })
})

t.test('pageInfo (pg_graphql page_info.out and pagination_cursor_nulls.out)', async (t) => {
  const p = await graphqlProject(t, `
    create table account(id int primary key, is_verified bool);
    create table scored(id int primary key, score int);
    insert into scored values (1, 10), (2, null), (3, 20), (4, null);
    create table parent(id int primary key);
    create table child(id int primary key, parent_id int references parent(id));
    insert into parent values (1), (2);
    insert into child select g, 1 from generate_series(1, 10) g;
  `)
  const info = 'pageInfo { hasNextPage hasPreviousPage startCursor endCursor }'
  const page = async (args: string) => ((await p.gql(`{ accountCollection${args} { ${info} edges { cursor node { id } } } }`)) as { data: unknown }).data
  const edges = (...ids: number[]) => ids.map((id) => ({ cursor: Buffer.from(`[${id}]`).toString('base64'), node: { id } }))
  const cursor = (id: number) => Buffer.from(`[${id}]`).toString('base64')
  const expect = (ids: number[], hasNextPage: boolean, hasPreviousPage: boolean) => ({
    accountCollection: {
      pageInfo: { hasNextPage, hasPreviousPage, startCursor: ids.length ? cursor(ids[0]!) : null, endCursor: ids.length ? cursor(ids.at(-1)!) : null },
      edges: edges(...ids),
    },
  })
  t.strictSame(await page(''), expect([], false, false), 'an empty collection')
  await p.sql(`insert into account(id) select generate_series(1, 10)`)
  t.strictSame(await page('(first: 5)'), expect([1, 2, 3, 4, 5], true, false))
  t.strictSame(await page('(first: 5, after: "WzJd")'), expect([3, 4, 5, 6, 7], true, true))
  t.strictSame(await page('(first: 5, after: "Wzdd")'), expect([8, 9, 10], false, true))
  t.strictSame(await page('(last: 5)'), expect([6, 7, 8, 9, 10], false, true))
  t.strictSame(await page('(last: 5, before: "Wzdd")'), expect([2, 3, 4, 5, 6], true, true))
  t.strictSame(await page('(last: 5, before: "WzJd")'), expect([1], true, false))
  t.strictSame(await page('(first: 2, offset: 0)'), expect([1, 2], true, false))
  t.strictSame(await page('(first: 2, offset: 1)'), expect([2, 3], true, true))
  t.strictSame(await page('(first: 2, offset: 1, after: "Wzdd")'), expect([9, 10], false, true))
  t.strictSame(await page('(first: 2, offset: 2, after: "Wzdd")'), expect([10], false, true))
  // Past the end: the page is empty while the set is not, so the set's first row is not on it.
  t.strictSame(await page('(first: 2, after: "WzEwXQ==")'), expect([], false, true))
  t.strictSame(await page('(first: 2, offset: 20)'), expect([], false, true))
  t.strictSame(await page('(last: 2, before: "WzFd")'), expect([], true, false))
  t.strictSame(await page('(first: 2, offset: 1, after: "WzBd")'), expect([2, 3], true, true), 'a cursor before every row, and an offset')
  t.strictSame(await page('(first: 0)'), expect([], true, true), 'first: 0 leaves rows on both sides')
  t.strictSame(await page('(last: 0, before: "WzVd")'), expect([], true, true))
  t.strictSame(await p.gql(`{ accountCollection(last: 2, offset: 2) { edges { node { id } } } }`), fails('"offset" may only be used with "first" and "after"'))
  t.strictSame(await p.gql(`{ accountCollection(before: "WzJd", offset: 2) { edges { node { id } } } }`), fails('"offset" may only be used with "first" and "after"'))

  // Each pageInfo field alone (the page is not aggregated by any of them alone).
  for (const [args, expected] of [
    ['(after: "WzFd")', { hasNextPage: false, hasPreviousPage: true, startCursor: cursor(2), endCursor: cursor(10) }],
    ['(first: 3, after: "WzFd")', { hasNextPage: true, hasPreviousPage: true, startCursor: cursor(2), endCursor: cursor(4) }],
    ['(last: 3, before: "WzVd")', { hasNextPage: true, hasPreviousPage: true, startCursor: cursor(2), endCursor: cursor(4) }],
    ['(first: 3, offset: 8)', { hasNextPage: false, hasPreviousPage: true, startCursor: cursor(9), endCursor: cursor(10) }],
  ] as const) {
    for (const [name, value] of Object.entries(expected)) {
      t.strictSame(await p.gql(`{ accountCollection${args} { pageInfo { ${name} } } }`), { data: { accountCollection: { pageInfo: { [name]: value } } } }, `${args} ${name}`)
    }
    t.strictSame(await p.gql(`{ accountCollection${args} { pageInfo { __typename } } }`), { data: { accountCollection: { pageInfo: { __typename: 'PageInfo' } } } })
  }

  // Nested, per parent row.
  t.strictSame(await p.gql(`{ parentCollection { edges { node { id childCollection(first: 2, after: "WzNd") { pageInfo { hasPreviousPage hasNextPage } edges { node { id } } } } } } }`), {
    data: {
      parentCollection: {
        edges: [
          { node: { id: 1, childCollection: { pageInfo: { hasPreviousPage: true, hasNextPage: true }, edges: [{ node: { id: 4 } }, { node: { id: 5 } }] } } },
          { node: { id: 2, childCollection: { pageInfo: { hasPreviousPage: false, hasNextPage: false }, edges: [] } } },
        ],
      },
    },
  })
  t.strictSame(await p.gql(`{ parentCollection(first: 1) { edges { node { childCollection(last: 3, before: "WzNd") { pageInfo { hasPreviousPage hasNextPage startCursor } } } } } }`), {
    data: { parentCollection: { edges: [{ node: { childCollection: { pageInfo: { hasPreviousPage: false, hasNextPage: true, startCursor: cursor(1) } } } }] } },
  })

  // Nulls in the order (pagination_cursor_nulls.out).
  const scored = async (args: string, selection = 'edges { node { id score } }') => (await p.gql(`{ scoredCollection${args} { ${selection} } }`)) as { data: { scoredCollection: unknown } }
  const nodes = (...rows: [number, number | null][]) => rows.map(([id, score]) => ({ node: { id, score } }))
  t.strictSame(await scored('(first: 2, orderBy: [{score: AscNullsLast}])', 'pageInfo { hasNextPage endCursor } edges { node { id score } }'), {
    data: { scoredCollection: { pageInfo: { hasNextPage: true, endCursor: 'WzIwLCAzXQ==' }, edges: nodes([1, 10], [3, 20]) } },
  })
  t.strictSame(await scored('(first: 2, after: "WzIwLCAzXQ==", orderBy: [{score: AscNullsLast}])', 'pageInfo { hasNextPage } edges { node { id score } }'), {
    data: { scoredCollection: { pageInfo: { hasNextPage: false }, edges: nodes([2, null], [4, null]) } },
  })
  t.strictSame(await scored('(first: 1, after: "WzEwLCAxXQ==", orderBy: [{score: AscNullsLast}])', 'pageInfo { hasNextPage } edges { node { id score } }'), {
    data: { scoredCollection: { pageInfo: { hasNextPage: true }, edges: nodes([3, 20]) } },
  })
  t.strictSame(await scored('(first: 2, after: "WzEwLCAxXQ==", orderBy: [{score: DescNullsLast}])'), { data: { scoredCollection: { edges: nodes([2, null], [4, null]) } } })
  t.strictSame(await scored('(last: 2, before: "WzEwLCAxXQ==", orderBy: [{score: AscNullsFirst}])'), { data: { scoredCollection: { edges: nodes([2, null], [4, null]) } } })
  t.strictSame(await scored('(first: 3, after: "W251bGwsIDJd", orderBy: [{score: AscNullsFirst}])'), { data: { scoredCollection: { edges: nodes([4, null], [1, 10], [3, 20]) } } })
  // A cursor shorter than the order compares its leading columns; a longer one is refused.
  t.strictSame(await scored('(first: 2, after: "WzEwXQ==", orderBy: [{score: AscNullsLast}])'), { data: { scoredCollection: { edges: nodes([3, 20], [2, null]) } } })
  t.strictSame(await scored('(after: "W10=")'), { data: { scoredCollection: { edges: [] } } })
  t.strictSame(await scored('(after: "WzEsIDIsIDNd", orderBy: [{score: AscNullsLast}])'), fails('orderBy clause incompatible with pagination cursor'))
})

t.test('columns named like the SQL the engine writes', async (t) => {
  const p = await graphqlProject(t, `
    create table author(id int primary key, name text not null);
    insert into author values (1, 'Ann'), (2, 'Bob');
    create table clash(id int primary key, count int, r int, n int, e int, c1 int, c2 int, "0n" int, "0e" int, author_id int references author(id));
    comment on column clash."0n" is e'@graphql({"name": "zeroN"})';
    comment on column clash."0e" is e'@graphql({"name": "zeroE"})';
    insert into clash values (1, 5, 6, 7, 8, 9, 10, 11, 12, 1), (2, 15, 16, 17, 18, 19, 20, 21, 22, 2), (3, 25, 26, 27, 28, 29, 30, 31, 32, 1);
    create view clash_view as select * from clash;
    create view clash_pair as select id, id as other_id from clash;
    comment on view clash_view is e'@graphql({"primary_key_columns": ["id"]})';
    comment on column clash_view."0n" is e'@graphql({"name": "zeroN"})';
    comment on column clash_view."0e" is e'@graphql({"name": "zeroE"})';
    comment on view clash_pair is e'@graphql({"primary_key_columns": ["id"], "foreign_keys": [{"local_columns": ["other_id"], "foreign_name": "other", "local_name": "pairs", "foreign_schema": "public", "foreign_table": "clash_view", "foreign_columns": ["id"]}]})';
    create table computed(id int primary key, count int, r int, n int, e int, c1 int);
    insert into computed values (1, 5, 6, 7, 8, 9);
    create function computed_label(c computed) returns text stable language sql as $$ select 'label ' || c.count $$;
  `)
  const columns = 'id count r n e c1 c2 zeroN zeroE'
  const row1 = { id: 1, count: 5, r: 6, n: 7, e: 8, c1: 9, c2: 10, zeroN: 11, zeroE: 12 }
  const row2 = { id: 2, count: 15, r: 16, n: 17, e: 18, c1: 19, c2: 20, zeroN: 21, zeroE: 22 }
  const row3 = { id: 3, count: 25, r: 26, n: 27, e: 28, c1: 29, c2: 30, zeroN: 31, zeroE: 32 }
  t.strictSame(await p.gql(`{ clashCollection(first: 2, offset: 1) { pageInfo { hasNextPage hasPreviousPage } edges { node { ${columns} author { name } } } } }`), {
    data: { clashCollection: { pageInfo: { hasNextPage: false, hasPreviousPage: true }, edges: [{ node: { ...row2, author: { name: 'Bob' } } }, { node: { ...row3, author: { name: 'Ann' } } }] } },
  }, 'a numbered page with a relation')
  t.strictSame(await p.gql(`{ authorCollection { edges { node { name clashCollection(first: 1) { pageInfo { hasNextPage } edges { node { ${columns} } } } } } } }`), {
    data: {
      authorCollection: {
        edges: [
          { node: { name: 'Ann', clashCollection: { pageInfo: { hasNextPage: true }, edges: [{ node: row1 }] } } },
          { node: { name: 'Bob', clashCollection: { pageInfo: { hasNextPage: false }, edges: [{ node: row2 }] } } },
        ],
      },
    },
  })
  t.strictSame(await p.gql(`{ clash_pairCollection(first: 1) { edges { node { id other { ${columns} } } } } }`), {
    data: { clash_pairCollection: { edges: [{ node: { id: 1, other: row1 } }] } },
  }, 'a to-one relation to a view (first match)')
  t.strictSame(await p.gql(`{ clashByPk(id: 1) { ${columns} author { name } } }`), { data: { clashByPk: { ...row1, author: { name: 'Ann' } } } })
  t.strictSame(await p.gql(`mutation { updateclashCollection(set: {count: 5}, filter: {id: {eq: 1}}) { records { ${columns} author { name clashCollection(first: 1) { __typename edges { node { count } } } } } } }`), {
    data: { updateclashCollection: { records: [{ ...row1, author: { name: 'Ann', clashCollection: { __typename: 'clashConnection', edges: [{ node: { count: 5 } }] } } }] } },
  })
  t.strictSame(await p.gql(`{ computedCollection(first: 1) { pageInfo { hasNextPage } edges { node { id count r n e c1 computed_label } } } }`), {
    data: { computedCollection: { pageInfo: { hasNextPage: false }, edges: [{ node: { id: 1, count: 5, r: 6, n: 7, e: 8, c1: 9, computed_label: 'label 5' } }] } },
  }, 'a row read whole for its computed field')
})

t.test('a column named count on both sides of a relation (issue 26 item 7)', async (t) => {
  const p = await graphqlProject(t, `
    create table parent(id int primary key, count int not null);
    create table child(id int primary key, parent_id int references parent(id), count int not null);
    insert into parent values (1, 5);
    insert into child values (1, 1, 1), (2, 1, 2);
  `)
  t.strictSame(await p.gql(`{ parentCollection { edges { node { count childCollection { edges { node { count parent { count } } } } } } } }`), {
    data: { parentCollection: { edges: [{ node: { count: 5, childCollection: { edges: [{ node: { count: 1, parent: { count: 5 } } }, { node: { count: 2, parent: { count: 5 } } }] } } }] } },
  }, 'one-to-many, and many-to-one inside it')
  // A mutation's nested reads see the rows as they were before it (pg_graphql's issue_337), so the parent's own.
  t.strictSame(await p.gql(`mutation { updatechildCollection(set: {count: 3}, filter: {id: {eq: 1}}) { records { count parent { count } } } }`), {
    data: { updatechildCollection: { records: [{ count: 3, parent: { count: 5 } }] } },
  }, 'a mutation\'s records, many-to-one')
  t.strictSame(await p.gql(`mutation { updateparentCollection(set: {count: 6}, filter: {id: {eq: 1}}) { records { count childCollection { edges { node { count } } } } } }`), {
    data: { updateparentCollection: { records: [{ count: 6, childCollection: { edges: [{ node: { count: 3 } }, { node: { count: 2 } }] } }] } },
  }, 'a mutation\'s records, one-to-many')
})

// A row read whole (a computed field's argument, a mutation's returned row, a
// distinct row, a function's row) is named by its table alias; a bare name is
// a column first in PostgreSQL, so a column named like the alias took its
// place, and `.count` of a number is count(number): 1.
t.test('columns named like the engine\'s table aliases', async (t) => {
  const p = await graphqlProject(t, `
    comment on schema public is e'@graphql({"distinctOn": {"enabled": true}, "functionShapes": {"enabled": true}})';
    create table holder(id int primary key, count int not null, a1 int, a2 int, x2 int, x3 int, x4 int, f1 int);
    create table item(id int primary key, holder_id int references holder(id), count int not null, a1 int, a2 int, x2 int, x3 int);
    insert into holder values (1, 5, 0, 0, 0, 0, 0, null);
    insert into item values (1, 1, 7, 0, 0, 0, 0);
    create function holder_label(h holder) returns text stable language sql as $$ select 'holder ' || h.count $$;
    create function item_label(i item) returns text stable language sql as $$ select 'item ' || i.count $$;
    create function first_holder() returns holder stable language sql as $$ select * from holder order by id limit 1 $$;
  `)
  const holder = { count: 5, holder_label: 'holder 5' }
  t.strictSame(await p.gql(`{ holderByPk(id: 1) { count } }`), { data: { holderByPk: { count: 5 } } }, 'count of the row, not count(a1)')
  t.strictSame(await p.gql(`{ first_holder { count } }`), { data: { first_holder: { count: 5 } } }, 'a row whose column f1 is null is still a row')
  t.strictSame(await p.gql(`{ holderByPk(id: 1) { count holder_label } }`), { data: { holderByPk: holder } })
  t.strictSame(await p.gql(`{ first_holder { count holder_label } }`), { data: { first_holder: holder } }, 'a function\'s row')
  t.strictSame(await p.gql(`{ holderCollection { edges { node { count holder_label itemCollection { edges { node { count item_label holder { count holder_label } } } } } } } }`), {
    data: { holderCollection: { edges: [{ node: { ...holder, itemCollection: { edges: [{ node: { count: 7, item_label: 'item 7', holder } }] } } }] } },
  })
  t.strictSame(await p.gql(`{ holderCollection(distinctOn: [count]) { edges { node { count holder_label } } } }`), { data: { holderCollection: { edges: [{ node: holder }] } } })
  t.strictSame(await p.gql(`{ itemCollection(filter: {item_label: {eq: "item 7"}}) { edges { node { count holder { count holder_label } } } } }`), {
    data: { itemCollection: { edges: [{ node: { count: 7, holder } }] } },
  }, 'a computed field in a filter')
  t.strictSame(await p.gql(`mutation { updateitemCollection(set: {count: 8}, filter: {id: {eq: 1}}) { records { count item_label holder { count holder_label } } } }`), {
    data: { updateitemCollection: { records: [{ count: 8, item_label: 'item 8', holder }] } },
  })
  t.strictSame(await p.gql(`mutation { insertIntoholderCollection(objects: [{id: 2, count: 9}]) { records { count holder_label } } }`), {
    data: { insertIntoholderCollection: { records: [{ count: 9, holder_label: 'holder 9' }] } },
  })
  t.strictSame(await p.gql(`mutation { deleteFromholderCollection(filter: {id: {eq: 2}}) { records { count holder_label } } }`), {
    data: { deleteFromholderCollection: { records: [{ count: 9, holder_label: 'holder 9' }] } },
  })
})

t.test('objects wider than 50 fields', async (t) => {
  const p = await graphqlProject(t, `
    create table item(id int primary key, name text not null);
    comment on table item is e'@graphql({"totalCount": {"enabled": true}})';
    insert into item values (1, 'one');
  `)
  const keys = Array.from({ length: 60 }, (_, i) => `a${i + 1}`)
  const every = (value: unknown) => Object.fromEntries(keys.map((k) => [k, value]))
  t.strictSame(await p.gql(`{ ${keys.map((k) => `${k}: __typename`).join(' ')} }`), { data: every('Query') })
  t.strictSame(await p.gql(`{ itemCollection { edges { node { ${keys.map((k) => `${k}: name`).join(' ')} } } } }`), {
    data: { itemCollection: { edges: [{ node: every('one') }] } },
  })
  t.strictSame(await p.gql(`{ itemCollection { ${keys.map((k, i) => `${k}: ${i % 2 ? 'totalCount' : '__typename'}`).join(' ')} } }`), {
    data: { itemCollection: Object.fromEntries(keys.map((k, i) => [k, i % 2 ? 1 : 'itemConnection'])) },
  })
  t.strictSame(await p.gql(`{ x: itemCollection { edges { ${keys.map((k) => `${k}: cursor`).join(' ')} } } }`), { data: { x: { edges: [every('WzFd')] } } })
})

t.test('wrong fields when validation is off (pg_graphql texts)', async (t) => {
  const p = await graphqlProject(t, `
    comment on schema public is e'@graphql({"validation": {"enabled": false}})';
    create table item(id int primary key, name text not null);
    comment on table item is e'@graphql({"aggregate": {"enabled": true}})';
    create table plain(id int primary key);
  `)
  t.strictSame(await p.gql(`{ itemCollection { nope } }`), fails('unknown field in connection'))
  t.strictSame(await p.gql(`{ itemCollection { totalCount } }`), fails('unknown field in connection'), 'totalCount not enabled')
  t.strictSame(await p.gql(`{ plainCollection { aggregate { count } } }`), fails('enable the aggregate directive to use aggregates'))
  t.strictSame(await p.gql(`{ itemCollection { edges { nope } } }`), fails('unknown field in edge'))
  t.strictSame(await p.gql(`{ itemCollection { pageInfo { nope } } }`), fails('unknown field in pageInfo'))
  t.strictSame(await p.gql(`{ itemCollection { aggregate { nope } } }`), fails('Unknown field "nope" selected on type "itemAggregate"'))
  t.strictSame(await p.gql(`{ itemCollection { aggregate { sum { id } } } }`), { data: { itemCollection: { aggregate: { sum: { id: null } } } } })
  t.strictSame(await p.gql(`{ itemCollection { aggregate { sum { name } } } }`), fails('Unknown or invalid field "name" selected on type "itemSumAggregateResult"'))
  t.strictSame(await p.gql(`{ itemCollection { aggregate { min { nope } } } }`), fails('Unknown or invalid field "nope" selected on type "itemMinAggregateResult"'))
})
