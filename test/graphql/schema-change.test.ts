// The schema follows the database: DDL, grants and comments show on the next
// request; temporary tables and REFRESH MATERIALIZED VIEW rebuild nothing; a
// steady request rebuilds nothing. The library runs inside the caller's open
// transaction (seeing its uncommitted DDL) or in its own, and rolls back to
// its savepoint on failure.
import pg from 'pg'
import t from 'tap'
import { apiDatabaseOf, ownerUrlOf } from '../../lib/catalogue.ts'
import { beginStatement } from '../../lib/db/request-transaction.ts'
import { resolve, SchemaCache } from '../../workers/graphql/index.ts'
import { graphqlProject } from './helpers.ts'

t.test('schema changes and the library contract', async (t) => {
  const p = await graphqlProject(t, `create table a (id int primary key); create materialized view mv as select 1 as x;`)

  t.test('changes show on the next request; steady requests rebuild nothing', async (t) => {
    t.strictSame(await p.gql(`{ aCollection { edges { node { id } } } }`), { data: { aCollection: { edges: [] } } })
    const builds = p.cache.builds
    await p.gql(`{ aCollection { edges { node { id } } } }`)
    await p.gql(`{ __typename }`)
    t.equal(p.cache.builds, builds, 'no rebuild while nothing changes')
    await p.sql(`create temp table scratch (id int primary key); drop table scratch; refresh materialized view mv`)
    await p.gql(`{ __typename }`)
    t.equal(p.cache.builds, builds, 'temporary tables and REFRESH MATERIALIZED VIEW rebuild nothing')
    await p.sql(`alter table a add column label text; insert into a values (1, 'one')`)
    t.strictSame(await p.gql(`{ aCollection { edges { node { id label } } } }`), { data: { aCollection: { edges: [{ node: { id: 1, label: 'one' } }] } } })
    await p.sql(`comment on column a.label is e'@graphql({"name": "title"})'`)
    t.strictSame(await p.gql(`{ aCollection { edges { node { title } } } }`), { data: { aCollection: { edges: [{ node: { title: 'one' } }] } } })
    await p.sql(`revoke select on a from anon`)
    t.strictSame(await p.gql(`{ aCollection { edges { node { id } } } }`, { role: 'anon' }), {
      data: null,
      errors: [{ message: 'Cannot query field "aCollection" on type "Query".' }],
    })
    await p.sql(`create function double_it(n int) returns int language sql immutable as 'select n * 2'`)
    t.strictSame(await p.gql(`{ doubleIt: double_it(n: 21) }`), { data: { doubleIt: 42 } })
  })

  t.test('library: inside the caller transaction, its DDL seen, failure rolled back to the savepoint', async (t) => {
    const db = apiDatabaseOf(p.project)
    const client = new pg.Client({ host: db.host, port: db.port, database: db.database, user: db.user, password: db.password })
    await client.connect()
    t.teardown(() => client.end())
    const cache = new SchemaCache()
    // Own transaction when none is open; the client's current role is used.
    await client.query(`set role service_role`)
    t.strictSame(await resolve(client, { query: `mutation { insertIntoaCollection(objects: [{id: 2}]) { affectedCount } }` }, { cache }), {
      data: { insertIntoaCollection: { affectedCount: 1 } },
    })
    t.equal((await p.sql(`select count(*)::int as n from a`)).rows[0].n, 2, 'committed by its own transaction')
    await client.query(`reset role`)

    await client.query(beginStatement({ role: 'service_role', claims: { role: 'service_role' } }, p.project.roleTimeouts))
    await client.query(`insert into a values (3)`)
    t.strictSame(await resolve(client, { query: `mutation { insertIntoaCollection(objects: [{id: 3}]) { affectedCount } }` }, { cache }), {
      data: null,
      errors: [{ message: 'duplicate key value violates unique constraint "a_pkey"' }],
    })
    t.strictSame(await resolve(client, { query: `{ aCollection { edges { node { id } } } }` }, { cache }), {
      data: { aCollection: { edges: [{ node: { id: 1 } }, { node: { id: 2 } }, { node: { id: 3 } }] } },
    }, 'the caller transaction is intact and its own writes are seen')
    await client.query(`rollback`)

    // Uncommitted DDL of the caller's transaction is seen, by this connection only.
    const owner = new pg.Client({ connectionString: ownerUrlOf(p.project) })
    await owner.connect()
    t.teardown(() => owner.end())
    await owner.query(`begin`)
    await owner.query(`create table b (id int primary key)`)
    t.strictSame(await resolve(owner, { query: `{ bCollection { edges { node { id } } } }` }, { cache }), { data: { bCollection: { edges: [] } } })
    t.strictSame(await p.gql(`{ bCollection { edges { node { id } } } }`), {
      data: null,
      errors: [{ message: 'Cannot query field "bCollection" on type "Query". Did you mean "aCollection"?' }],
    }, 'other connections do not see it before commit')
    await owner.query(`rollback`)
    t.strictSame(await resolve(client, { query: `{ __typename }`, variables: [] as unknown as Record<string, unknown> }, { cache }), {
      data: null,
      errors: [{ message: 'Variables must be provided as an Object where each property is a variable value. Perhaps look to see if an unparsed JSON string was provided.' }],
    })
  })
})
