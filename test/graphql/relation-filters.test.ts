// SPEC 2.4 `relationFilters`: a filter names a relation by its field and
// takes the related type's filter (to-one) or `some`/`every`/`none` (to-many);
// nests, combines with and/or/not, works in nested collections and mutation
// filters, binds values as parameters, and sees only the related rows the
// caller may see. Off unless turned on, per table or per schema.
import pg from 'pg'
import t from 'tap'
import { apiDatabaseOf } from '../../lib/catalogue.ts'
import { identityStatement } from '../../lib/db/request-transaction.ts'
import { type RequestIdentity } from '../../lib/roles.ts'
import { resolve, SchemaCache, type GraphqlRequest } from '../../workers/graphql/index.ts'
import { graphqlProject } from './helpers.ts'

const USER = '11111111-1111-1111-1111-111111111111'
const OTHER = '22222222-2222-2222-2222-222222222222'

const SETUP = `
  create table author (id int primary key, name text not null, private boolean not null default false, owner uuid);
  create table book (id int primary key, title text not null, genre text, author_id int references author(id),
    private boolean not null default false, owner uuid);
  create table review (id int primary key, book_id int not null references book(id), stars int not null);
  insert into author (id, name) values (1, 'Ann'), (2, 'Bob'), (3, 'Cy'), (4, 'Dee');
  insert into book (id, title, genre, author_id) values
    (1, 'A1', 'crime', 1), (2, 'A2', 'poetry', 1), (3, 'B1', 'crime', 2), (4, 'B2', null, 2), (5, 'D1', 'crime', 4), (6, 'orphan', 'poetry', null);
  insert into review values (1, 1, 5), (2, 3, 2), (3, 3, 4);
  grant select, insert, update, delete on author, book, review to anon, authenticated;
`

const names = (rows: string[]) => ({ edges: rows.map((name) => ({ node: { name } })) })
const titles = (rows: string[]) => ({ edges: rows.map((title) => ({ node: { title } })) })
const authors = (filter: string, options = {}) => [`{ authorCollection(filter: ${filter}) { edges { node { name } } } }`, options] as const
const books = (filter: string, options = {}) => [`{ bookCollection(filter: ${filter}) { edges { node { title } } } }`, options] as const

