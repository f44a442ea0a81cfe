// The schema's `allowlist` and persisted queries (SPEC 2.4, issue 14 item
// 12): the roles it holds (anon and authenticated by default) run only stored
// documents; any role may send a stored document's SHA-256 alone; an unknown
// hash gets Apollo's PersistedQueryNotFound. The table is read as the caller.
import crypto from 'node:crypto'
import pg from 'pg'
import t from 'tap'
import { ownerUrlOf } from '../../lib/catalogue.ts'
import { withRequestTransaction } from '../../lib/db/request-transaction.ts'
import { signJwt } from '../../lib/jwt.ts'
import { resolve, type GraphqlRequest } from '../../workers/graphql/index.ts'
import { request } from '../helpers/http.ts'
import { startTestPlatform } from '../helpers/platform.ts'
import { graphqlProject, type GraphqlProject } from './helpers.ts'

const ANN = '11111111-1111-1111-1111-111111111111'
const BOB = '22222222-2222-2222-2222-222222222222'

const NOTES = '{ noteCollection(orderBy: [{id: AscNullsLast}]) { edges { node { body } } } }'
const WRITE = 'mutation ($body: String!) { insertIntonoteCollection(objects: [{body: $body}]) { records { body } } }'
const sha = (text: string) => crypto.createHash('sha256').update(text).digest('hex')

const SETUP = `
  create schema private;
  grant usage on schema private to anon, authenticated, service_role;
  create table private.allowed (hash text primary key, document text not null);
  grant select on private.allowed to anon, authenticated, service_role;
  insert into private.allowed select encode(sha256(convert_to(d, 'UTF8')), 'hex'), d from (values ($$${NOTES}$$), ($$${WRITE}$$)) v(d);
  create table note (id serial primary key, owner uuid default auth.uid(), body text not null);
  alter table note enable row level security;
  create policy read on note for select using (owner is null or owner = auth.uid());
  create policy write on note for insert to authenticated with check (owner = auth.uid());
  insert into note (owner, body) values (null, 'public'), ('${ANN}', 'ann''s'), ('${BOB}', 'bob''s');
`
const ON = `comment on schema public is e'@graphql({"allowlist": {"table": "private.allowed"}})';`

interface Ask {
  role?: string
  sub?: string
  variables?: Record<string, unknown>
  extensions?: Record<string, unknown>
}

/** As the helpers' gql, with a request's extensions and no query when `query` is undefined. */
function ask(p: GraphqlProject, query: string | undefined, options: Ask = {}) {
  const role = options.role ?? 'service_role'
  const claims: Record<string, unknown> = { role, ...(options.sub ? { sub: options.sub } : {}) }
  const body: GraphqlRequest = { ...(query !== undefined ? { query } : {}), variables: options.variables, extensions: options.extensions }
  return withRequestTransaction(p.pool, { role, claims }, p.project.roleTimeouts, (client) => resolve(client, body, { cache: p.cache }))
}
const persisted = (hash: string) => ({ persistedQuery: { version: 1, sha256Hash: hash } })
const notes = (...bodies: string[]) => ({ data: { noteCollection: { edges: bodies.map((body) => ({ node: { body } })) } } })
const notAllowed = (role: string, text: string) => ({
  data: null,
  errors: [{ message: `Document is not on the allowlist: role ${role} may only run stored documents (this one's SHA-256 is ${sha(text)})` }],
})
const NOT_FOUND = { errors: [{ message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } }] }

t.test('off: every document runs; a hash alone is PersistedQueryNotSupported', async (t) => {
  const p = await graphqlProject(t, SETUP)
  t.same(await ask(p, '{ noteCollection { edges { node { id } } } }', { role: 'anon' }), { data: { noteCollection: { edges: [{ node: { id: 1 } }] } } })
  t.same(await ask(p, undefined, { role: 'anon', extensions: persisted(sha(NOTES)) }), {
    errors: [{ message: 'PersistedQueryNotSupported', extensions: { code: 'PERSISTED_QUERY_NOT_SUPPORTED' } }],
  })
  t.same(await ask(p, undefined, { role: 'anon' }), { data: null, errors: [{ message: 'Must provide query string.' }] })
})

t.test('on: the held roles run stored documents only, as themselves', async (t) => {
  const p = await graphqlProject(t, SETUP + ON)
  t.same(await ask(p, NOTES, { role: 'anon' }), notes('public'))
  t.same(await ask(p, NOTES, { role: 'authenticated', sub: ANN }), notes('public', "ann's"))
  const other = '{ noteCollection { edges { node { body owner } } } }'
  t.same(await ask(p, other, { role: 'anon' }), notAllowed('anon', other))
  t.same(await ask(p, other, { role: 'authenticated', sub: ANN }), notAllowed('authenticated', other))
  // The text must be the stored one byte for byte (one more space is another document).
  t.same(await ask(p, NOTES + ' ', { role: 'anon' }), notAllowed('anon', NOTES + ' '))
  // Refused before validation: even an invalid document gets the allowlist's answer.
  t.same(await ask(p, '{ nope }', { role: 'anon' }), notAllowed('anon', '{ nope }'))
  // A role it does not hold runs anything.
  t.same(await ask(p, '{ noteCollection(filter: {id: {eq: 3}}) { edges { node { body } } } }'), notes("bob's"))

  // A stored mutation runs under RLS; one not stored writes nothing.
  t.same(await ask(p, WRITE, { role: 'authenticated', sub: BOB, variables: { body: 'bob 2' } }), { data: { insertIntonoteCollection: { records: [{ body: 'bob 2' }] } } })
  const sneaky = 'mutation { insertIntonoteCollection(objects: [{body: "sneaky"}]) { affectedCount } }'
  t.same(await ask(p, sneaky, { role: 'authenticated', sub: BOB }), notAllowed('authenticated', sneaky))
  t.same(await ask(p, WRITE, { role: 'anon', variables: { body: 'anon' } }), { data: null, errors: [{ message: 'new row violates row-level security policy for table "note"' }] })
  t.same(await ask(p, '{ noteCollection { edges { node { body } } } }'), notes('public', "ann's", "bob's", 'bob 2'), 'nothing else written')
})

