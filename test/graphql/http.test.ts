// POST {base_url}/graphql/v1 through the whole platform: uWS data plane, key
// checks, the graphql worker pool, one transaction as the caller.
import pg from 'pg'
import t from 'tap'
import { ownerUrlOf } from '../../lib/catalogue.ts'
import { signJwt } from '../../lib/jwt.ts'
import { request } from '../helpers/http.ts'

interface GraphqlBody {
  data: unknown
  errors?: Array<{ message: string }>
}
import { startTestPlatform } from '../helpers/platform.ts'

const platform = await startTestPlatform(t)
const project = await platform.createProject({ name: 'GraphQL over HTTP' })
const owner = new pg.Client({ connectionString: ownerUrlOf(project.record) })
await owner.connect()
t.teardown(() => owner.end())
await owner.query(`
  create table todo (id serial primary key, owner uuid not null default auth.uid(), title text not null);
  alter table todo enable row level security;
  create policy own on todo for all to authenticated using (owner = auth.uid()) with check (owner = auth.uid());
  create policy peek on todo for select to anon using (title like 'public%');
  insert into todo (owner, title) values
    ('00000000-0000-4000-8000-00000000000a', 'public: alice'),
    ('00000000-0000-4000-8000-00000000000a', 'alice secret'),
    ('00000000-0000-4000-8000-00000000000b', 'bob secret');
`)
const tokenFor = (sub: string) => signJwt(project.record.jwtSecret, { sub, role: 'authenticated', aud: 'authenticated', exp: Math.floor(Date.now() / 1000) + 600 })
const gql = async (query: string, token?: string) => {
  const reply = await request<GraphqlBody>(`${project.baseUrl}/graphql/v1`, {
    headers: { apikey: project.anonKey, ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: { query },
  })
  return { status: reply.status, body: reply.json }
}
const titles = '{ todoCollection(orderBy: [{id: AscNullsLast}]) { edges { node { title } } } }'
const list = (...items: string[]) => ({ status: 200, body: { data: { todoCollection: { edges: items.map((title) => ({ node: { title } })) } } } })

t.test('row-level security decides by the caller: anon, two users', async (t) => {
  t.same(await gql(titles), list('public: alice'))
  t.same(await gql(titles, await tokenFor('00000000-0000-4000-8000-00000000000a')), list('public: alice', 'alice secret'))
  t.same(await gql(titles, await tokenFor('00000000-0000-4000-8000-00000000000b')), list('bob secret'))
})

t.test('a mutation runs as the user; a failure keeps nothing', async (t) => {
  const bob = await tokenFor('00000000-0000-4000-8000-00000000000b')
  const inserted = await gql(`mutation { insertIntotodoCollection(objects: [{title: "bob 2"}]) { affectedCount records { title } } }`, bob)
  t.same(inserted, { status: 200, body: { data: { insertIntotodoCollection: { affectedCount: 1, records: [{ title: 'bob 2' }] } } } })
  const refused = await gql(`mutation { insertIntotodoCollection(objects: [{title: "anon"}]) { affectedCount } }`)
  t.equal(refused.status, 200)
  t.equal(refused.body.data, null)
  t.match(refused.body.errors![0]!.message, /insertIntotodoCollection|permission denied|row-level security|null value/)
  t.same(await gql(titles, bob), list('bob secret', 'bob 2'))
})

t.test('a schema change shows on the next request', async (t) => {
  const before = await gql('{ labelCollection { edges { node { id } } } }')
  t.same(before.body, { data: null, errors: [{ message: 'Cannot query field "labelCollection" on type "Query". Did you mean "todoCollection"?' }] })
  await owner.query(`create table label (id int primary key, name text); insert into label values (7, 'x'); grant select on label to anon`)
  const after = await gql('{ labelCollection { edges { node { id name } } } }')
  t.same(after.body, { data: { labelCollection: { edges: [{ node: { id: 7, name: 'x' } }] } } })
})

t.test('bad bodies', async (t) => {
  const notJson = await request<GraphqlBody>(`${project.baseUrl}/graphql/v1`, { headers: { apikey: project.anonKey }, body: '{nope' })
  t.equal(notJson.status, 400)
  t.ok(Array.isArray(notJson.json.errors) && typeof notJson.json.errors[0]!.message === 'string')
  const invalid = await gql('{ todoCollection { edges { node { nope } } } }')
  t.same(invalid, { status: 200, body: { data: null, errors: [{ message: 'Cannot query field "nope" on type "todo".' }] } })
})

t.test('a query planned against a schema that just changed is answered from the new schema', async (t) => {
  await owner.query(`create table gadget (id int primary key, label text); insert into gadget values (1, 'one'); grant select on gadget to anon`)
  const labels = '{ gadgetCollection { edges { node { id label } } } }'
  for (let i = 0; i < 2; i++) {
    t.same((await gql(labels)).body, { data: { gadgetCollection: { edges: [{ node: { id: 1, label: 'one' } }] } } }, 'warm')
  }
  // The old plan still runs (same SQL), but the id is now a BigInt (a string on the wire).
  await owner.query(`alter table gadget alter column id type bigint`)
  t.same((await gql(labels)).body, { data: { gadgetCollection: { edges: [{ node: { id: '1', label: 'one' } }] } } })
  // The old plan now fails in SQL; the answer is the new schema's validation error.
  await owner.query(`alter table gadget rename column label to caption`)
  t.same((await gql(labels)).body, { data: null, errors: [{ message: 'Cannot query field "label" on type "gadget".' }] })
  t.same((await gql('{ gadgetCollection { edges { node { caption } } } }')).body, { data: { gadgetCollection: { edges: [{ node: { caption: 'one' } }] } } })
})