t.test('relation filters on a schema', async (t) => {
  const p = await graphqlProject(t, SETUP + `comment on schema public is e'@graphql({"relationFilters": {"enabled": true}})';`)
  const authorsWhere = async (filter: string, options = {}) => p.gql(...authors(filter, options))
  const booksWhere = async (filter: string, options = {}) => p.gql(...books(filter, options))

  t.test('to-one: the related row\'s fields', async (t) => {
    t.same(await booksWhere(`{author: {name: {eq: "Bob"}}}`), { data: { bookCollection: titles(['B1', 'B2']) } })
    t.same(await booksWhere(`{author: {name: {in: ["Ann", "Dee"]}}, genre: {eq: "crime"}}`), { data: { bookCollection: titles(['A1', 'D1']) } })
    t.same(await booksWhere(`{author: {}}`), { data: { bookCollection: titles(['A1', 'A2', 'B1', 'B2', 'D1']) } }, '{} asks only that the related row exists')
    t.same(await booksWhere(`{not: {author: {}}}`), { data: { bookCollection: titles(['orphan']) } })
    t.same(await booksWhere(`{not: {author: {name: {eq: "Ann"}}}}`), { data: { bookCollection: titles(['B1', 'B2', 'D1', 'orphan']) } },
      'a row without a related row is not one whose related row matches')
    t.same(await booksWhere(`{author: {name: {eq: null}}}`), { data: { bookCollection: titles([]) } }, 'a null operand matches nothing, as on columns')
  })

  t.test('to-many: some, every, none', async (t) => {
    t.same(await authorsWhere(`{bookCollection: {some: {genre: {eq: "crime"}}}}`), { data: { authorCollection: names(['Ann', 'Bob', 'Dee']) } })
    t.same(await authorsWhere(`{bookCollection: {none: {genre: {eq: "crime"}}}}`), { data: { authorCollection: names(['Cy']) } })
    // Bob's B2 has no genre: the collection filter would not return it, so not every book of Bob's is crime.
    t.same(await authorsWhere(`{bookCollection: {every: {genre: {eq: "crime"}}}}`), { data: { authorCollection: names(['Cy', 'Dee']) } },
      'every holds over no rows, and a null condition fails it')
    t.same(await authorsWhere(`{bookCollection: {some: {}}}`), { data: { authorCollection: names(['Ann', 'Bob', 'Dee']) } })
    t.same(await authorsWhere(`{bookCollection: {none: {}}}`), { data: { authorCollection: names(['Cy']) } })
    t.same(await authorsWhere(`{bookCollection: {every: {}}}`), { data: { authorCollection: names(['Ann', 'Bob', 'Cy', 'Dee']) } })
    t.same(await authorsWhere(`{bookCollection: {}}`), { data: { authorCollection: names(['Ann', 'Bob', 'Cy', 'Dee']) } }, 'no quantifier counts for nothing')
    t.same(await authorsWhere(`{bookCollection: {some: {genre: {eq: "crime"}}, none: {genre: {eq: "poetry"}}}}`), { data: { authorCollection: names(['Bob', 'Dee']) } },
      'quantifiers together all hold')
  })

  t.test('nests and combines with and/or/not', async (t) => {
    t.same(await authorsWhere(`{bookCollection: {some: {reviewCollection: {some: {stars: {gte: 5}}}}}}`), { data: { authorCollection: names(['Ann']) } })
    t.same(await authorsWhere(`{bookCollection: {some: {reviewCollection: {every: {stars: {gte: 3}}}, genre: {eq: "crime"}}}}`), { data: { authorCollection: names(['Ann', 'Dee']) } })
    t.same(await p.gql(`{ reviewCollection(filter: {book: {author: {name: {eq: "Bob"}}}}) { edges { node { id } } } }`), {
      data: { reviewCollection: { edges: [{ node: { id: 2 } }, { node: { id: 3 } }] } },
    })
    t.same(await p.gql(`{ reviewCollection(filter: {book: {author: {bookCollection: {some: {genre: {eq: "poetry"}}}}}}) { edges { node { id } } } }`), {
      data: { reviewCollection: { edges: [{ node: { id: 1 } }] } },
    }, 'to-one, to-one, to-many')
    t.same(await authorsWhere(`{and: [{bookCollection: {some: {genre: {eq: "crime"}}}}, {bookCollection: {some: {genre: {eq: "poetry"}}}}]}`), { data: { authorCollection: names(['Ann']) } })
    t.same(await authorsWhere(`{or: [{bookCollection: {none: {}}}, {name: {eq: "Bob"}}]}`), { data: { authorCollection: names(['Bob', 'Cy']) } })
    t.same(await authorsWhere(`{not: {bookCollection: {some: {genre: {eq: "crime"}}}}}`), { data: { authorCollection: names(['Cy']) } })
    t.same(await booksWhere(`{or: [{author: {name: {eq: "Ann"}}}, {genre: {is: NULL}}]}`), { data: { bookCollection: titles(['A1', 'A2', 'B2']) } })
  })

  t.test('in a nested collection and in mutation filters', async (t) => {
    t.same(await p.gql(`{ authorCollection(filter: {id: {lte: 2}}) { edges { node { name bookCollection(filter: {reviewCollection: {some: {}}}) { edges { node { title } } } } } } }`), {
      data: { authorCollection: { edges: [
        { node: { name: 'Ann', bookCollection: titles(['A1']) } },
        { node: { name: 'Bob', bookCollection: titles(['B1']) } },
      ] } },
    })
    t.same(await p.gql(`mutation { updatereviewCollection(set: {stars: 1}, filter: {book: {author: {name: {eq: "Bob"}}}}, atMost: 5) { affectedCount records { id stars } } }`), {
      data: { updatereviewCollection: { affectedCount: 2, records: [{ id: 2, stars: 1 }, { id: 3, stars: 1 }] } },
    })
    t.same(await p.gql(`mutation { deleteFromreviewCollection(filter: {book: {title: {eq: "A1"}}, stars: {eq: 1}}) { affectedCount } }`), {
      data: { deleteFromreviewCollection: { affectedCount: 0 } },
    })
    await p.sql(`update review set stars = 2 where id = 2; update review set stars = 4 where id = 3`)
  })

  t.test('values are parameters: one statement per shape', async (t) => {
    const db = apiDatabaseOf(p.project)
    const client = new pg.Client({ host: db.host, port: db.port, database: db.database, user: db.user, password: db.password })
    await client.connect()
    t.teardown(() => client.end())
    const cache = new SchemaCache()
    const who: RequestIdentity = { role: 'anon', claims: { role: 'anon' } }
    const ask = (request: GraphqlRequest) =>
      resolve(client, request, { cache, transaction: 'none', setup: identityStatement(who, p.project.roleTimeouts), speculationKey: who.role })
    const statements = async () =>
      (await client.query<{ parameter_types: string }>(`select parameter_types::text from pg_prepared_statements where name like 'baseplane\\_q\\_%'`)).rows
    const query = `query ($genre: String, $stars: Int) { authorCollection(filter: {bookCollection: {some: {genre: {eq: $genre}, reviewCollection: {every: {stars: {gte: $stars}}}}}}) { edges { node { name } } } }`
    t.same(await ask({ query, variables: { genre: 'crime', stars: 3 } }), { data: { authorCollection: names(['Ann', 'Dee']) } })
    t.same(await ask({ query, variables: { genre: 'crime', stars: 2 } }), { data: { authorCollection: names(['Ann', 'Bob', 'Dee']) } })
    t.same(await ask({ query, variables: { genre: "x' or true --", stars: 0 } }), { data: { authorCollection: names([]) } })
    const after = await statements()
    t.same(after.map((s) => s.parameter_types), ['{text,integer}', '{text,integer}'], 'the schema-reading first request, then one statement for every value')
  })

  t.test('refusals', async (t) => {
    t.same(await booksWhere(`{author: {title: {eq: "A1"}}}`), {
      data: null,
      errors: [{ message: 'Field "title" is not defined by type "authorFilter".' }],
    }, 'the related type\'s fields, not the filtered one\'s')
    t.same(await authorsWhere(`{bookCollection: {any: {genre: {eq: "crime"}}}}`), {
      data: null,
      errors: [{ message: 'Field "any" is not defined by type "bookListRelationFilter".' }],
    })
    t.same(await authorsWhere(`{bookCollection: {genre: {eq: "crime"}}}`), {
      data: null,
      errors: [{ message: 'Field "genre" is not defined by type "bookListRelationFilter". Did you mean "none"?' }],
    }, 'a to-many relation takes a quantifier, not the related filter itself')
    t.same(await authorsWhere(`{bookCollection: {some: [{genre: {eq: "crime"}}]}}`), {
      data: null,
      errors: [{ message: 'Expected value of type "bookFilter", found [{genre: {eq: "crime"}}].' }],
    })
    const before = await p.sql(`select id, title from book order by id`)
    t.same(await p.gql(`mutation { updatebookCollection(set: {title: "x"}, filter: {author: {nope: {eq: 1}}}, atMost: 9) { affectedCount } }`), {
      data: null,
      errors: [{ message: 'Field "nope" is not defined by type "authorFilter". Did you mean "name" or "not"?' }],
    })
    t.same((await p.sql(`select id, title from book order by id`)).rows, before.rows, 'nothing written')
  })

  t.test('with validation off, a wrong shape is still refused and the request writes nothing', async (t) => {
    await p.sql(`comment on schema public is e'@graphql({"relationFilters": {"enabled": true}, "validation": {"enabled": false}})'`)
    t.teardown(() => p.sql(`comment on schema public is e'@graphql({"relationFilters": {"enabled": true}})'`))
    const before = await p.sql(`select id, title from book order by id`)
    const twoStep = (bad: string) =>
      `mutation { a: updatebookCollection(set: {title: "changed"}, filter: {id: {eq: 1}}) { affectedCount } ` +
      `b: deleteFromauthorCollection(filter: ${bad}) { affectedCount } }`
    t.same(await p.gql(twoStep(`{bookCollection: "crime"}`)), { data: null, errors: [{ message: 'Argument "filter" has invalid value {bookCollection: "crime"}.' }] })
    t.same(await p.gql(twoStep(`{bookCollection: {some: {author: 7}}}`)), {
      data: null, errors: [{ message: 'Argument "filter" has invalid value {bookCollection: {some: {author: 7}}}.' }],
    })
    // Bob has books: deleting him breaks their foreign key after the update ran.
    t.same(await p.gql(twoStep(`{bookCollection: {some: {title: {eq: "B1"}}}}`)), {
      data: null, errors: [{ message: 'update or delete on table "author" violates foreign key constraint "book_author_id_fkey" on table "book"' }],
    })
    t.same((await p.sql(`select id, title from book order by id`)).rows, before.rows, 'the first mutation is not kept')
  })

  t.test('introspection shows the quantifiers', async (t) => {
    await p.sql(`comment on schema public is e'@graphql({"relationFilters": {"enabled": true}, "introspection": true})'`)
    t.teardown(() => p.sql(`comment on schema public is e'@graphql({"relationFilters": {"enabled": true}})'`))
    t.same(await p.gql(`{ l: __type(name: "bookListRelationFilter") { kind inputFields { name type { name } } } f: __type(name: "bookFilter") { inputFields { name type { name } } } }`), {
      data: {
        l: { kind: 'INPUT_OBJECT', inputFields: [{ name: 'every', type: { name: 'bookFilter' } }, { name: 'none', type: { name: 'bookFilter' } }, { name: 'some', type: { name: 'bookFilter' } }] },
        f: { inputFields: [
          { name: 'id', type: { name: 'IntFilter' } }, { name: 'title', type: { name: 'StringFilter' } }, { name: 'genre', type: { name: 'StringFilter' } },
          { name: 'author_id', type: { name: 'IntFilter' } }, { name: 'private', type: { name: 'BooleanFilter' } }, { name: 'owner', type: { name: 'UUIDFilter' } },
          { name: 'nodeId', type: { name: 'IDFilter' } }, { name: 'and', type: { name: null } }, { name: 'or', type: { name: null } }, { name: 'not', type: { name: 'bookFilter' } },
          { name: 'author', type: { name: 'authorFilter' } }, { name: 'reviewCollection', type: { name: 'reviewListRelationFilter' } },
        ] },
      },
    })
  })
})

