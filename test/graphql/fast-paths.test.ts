// GraphQL's one-round-trip paths over HTTP (issue 41 item 1): a repeated query
// answered from its cached plan with the values it was planned with, its data
// written as PostgreSQL's JSON text, and a mutation sent in one message behind
// the schema key's guard, run again the ordinary way when the schema moved
// and never twice when it fails on its own.
import pg from 'pg'
import t from 'tap'
import { ownerUrlOf } from '../../lib/catalogue.ts'
import { request } from '../helpers/http.ts'
import { startTestPlatform } from '../helpers/platform.ts'

interface GraphqlBody {
  data: Record<string, unknown> | null
  errors?: Array<{ message: string }>
}

const platform = await startTestPlatform(t)
const project = await platform.createProject({ name: 'GraphQL fast paths' })
const owner = new pg.Client({ connectionString: ownerUrlOf(project.record) })
await owner.connect()
t.teardown(() => owner.end())
await owner.query(`
  create table note (id serial primary key, title text not null check (title <> 'bad'));
  insert into note (title) select 'note ' || g from generate_series(1, 5) g;
  grant select, insert on note to anon;
  grant usage on sequence note_id_seq to anon;
`)

const gql = async (query: string, variables?: Record<string, unknown>) => {
  const reply = await request<GraphqlBody>(`${project.baseUrl}/graphql/v1`, { headers: { apikey: project.anonKey }, body: { query, variables } })
  return { status: reply.status, body: reply.json, text: reply.text }
}
const titlesOf = (body: GraphqlBody) =>
  (body.data?.noteCollection as { edges: { node: { title: string } }[] }).edges.map((edge) => edge.node.title)

t.test('a repeated query answers from its plan, always with the values it was planned with', async (t) => {
  const page = 'query ($n: Int, $after: Cursor) { noteCollection(first: $n, after: $after, orderBy: [{id: AscNullsLast}]) { edges { node { title } } } }'
  // Each value more than once, so the second of each is a cached plan's answer.
  for (const n of [1, 3, 1, 3, 2, 2]) {
    const answer = await gql(page, { n })
    t.equal(answer.status, 200)
    t.equal(answer.body.errors, undefined, `no errors for first: ${n}`)
    t.same(titlesOf(answer.body), ['note 1', 'note 2', 'note 3'].slice(0, n), `first: ${n}`)
  }
  // A variable left out plans differently from one given (no page size: the table's default).
  const all = await gql(page, {})
  t.equal(all.body.errors, undefined)
  t.same(titlesOf(all.body), ['note 1', 'note 2', 'note 3', 'note 4', 'note 5'])
  // Inline values (the benchmark's and many apps' form): the same document, the same answer each time.
  const inline = '{ noteCollection(filter: {title: {eq: "note 4"}}) { edges { node { title } } } }'
  for (let i = 0; i < 3; i++) t.same(titlesOf((await gql(inline)).body), ['note 4'])
})

t.test("a query's data is PostgreSQL's JSON text, the answer still GraphQL's shape", async (t) => {
  const query = '{ noteCollection(first: 2, orderBy: [{id: AscNullsLast}]) { edges { node { id title } } } }'
  for (let i = 0; i < 3; i++) {
    const answer = await gql(query)
    t.equal(answer.status, 200)
    t.same(JSON.parse(answer.text), { data: { noteCollection: { edges: [{ node: { id: 1, title: 'note 1' } }, { node: { id: 2, title: 'note 2' } }] } } })
  }
  // An introspection field beside a table's is merged into the data, not written from PostgreSQL's text alone.
  const mixed = await gql('{ __typename noteCollection(first: 1) { edges { node { id } } } }')
  t.same(mixed.body, { data: { __typename: 'Query', noteCollection: { edges: [{ node: { id: 1 } }] } } })
})

