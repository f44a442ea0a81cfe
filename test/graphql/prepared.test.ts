// Query statements are prepared once per connection, shape and role, and
// executed with the request's values: the same shape with other values reuses
// the statement, another role gets its own, old ones are deallocated, and a
// connection whose statements were dropped behind our back still answers.
import pg from 'pg'
import t from 'tap'
import { apiDatabaseOf } from '../../lib/catalogue.ts'
import { identityStatement } from '../../lib/db/request-transaction.ts'
import { type RequestIdentity } from '../../lib/roles.ts'
import { resolve, SchemaCache, type GraphqlRequest } from '../../workers/graphql/index.ts'
import { graphqlProject } from './helpers.ts'

const ANON: RequestIdentity = { role: 'anon', claims: { role: 'anon' } }
const SERVICE: RequestIdentity = { role: 'service_role', claims: { role: 'service_role' } }

t.test('prepared query statements', async (t) => {
  const p = await graphqlProject(t, `
    create table item (id int primary key, label text not null, tags text[] not null default '{}');
    insert into item select g, 'item ' || g, array['t' || (g % 3)] from generate_series(1, 30) g;
    insert into item values (31, e'it''s a \\\\ back\\\\slash', '{}');
    grant select on item to anon;`)
  const db = apiDatabaseOf(p.project)
  const client = new pg.Client({ host: db.host, port: db.port, database: db.database, user: db.user, password: db.password })
  await client.connect()
  t.teardown(() => client.end())
  const cache = new SchemaCache()
  // Exactly the HTTP service's call (workers/graphql/worker.ts): one round trip per query when the schema is known.
  const ask = (request: GraphqlRequest, who: RequestIdentity = ANON) =>
    resolve(client, request, { cache, transaction: 'none', setup: identityStatement(who, p.project.roleTimeouts), speculationKey: who.role })
  const statements = async () =>
    (await client.query<{ name: string; parameter_types: string }>(
      `select name, parameter_types::text from pg_prepared_statements where name like 'baseplane\\_q\\_%' order by prepare_time`,
    )).rows

  const byLabel = `query ($label: String!) { itemCollection(filter: {label: {eq: $label}}) { edges { node { id label } } } }`

  t.test('one statement per shape, values bound as parameters', async (t) => {
    t.strictSame(await ask({ query: byLabel, variables: { label: 'item 7' } }), { data: { itemCollection: { edges: [{ node: { id: 7, label: 'item 7' } }] } } })
    t.equal((await statements()).length, 1, 'the first request reads the schema first, then runs the data statement')
    t.strictSame(await ask({ query: byLabel, variables: { label: 'item 8' } }), { data: { itemCollection: { edges: [{ node: { id: 8, label: 'item 8' } }] } } })
    t.equal((await statements()).length, 2, 'later ones run one statement that also reads the schema key')
    // Quotes and backslashes travel as values, not as SQL.
    t.strictSame(await ask({ query: byLabel, variables: { label: "it's a \\ back\\slash" } }), {
      data: { itemCollection: { edges: [{ node: { id: 31, label: "it's a \\ back\\slash" } }] } },
    })
    t.strictSame(await ask({ query: byLabel, variables: { label: "x' or true --" } }), { data: { itemCollection: { edges: [] } } })
    const after = await statements()
    t.equal(after.length, 2, 'no new statement for other values')
    t.strictSame(after.map((s) => s.parameter_types), ['{text}', '{text}'])
  })

  t.test('lists, cursors and another role', async (t) => {
    const page = await ask({ query: `{ itemCollection(first: 2, filter: {id: {in: [3, 4, 5]}, tags: {contains: ["t1"]}}) { edges { cursor node { id } } } }` })
    t.strictSame(page, { data: { itemCollection: { edges: [{ cursor: 'WzRd', node: { id: 4 } }] } } })
    const next = `query ($after: Cursor) { itemCollection(first: 2, after: $after) { edges { node { id } } } }`
    t.strictSame(await ask({ query: next, variables: { after: 'WzRd' } }), { data: { itemCollection: { edges: [{ node: { id: 5 } }, { node: { id: 6 } }] } } })
    t.strictSame(await ask({ query: next, variables: { after: 'WzI5XQ==' } }), { data: { itemCollection: { edges: [{ node: { id: 30 } }, { node: { id: 31 } }] } } })
    const before = (await statements()).length
    t.strictSame(await ask({ query: next, variables: { after: 'WzI5XQ==' } }, SERVICE), { data: { itemCollection: { edges: [{ node: { id: 30 } }, { node: { id: 31 } }] } } })
    t.equal((await statements()).length, before + 1, 'the same shape as another role is its own statement')
  })

  t.test('statements dropped behind our back are prepared again', async (t) => {
    await client.query('deallocate all')
    t.strictSame(await ask({ query: byLabel, variables: { label: 'item 9' } }), { data: { itemCollection: { edges: [{ node: { id: 9, label: 'item 9' } }] } } })
    t.equal((await statements()).length, 1)
    await client.query('discard all')
    // No speculation key: the ordinary path (schema read first) recovers as well.
    t.strictSame(await resolve(client, { query: byLabel, variables: { label: 'item 10' } }, { cache, setup: identityStatement(ANON, p.project.roleTimeouts) }), {
      data: { itemCollection: { edges: [{ node: { id: 10, label: 'item 10' } }] } },
    })
    t.equal((await statements()).length, 1)
  })

  t.test('a connection keeps at most 100 statements', async (t) => {
    for (let n = 1; n <= 110; n++) {
      // Each alias is a key of the statement's JSON: 110 shapes.
      t.strictSame(await ask({ query: `{ a${n}: itemCollection(first: 1) { edges { node { id } } } }` }), { data: { [`a${n}`]: { edges: [{ node: { id: 1 } }] } } })
    }
    const kept = await statements()
    t.ok(kept.length <= 101, `${kept.length} statements kept`)
    t.ok(kept.length >= 100)
  })

  t.test('an error in a prepared query answers the error; nothing stays set on the connection', async (t) => {
    await p.sql(`create function boom(item) returns int language sql stable as 'select 1 / ($1.id - 5)'; grant execute on function boom(item) to anon`)
    const query = `query ($id: Int!) { itemCollection(filter: {id: {eq: $id}}) { edges { node { id boom } } } }`
    t.strictSame(await ask({ query, variables: { id: 4 } }), { data: { itemCollection: { edges: [{ node: { id: 4, boom: -1 } }] } } })
    t.strictSame(await ask({ query, variables: { id: 5 } }), { data: null, errors: [{ message: 'division by zero' }] })
    t.strictSame(await ask({ query, variables: { id: 6 } }), { data: { itemCollection: { edges: [{ node: { id: 6, boom: 1 } }] } } })
    // Role and claims were local to each request's (implicit) transaction, failed or not.
    t.strictSame((await client.query(`select current_user as role, coalesce(current_setting('request.jwt.claims', true), '') as claims`)).rows, [{ role: db.user, claims: '' }])
  })
})