t.test('off unless turned on; a table decides for itself', async (t) => {
  const p = await graphqlProject(t, SETUP)
  const refusedOn = (type: string, field: string, suggestion = '') =>
    ({ data: null, errors: [{ message: `Field "${field}" is not defined by type "${type}".${suggestion}` }] })
  const noAuthor = refusedOn('bookFilter', 'author', ' Did you mean "author_id"?')
  t.same(await p.gql(...books(`{author: {name: {eq: "Bob"}}}`)), noAuthor, 'off by default')
  t.same(await p.gql(...authors(`{bookCollection: {some: {}}}`)), refusedOn('authorFilter', 'bookCollection'))

  await p.sql(`comment on table book is e'@graphql({"relationFilters": {"enabled": true}})'`)
  t.same(await p.gql(...books(`{author: {name: {eq: "Bob"}}}`)), { data: { bookCollection: titles(['B1', 'B2']) } }, 'on for book only')
  t.same(await p.gql(...books(`{reviewCollection: {some: {stars: {gt: 3}}}}`)), { data: { bookCollection: titles(['A1', 'B1']) } })
  t.same(await p.gql(...authors(`{bookCollection: {some: {}}}`)), refusedOn('authorFilter', 'bookCollection'), 'author keeps its filter')
  t.same(await p.gql(...books(`{author: {bookCollection: {some: {}}}}`)), refusedOn('authorFilter', 'bookCollection'),
    'nesting goes on only through tables that have it on')

  await p.sql(`comment on schema public is e'@graphql({"relationFilters": {"enabled": true}})';
    comment on table book is e'@graphql({"relationFilters": {"enabled": false}})'`)
  t.same(await p.gql(...authors(`{bookCollection: {some: {author: {name: {eq: "Ann"}}}}}`)), noAuthor, 'a table turns off what its schema turns on')
  t.same(await p.gql(...authors(`{bookCollection: {some: {title: {eq: "B2"}}}}`)), { data: { authorCollection: names(['Bob']) } },
    'the related table need not have it on to be filtered by')
})

