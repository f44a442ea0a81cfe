// The schema's `explain` (SPEC 2.4, issue 14 item 13): with the extension
// `explain: true`, each statement run, its parameters and its plan under
// `extensions.explain`. Each plan is checked against EXPLAIN of the reported
// statement with the reported parameters, run by the test as the same role
// with the same claims: so the statement, its parameters and the role (RLS
// policies show in the plan) are the ones that ran.
import t from 'tap'
import { withRequestTransaction } from '../../lib/db/request-transaction.ts'
import { resolve, type GraphqlResponse } from '../../workers/graphql/index.ts'
import { graphqlProject, type GraphqlProject } from './helpers.ts'

const ANN = '11111111-1111-1111-1111-111111111111'

const SETUP = `
  create table note (id int primary key, owner uuid, body text not null);
  alter table note enable row level security;
  create policy read_anon on note for select to anon using (owner is null);
  create policy read_user on note for select to authenticated using (owner is null or owner = auth.uid());
  create policy write on note for insert to authenticated with check (owner = auth.uid());
  insert into note values (1, null, 'public'), (2, '${ANN}', 'ann''s');
`
const ON = `comment on schema public is e'@graphql({"explain": {"enabled": true}})';`

interface Ask {
  role?: string
  sub?: string
  variables?: Record<string, unknown>
  extensions?: Record<string, unknown>
}

const claimsOf = (role: string, sub: string | undefined) => ({ role, claims: { role, ...(sub ? { sub } : {}) } })

function ask(p: GraphqlProject, query: string, options: Ask = {}): Promise<GraphqlResponse> {
  const role = options.role ?? 'service_role'
  return withRequestTransaction(p.pool, claimsOf(role, options.sub), p.project.roleTimeouts, (client) =>
    resolve(client, { query, variables: options.variables, extensions: options.extensions }, { cache: p.cache }))
}

interface Explained {
  sql: string
  params: (string | null)[]
  plan: unknown
}

/** EXPLAIN of `sql` with `params`, as `role`, in a transaction of its own that is rolled back. */
async function ownPlan(p: GraphqlProject, role: string, sub: string | undefined, { sql, params }: Explained): Promise<unknown> {
  return withRequestTransaction(p.pool, claimsOf(role, sub), p.project.roleTimeouts, async (client) => {
    if (params.length === 0) return (await client.query(`explain (format json) ${sql}`)).rows[0]['QUERY PLAN'][0]
    await client.query(`prepare own as ${sql}`)
    const placeholders = params.map((_, i) => `$${i + 1}`).join(', ')
    // EXPLAIN EXECUTE takes literals; the driver's parameters go to a helper statement.
    const { rows } = await client.query(`select string_agg(quote_nullable(v), ', ' order by n) as args from unnest(array[${placeholders}]::text[]) with ordinality u(v, n)`, params)
    const plan = (await client.query(`explain (format json) execute own(${rows[0].args})`)).rows[0]['QUERY PLAN'][0]
    await client.query('deallocate own')
    return plan
  })
}

const explained = (response: GraphqlResponse): Explained[] => ((response as { extensions?: { explain?: Explained[] } }).extensions?.explain ?? [])

t.test('off: the extension is ignored, as pg_graphql ignores extensions', async (t) => {
  const p = await graphqlProject(t, SETUP)
  t.same(await ask(p, '{ noteCollection { edges { node { body } } } }', { role: 'anon', extensions: { explain: true } }), {
    data: { noteCollection: { edges: [{ node: { body: 'public' } }] } },
  })
})

t.test('on: each statement, its parameters and its plan, as the caller', async (t) => {
  const p = await graphqlProject(t, SETUP + ON)
  const query = 'query ($b: String) { noteCollection(filter: {body: {neq: $b}}) { edges { node { body } } } }'
  // Not asked: the answer is the plain one.
  t.same(await ask(p, query, { role: 'anon', variables: { b: 'x' } }), { data: { noteCollection: { edges: [{ node: { body: 'public' } }] } } })

  const anon = await ask(p, query, { role: 'anon', variables: { b: 'x' }, extensions: { explain: true } })
  const [statement] = explained(anon)
  t.ok(statement, 'one statement')
  t.same(anon, {
    data: { noteCollection: { edges: [{ node: { body: 'public' } }] } },
    extensions: { explain: [{ sql: statement!.sql, params: ['x'], plan: await ownPlan(p, 'anon', undefined, statement!) }] },
  })
  t.match(statement!.sql, /^select .*\$1/s, 'the prepared text, the value a parameter')
  t.match(JSON.stringify(statement!.plan), /owner IS NULL/, "anon's policy is in the plan")
  t.notMatch(JSON.stringify(statement!.plan), /request\.jwt/, "the signed-in role's policy is not")

  const ann = await ask(p, query, { role: 'authenticated', sub: ANN, variables: { b: 'public' }, extensions: { explain: true } })
  const [annStatement] = explained(ann)
  t.same(ann, {
    data: { noteCollection: { edges: [{ node: { body: "ann's" } }] } },
    extensions: { explain: [{ sql: statement!.sql, params: ['public'], plan: await ownPlan(p, 'authenticated', ANN, annStatement!) }] },
  }, 'same document shape: same statement, other parameters')
  // auth.uid() is inlined into the plan as its body.
  t.match(JSON.stringify(annStatement!.plan), /owner IS NULL\) OR \(owner = .*request\.jwt\.claim/, "the signed-in role's policy is in the plan")

  const typename = await ask(p, '{ __typename }', { role: 'anon', extensions: { explain: true } })
  const [only] = explained(typename)
  t.same(typename, {
    data: { __typename: 'Query' },
    extensions: { explain: [{ sql: "select json_build_object('__typename', 'Query') as data", params: [], plan: await ownPlan(p, 'anon', undefined, only!) }] },
  })
})

