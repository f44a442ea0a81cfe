// The HTTP service's handler, called as the data plane calls it: a hand-built
// ServiceRequest in, an HTTP answer out, the request running as the caller.
import t from 'tap'
import { apiDatabaseOf } from '../../lib/catalogue.ts'
import type { ApiRole } from '../../lib/roles.ts'
import type { ServiceRequest } from '../../lib/service.ts'
import { projectPools } from '../../lib/worker-context.ts'
import handler from '../../workers/graphql/worker.ts'
import { graphqlProject } from './helpers.ts'

t.test('worker handler', async (t) => {
  const p = await graphqlProject(t, `
    create table todo (id serial primary key, owner uuid default auth.uid(), title text not null);
    alter table todo enable row level security;
    create policy mine on todo using (owner = auth.uid()) with check (owner = auth.uid());
    insert into todo (owner, title) values ('11111111-1111-1111-1111-111111111111', 'ann''s');
  `)
  t.teardown(() => projectPools().closeAll())
  const request = (body: string, role: ApiRole = 'anon', sub?: string): ServiceRequest => ({
    concern: 'graphql',
    method: 'POST',
    path: '',
    query: '',
    headers: { 'content-type': 'application/json' },
    body,
    clientAddress: '127.0.0.1',
    project: {
      ref: p.project.ref, plan: 'free', version: 1, database: apiDatabaseOf(p.project), roleTimeouts: p.project.roleTimeouts, caps: {}, readOnly: false,
    },
    identity: { role, claims: { role, ...(sub ? { sub } : {}) } },
    apikeyRole: 'anon',
  })
  const answer = async (req: ServiceRequest) => {
    const res = await handler(req)
    return { status: res.status, type: res.headers['content-type'], body: JSON.parse(res.body) }
  }
  const titles = JSON.stringify({ query: '{ todoCollection { edges { node { title } } } }' })
  t.strictSame(await answer(request(titles)), { status: 200, type: 'application/json', body: { data: { todoCollection: { edges: [] } } } })
  t.strictSame(await answer(request(titles, 'authenticated', '11111111-1111-1111-1111-111111111111')), {
    status: 200, type: 'application/json', body: { data: { todoCollection: { edges: [{ node: { title: "ann's" } }] } } },
  })
  t.strictSame(await answer(request(JSON.stringify({
    query: 'mutation($t: String!) { insertIntotodoCollection(objects: [{title: $t}]) { records { title } } }',
    variables: { t: 'bob' },
  }), 'authenticated', '22222222-2222-2222-2222-222222222222')), {
    status: 200, type: 'application/json', body: { data: { insertIntotodoCollection: { records: [{ title: 'bob' }] } } },
  })
  t.strictSame(await answer(request('{"query": ')), { status: 400, type: 'application/json', body: { errors: [{ message: 'Could not parse request body as JSON' }] } })
  t.strictSame(await answer(request(JSON.stringify({ query: '{ nope }' }))), {
    status: 200, type: 'application/json', body: { data: null, errors: [{ message: 'Cannot query field "nope" on type "Query". Did you mean "node"?' }] },
  })
})