t.test('row level security: only the related rows the caller may see count', async (t) => {
  const p = await graphqlProject(t, SETUP + `
    comment on schema public is e'@graphql({"relationFilters": {"enabled": true}})';
    update author set private = true, owner = '${USER}' where name = 'Dee';
    update book set private = true, owner = '${USER}' where title = 'A2';
    alter table author enable row level security;
    alter table book enable row level security;
    create policy visible on author for select using (not private or owner = auth.uid());
    create policy visible on book for select using (not private or owner = auth.uid());
    create policy edit on book for update using (true);
  `)
  const everyCrime = authors(`{bookCollection: {every: {genre: {eq: "crime"}}}}`)
  const byDee = books(`{author: {name: {eq: "Dee"}}}`)
  const anon = { role: 'anon' }
  const user = { role: 'authenticated', sub: USER }
  const other = { role: 'authenticated', sub: OTHER }

  // Ann's poetry book is hidden from anon, so every book anon sees of Ann's is crime; Dee is hidden.
  t.same(await p.gql(everyCrime[0], anon), { data: { authorCollection: names(['Ann', 'Cy']) } })
  t.same(await p.gql(everyCrime[0], other), { data: { authorCollection: names(['Ann', 'Cy']) } })
  t.same(await p.gql(everyCrime[0], user), { data: { authorCollection: names(['Cy', 'Dee']) } })

  // D1 is public but its author is not: to anon it has no author that matches.
  t.same(await p.gql(byDee[0], anon), { data: { bookCollection: titles([]) } })
  t.same(await p.gql(byDee[0], other), { data: { bookCollection: titles([]) } })
  t.same(await p.gql(byDee[0], user), { data: { bookCollection: titles(['D1']) } })
  t.same(await p.gql(...books(`{not: {author: {}}}`, anon)), { data: { bookCollection: titles(['D1', 'orphan']) } }, 'a hidden related row is no row')

  t.same(await p.gql(...authors(`{bookCollection: {some: {genre: {eq: "poetry"}}}}`, anon)), { data: { authorCollection: names([]) } })
  t.same(await p.gql(...authors(`{bookCollection: {some: {genre: {eq: "poetry"}}}}`, user)), { data: { authorCollection: names(['Ann']) } })

  // A write's filter sees as the writer does.
  t.same(await p.gql(`mutation { deleteFromreviewCollection(filter: {book: {author: {name: {eq: "Ann"}}}, stars: {lt: 0}}) { affectedCount } }`, anon), {
    data: { deleteFromreviewCollection: { affectedCount: 0 } },
  })
  t.same(await p.gql(`mutation { updatebookCollection(set: {genre: "verse"}, filter: {author: {name: {eq: "Dee"}}}) { records { title genre } } }`, anon), {
    data: { updatebookCollection: { records: [] } },
  })
  t.same(await p.gql(`mutation { updatebookCollection(set: {genre: "verse"}, filter: {author: {name: {eq: "Dee"}}}) { records { title genre } } }`, user), {
    data: { updatebookCollection: { records: [{ title: 'D1', genre: 'verse' }] } },
  })
})