t.test('mutations: each statement explained once and run once; a failing one keeps its plan and writes nothing', async (t) => {
  const p = await graphqlProject(t, SETUP + ON)
  const insert = (id: number, owner: string) =>
    `mutation { insertIntonoteCollection(objects: [{id: ${id}, owner: "${owner}", body: "new"}]) { affectedCount } }`
  const done = await ask(p, insert(3, ANN), { role: 'authenticated', sub: ANN, extensions: { explain: true } })
  const [statement] = explained(done)
  t.same(done, {
    data: { insertIntonoteCollection: { affectedCount: 1 } },
    extensions: { explain: [{ sql: statement!.sql, params: [], plan: await ownPlan(p, 'authenticated', ANN, statement!) }] },
  })
  t.match(statement!.sql, /insert into/i)
  const failed = await ask(p, insert(4, '22222222-2222-2222-2222-222222222222'), { role: 'authenticated', sub: ANN, extensions: { explain: true } })
  const [failing] = explained(failed)
  t.same(failed, {
    data: null,
    errors: [{ message: 'new row violates row-level security policy for table "note"' }],
    extensions: { explain: [{ sql: failing!.sql, params: [], plan: await ownPlan(p, 'authenticated', ANN, { ...failing!, sql: failing!.sql.replace('22222222-2222-2222-2222-222222222222', ANN) }) }] },
  })
  t.same(await ask(p, '{ noteCollection(orderBy: [{id: AscNullsLast}]) { edges { node { id } } } }'), {
    data: { noteCollection: { edges: [{ node: { id: 1 } }, { node: { id: 2 } }, { node: { id: 3 } }] } },
  }, 'the first insert once, the failed one not at all')
  t.same(await ask(p, 'mutation { insertIntonoteCollection(objects: [{id: 5, nope: 1}]) { affectedCount } }', { role: 'anon', extensions: { explain: true } }), {
    data: null,
    errors: [{ message: 'Field "nope" is not defined by type "noteInsertInput".' }],
    extensions: { explain: [] },
  }, 'refused before any statement')
})

/** Every node type of a plan, depth first. */
function nodeTypes(plan: unknown): string[] {
  const node = (plan as { Plan?: unknown }).Plan ?? plan
  const { 'Node Type': type, Plans: children = [] } = node as { 'Node Type': string; Plans?: unknown[] }
  return [type, ...children.flatMap(nodeTypes)]
}

t.test("an order on a key that cannot hold null reads the index's own order: the page is no sort of every row", async (t) => {
  const p = await graphqlProject(t, `
    create table item (id int primary key, label text);
    insert into item select g, case when g % 3 = 0 then null else 'item ' || g end from generate_series(1, 5000) g;
    analyze item;
  ` + ON)
  for (const direction of ['DescNullsLast', 'DescNullsFirst', 'AscNullsFirst', 'AscNullsLast']) {
    const answer = await ask(p, `{ itemCollection(first: 3, orderBy: [{id: ${direction}}]) { edges { node { id } } } }`, { extensions: { explain: true } })
    const ids = (answer.data as { itemCollection: { edges: { node: { id: number } }[] } }).itemCollection.edges.map((edge) => edge.node.id)
    t.same(ids, direction.startsWith('Desc') ? [5000, 4999, 4998] : [1, 2, 3], `${direction}: the rows`)
    const types = nodeTypes(explained(answer)[0]!.plan)
    t.ok(types.some((type) => type.startsWith('Index')), `${direction}: an index scan (${types.join(' > ')})`)
    t.notOk(types.includes('Sort'), `${direction}: no sort`)
  }
  // A column that may hold null keeps its nulls where it was asked to put them.
  const labels = await ask(p, '{ itemCollection(first: 2, orderBy: [{label: DescNullsLast}, {id: AscNullsLast}]) { edges { node { id label } } } }')
  const labelled = (labels.data as { itemCollection: { edges: { node: { label: string | null } }[] } }).itemCollection.edges
  t.same(labelled.map((edge) => edge.node.label === null), [false, false], 'nulls last, as asked')
  const first = await ask(p, '{ itemCollection(first: 2, orderBy: [{label: DescNullsFirst}, {id: AscNullsLast}]) { edges { node { id label } } } }')
  t.same(first, { data: { itemCollection: { edges: [{ node: { id: 3, label: null } }, { node: { id: 6, label: null } }] } } }, 'nulls first, as asked')
})
