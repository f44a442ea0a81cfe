// The ceilings a document meets before anything costly runs (limits.ts):
// tokens and nesting on the text, fields and aliases on the parsed document,
// each refused with its figure, each passed just under it. Everything goes
// through the whole platform as the anon key, as anyone with that key could
// send it.
import pg from 'pg'
import t from 'tap'
import { ownerUrlOf } from '../../lib/catalogue.ts'
import { request } from '../helpers/http.ts'
import { startTestPlatform } from '../helpers/platform.ts'

interface GraphqlBody {
  data: unknown
  errors?: Array<{ message: string }>
}

const platform = await startTestPlatform(t)
const project = await platform.createProject({ name: 'Document limits' })
const owner = new pg.Client({ connectionString: ownerUrlOf(project.record) })
await owner.connect()
t.teardown(() => owner.end())
await owner.query(`
  create table account (id int primary key, email text);
  grant select on account to anon;
  insert into account values (1, 'a@example.com'), (2, 'b@example.com'), (3, 'c@example.com');
`)

const gql = async (query: string) => {
  const reply = await request<GraphqlBody>(`${project.baseUrl}/graphql/v1`, { headers: { apikey: project.anonKey }, body: { query } })
  return { status: reply.status, body: reply.json }
}
const refused = (message: string) => ({ status: 200, body: { data: null, errors: [{ message }] } })
const repeat = (n: number, item: (i: number) => string) => Array.from({ length: n }, (_, i) => item(i)).join(' ')

// The schema is built on a project's first request; build it before anything is timed.
t.same(await gql('{ __typename }'), { status: 200, body: { data: { __typename: 'Query' } } })

t.test('10,000 aliases are refused before parsing, in milliseconds', async (t) => {
  const documents = {
    typename: `{ ${repeat(10_000, (i) => `a${i}: __typename`)} }`,
    collection: `{ ${repeat(10_000, (i) => `a${i}: accountCollection(first: 1) { edges { node { id email } } }`)} }`,
  }
  t.ok(documents.collection.length > 600_000, 'the collection document is over 600 KB')
  for (const [name, query] of Object.entries(documents)) {
    const started = performance.now()
    const answer = await gql(query)
    const elapsed = performance.now() - started
    t.same(answer, refused('Query is too large: it has more than 15000 tokens'), name)
    // The message shows where it stopped: at the lexer's 15,001st token, before
    // parse, validation and planning, which took 1 to 2 s of server time for
    // these documents before the ceiling. Refused, the whole HTTP exchange
    // takes under 200 ms here (mostly moving 600 KB), the refusal itself a few
    // ms; 1 s leaves room for a loaded 2-core machine and is still less than
    // parsing, validating and planning the whole document costs.
    t.ok(elapsed < 1000, `${name}: answered in ${Math.round(elapsed)} ms`)
  }
})

t.test('tokens: 15,000 pass, 15,001 are refused', async (t) => {
  // 26 tokens around the list (commas are not tokens in GraphQL), then one per id.
  const withIds = (n: number) =>
    `{ accountCollection(filter: {id: {in: [${Array.from({ length: n }, (_, i) => i + 1).join(', ')}]}}) { edges { node { id } } } }`
  t.same(await gql(withIds(14_974)), { status: 200, body: { data: { accountCollection: { edges: [{ node: { id: 1 } }, { node: { id: 2 } }, { node: { id: 3 } }] } } } })
  t.same(await gql(withIds(14_975)), refused('Query is too large: it has more than 15000 tokens'))
})

t.test('nesting: 128 levels pass, 129 are refused, thousands never reach the parser', async (t) => {
  // `{` and `(` of the root field, two levels per `and`, then the innermost filter object.
  const nested = (levels: number, innermost: string) =>
    `{ accountCollection(filter: ${'{and: ['.repeat(levels)}${innermost}${']}'.repeat(levels)}) { edges { node { id } } } }`
  t.same(await gql(nested(62, '{id: {eq: 2}}')), { status: 200, body: { data: { accountCollection: { edges: [{ node: { id: 2 } }] } } } })
  t.same(await gql(nested(62, '{id: {in: [2]}}')), refused('Query is too deep: braces, brackets and parentheses nest more than 128 levels'))
  // Deep enough to overflow graphql-js's recursive parser's stack.
  t.same(await gql(`{${'a{'.repeat(5000)}b${'}'.repeat(5001)}`), refused('Query is too deep: braces, brackets and parentheses nest more than 128 levels'))
})

t.test('aliases and fields: 500 aliases and 2,000 fields pass, one more of either is refused', async (t) => {
  const collection = (i: number) => `a${i}: accountCollection(first: 1) { edges { node { id } } }`
  const passed = await gql(`{ ${repeat(500, collection)} }`)
  t.equal(passed.status, 200)
  const data = (passed.body.data ?? {}) as Record<string, unknown>
  t.same({ errors: passed.body.errors, count: Object.keys(data).length, last: data.a499 }, { errors: undefined, count: 500, last: { edges: [{ node: { id: 1 } }] } })
  t.same(await gql(`{ ${repeat(501, collection)} }`), refused('Query is too large: it has 501 aliases, more than the 500 allowed'))
  t.same(await gql(`{ __typename ${repeat(500, collection)} }`), refused('Query is too large: it has 2001 fields, more than the 2000 allowed'))
  // Fields in fragments count as written, once, however often they are spread.
  t.same(await gql(`{ ...F ...F } fragment F on Query { __typename ${repeat(500, collection)} }`), refused('Query is too large: it has 2001 fields, more than the 2000 allowed'))
})

t.test('a syntax error within the ceilings keeps the parser\'s sentence', async (t) => {
  t.same(await gql('{ accountCollection { edges { node { id } }'), refused('Syntax Error: Expected Name, found <EOF>.'))
})

t.test('a large document over the ceiling is refused without a database connection', async (t) => {
  // With the project's database refusing connections, a request that took one
  // would answer 503; the refusal shows the text was measured first.
  const { adminQuery, serverUrl } = await import('../helpers/db.ts')
  const server = await serverUrl()
  const database = project.record.dbName
  await adminQuery(server, `alter database "${database}" allow_connections false`)
  await adminQuery(server, `select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and usename = $2`, [database, project.record.dbApiRole])
  t.teardown(() => adminQuery(server, `alter database "${database}" allow_connections true`))
  const typename = `{ ${repeat(10_000, (i) => `a${i}: __typename`)} }`
  t.same(await gql(typename), refused('Query is too large: it has more than 15000 tokens'))
  const small = await gql('{ __typename }')
  t.equal(small.status, 503, 'a small document does need the database, which refuses')
})