t.test('a mutation planned on a schema that moved runs on the new one, once', async (t) => {
  const insert = (title: string) => `mutation { insertIntonoteCollection(objects: [{title: ${JSON.stringify(title)}}]) { affectedCount records { title } } }`
  for (const title of ['warm 1', 'warm 2']) {
    const answer = await gql(insert(title))
    t.same(answer.body, { data: { insertIntonoteCollection: { affectedCount: 1, records: [{ title }] } } })
  }
  await owner.query(`alter table note add column tag text default 'fresh'`)
  const withTag = await gql(`mutation { insertIntonoteCollection(objects: [{title: "tagged", tag: "new"}]) { affectedCount records { title tag } } }`)
  t.same(withTag.body, { data: { insertIntonoteCollection: { affectedCount: 1, records: [{ title: 'tagged', tag: 'new' }] } } })
  // The plain insert again: planned on the old key first, its guard stops it, and the ordinary path runs it, once.
  await owner.query(`alter table note alter column tag set default 'later'`)
  await owner.query(`comment on table note is 'moved the key'`)
  const again = await gql(insert('after the move'))
  t.same(again.body, { data: { insertIntonoteCollection: { affectedCount: 1, records: [{ title: 'after the move' }] } } })
  const { rows } = await owner.query(`select title, count(*)::int as n from note where title in ('warm 1', 'warm 2', 'tagged', 'after the move') group by title order by title`)
  t.same(rows, [{ title: 'after the move', n: 1 }, { title: 'tagged', n: 1 }, { title: 'warm 1', n: 1 }, { title: 'warm 2', n: 1 }])
})

t.test('a repeated mutation runs every time from its cached plan', async (t) => {
  const same = `mutation { insertIntonoteCollection(objects: [{title: "again"}]) { affectedCount } }`
  for (let i = 0; i < 3; i++) t.same((await gql(same)).body, { data: { insertIntonoteCollection: { affectedCount: 1 } } })
  t.equal((await owner.query(`select count(*)::int as n from note where title = 'again'`)).rows[0].n, 3)
  // The same document with other variables is planned for them.
  const byVariable = 'mutation ($t: String!) { insertIntonoteCollection(objects: [{title: $t}]) { records { title } } }'
  for (const title of ['one', 'two', 'one']) t.same((await gql(byVariable, { t: title })).body, { data: { insertIntonoteCollection: { records: [{ title }] } } })
  t.same((await owner.query(`select title, count(*)::int as n from note where title in ('one', 'two') group by title order by title`)).rows, [{ title: 'one', n: 2 }, { title: 'two', n: 1 }])
})

t.test('a mutation that fails on its own answers its error and ran once', async (t) => {
  const good = await gql(`mutation { insertIntonoteCollection(objects: [{title: "fine"}]) { affectedCount } }`)
  t.same(good.body, { data: { insertIntonoteCollection: { affectedCount: 1 } } })
  const before = Number((await owner.query(`select last_value from note_id_seq`)).rows[0].last_value)
  const bad = await gql(`mutation { insertIntonoteCollection(objects: [{title: "bad"}]) { affectedCount } }`)
  t.equal(bad.status, 200)
  t.equal(bad.body.data, null)
  t.match(bad.body.errors?.[0]?.message, /note_title_check/)
  const after = Number((await owner.query(`select last_value from note_id_seq`)).rows[0].last_value)
  t.equal(after - before, 1, 'the failing insert took one id: it ran once')
  t.equal((await owner.query(`select count(*)::int as n from note where title = 'bad'`)).rows[0].n, 0, 'nothing of it was kept')
  // Two fields in one message: the second's failure undoes the first.
  const pair = await gql(`mutation { a: insertIntonoteCollection(objects: [{title: "first of two"}]) { affectedCount } b: insertIntonoteCollection(objects: [{title: "bad"}]) { affectedCount } }`)
  t.equal(pair.body.data, null)
  t.equal((await owner.query(`select count(*)::int as n from note where title = 'first of two'`)).rows[0].n, 0)
})