t.test('persisted queries: the hash alone, from any role', async (t) => {
  const p = await graphqlProject(t, SETUP + ON)
  t.same(await ask(p, undefined, { role: 'anon', extensions: persisted(sha(NOTES)) }), notes('public'))
  t.same(await ask(p, undefined, { role: 'authenticated', sub: BOB, extensions: persisted(sha(NOTES).toUpperCase()) }), notes('public', "bob's"), 'hex in either case')
  t.same(await ask(p, undefined, { role: 'service_role', extensions: persisted(sha(NOTES)) }), notes('public', "ann's", "bob's"))
  t.same(await ask(p, undefined, { role: 'anon', extensions: persisted(sha('{ __typename }')) }), NOT_FOUND)
  t.same(await ask(p, undefined, { role: 'service_role', extensions: persisted('not a hash') }), NOT_FOUND)
  // With the text, the hash must be the text's (Apollo's sentence); then the text rules apply.
  t.same(await ask(p, NOTES, { role: 'anon', extensions: persisted(sha('{ __typename }')) }), { data: null, errors: [{ message: 'provided sha does not match query' }] })
  t.same(await ask(p, NOTES, { role: 'anon', extensions: persisted(sha(NOTES)) }), notes('public'))
  // Variables go with a persisted document.
  t.same(await ask(p, undefined, { role: 'authenticated', sub: ANN, extensions: persisted(sha(WRITE)), variables: { body: 'by hash' } }), {
    data: { insertIntonoteCollection: { records: [{ body: 'by hash' }] } },
  })
  // A row whose hash is not its document's is not run.
  const wrong = sha('{ __typename }')
  await p.sql(`insert into private.allowed values ($1, $2)`, [wrong, '{ noteCollection { edges { node { owner } } } }'])
  t.same(await ask(p, undefined, { role: 'anon', extensions: persisted(wrong) }), {
    data: null, errors: [{ message: `The allowlist's document for hash ${wrong} does not have that SHA-256` }],
  })
})

t.test('roles and grants: listed roles only; the lookup needs select', async (t) => {
  const p = await graphqlProject(t, SETUP + `comment on schema public is e'@graphql({"allowlist": {"table": "private.allowed", "roles": ["anon"]}})';`)
  const other = '{ noteCollection { edges { node { owner } } } }'
  t.same(await ask(p, other, { role: 'anon' }), notAllowed('anon', other))
  t.same(await ask(p, other, { role: 'authenticated', sub: ANN }), { data: { noteCollection: { edges: [{ node: { owner: null } }, { node: { owner: ANN } }] } } })
  await p.sql('revoke select on private.allowed from anon')
  t.same(await ask(p, NOTES, { role: 'anon' }), { data: null, errors: [{ message: 'permission denied for table allowed' }] })
  t.same(await ask(p, undefined, { role: 'anon', extensions: persisted(sha(NOTES)) }), { data: null, errors: [{ message: 'permission denied for table allowed' }] })
})

t.test('over HTTP: extensions reach the engine; the anon key may send only a hash', async (t) => {
  const platform = await startTestPlatform(t)
  const project = await platform.createProject({ name: 'Allowlist' })
  const owner = new pg.Client({ connectionString: ownerUrlOf(project.record) })
  await owner.connect()
  t.teardown(() => owner.end())
  await owner.query(SETUP + ON)
  const token = await signJwt(project.record.jwtSecret, { sub: ANN, role: 'authenticated', aud: 'authenticated', exp: Math.floor(Date.now() / 1000) + 600 })
  const post = async (body: object, bearer?: string) =>
    (await request(`${project.baseUrl}/graphql/v1`, { headers: { apikey: project.anonKey, ...(bearer ? { authorization: `Bearer ${bearer}` } : {}) }, body })).json
  t.same(await post({ extensions: persisted(sha(NOTES)) }), notes('public'))
  t.same(await post({ extensions: persisted(sha(NOTES)) }, token), notes('public', "ann's"))
  t.same(await post({ query: NOTES }), notes('public'))
  t.same(await post({ query: '{ __typename }' }), notAllowed('anon', '{ __typename }'))
  t.same(await post({ extensions: persisted(sha('{ __typename }')) }), NOT_FOUND)
})
