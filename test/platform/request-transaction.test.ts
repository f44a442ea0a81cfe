import pg from 'pg'
import t from 'tap'
import { apiDatabaseOf, ownerUrlOf } from '../../lib/catalogue.ts'
import { ProjectPools } from '../../lib/db/project-pools.ts'
import { withRequestTransaction } from '../../lib/db/request-transaction.ts'
import { type RequestIdentity } from '../../lib/roles.ts'
import { startTestPlatform } from '../helpers/platform.ts'

const platform = await startTestPlatform(t)
const project = await platform.createProject({ name: 'RLS' })
const owner = new pg.Client({ connectionString: ownerUrlOf(project.record) })
await owner.connect()
await owner.query(`
  create table public.todos (
    id serial primary key,
    owner uuid not null default auth.uid(),
    title text not null check (title <> '')
  );
  alter table public.todos enable row level security;
  create policy "own rows" on public.todos for all to authenticated
    using (owner = auth.uid()) with check (owner = auth.uid());
  insert into public.todos (owner, title) values
    ('00000000-0000-4000-8000-00000000000a', 'alice 1'),
    ('00000000-0000-4000-8000-00000000000a', 'alice 2'),
    ('00000000-0000-4000-8000-00000000000b', 'bob 1');
`)
await owner.end()

const pools = new ProjectPools({ maxConnections: 10, poolSize: 2, idleMillis: 1000, applicationName: 'test' })
t.teardown(() => pools.closeAll())
const pool = pools.get(apiDatabaseOf(project.record))
const ALICE = '00000000-0000-4000-8000-00000000000a'
const BOB = '00000000-0000-4000-8000-00000000000b'
const user = (sub: string): RequestIdentity => ({ role: 'authenticated', claims: { sub, role: 'authenticated', aal: 'aal1' } })
const titles = (identity: RequestIdentity) =>
  withRequestTransaction(pool, identity, project.record.roleTimeouts, async (client) => (await client.query('select title from public.todos order by id')).rows.map((r) => r.title))

t.test('RLS sees the caller: anon, two users, service_role', async (t) => {
  t.same(await titles({ role: 'anon', claims: { role: 'anon' } }), [], 'anon has no policy')
  t.same(await titles(user(ALICE)), ['alice 1', 'alice 2'])
  t.same(await titles(user(BOB)), ['bob 1'])
  t.same(await titles({ role: 'service_role', claims: { role: 'service_role' } }), ['alice 1', 'alice 2', 'bob 1'], 'service_role bypasses RLS')
})

t.test('auth functions see the claims inside the transaction, and they do not leak', async (t) => {
  const seen = await withRequestTransaction(pool, user(ALICE), project.record.roleTimeouts, async (client) => (await client.query(`select auth.uid()::text as uid, auth.role() as role, auth.jwt() ->> 'aal' as aal, current_user`)).rows[0])
  t.same(seen, { uid: ALICE, role: 'authenticated', aal: 'aal1', current_user: 'authenticated' })
  // The same pooled connection afterwards: role and claims are gone.
  const client = await pool.connect()
  const after = (await client.query(`select current_user, coalesce(current_setting('request.jwt.claims', true), '') as claims`)).rows[0]
  client.release()
  t.same(after, { current_user: project.record.dbApiRole, claims: '' })
})

t.test('a failure rolls everything back', async (t) => {
  await t.rejects(
    withRequestTransaction(pool, user(BOB), project.record.roleTimeouts, async (client) => {
      await client.query(`insert into public.todos (title) values ('bob 2')`)
      await client.query(`insert into public.todos (title) values ('')`)
    }),
    /violates check constraint/,
  )
  t.same(await titles(user(BOB)), ['bob 1'], 'the first insert was not kept')
  await t.rejects(
    withRequestTransaction(pool, user(BOB), project.record.roleTimeouts, (client) => client.query(`insert into public.todos (owner, title) values ($1, 'not mine')`, [ALICE])),
    /row-level security/,
  )
  t.same(await titles(user(ALICE)), ['alice 1', 'alice 2'])
  // Any role the login role may SET ROLE to is served; PostgreSQL refuses the others.
  await t.rejects(withRequestTransaction(pool, { role: 'postgres', claims: {} }, project.record.roleTimeouts, async () => 1), /permission denied to set role "postgres"/)
  await t.rejects(withRequestTransaction(pool, { role: 'none', claims: {} }, project.record.roleTimeouts, async () => 1), /not a role: none/)
})

t.test('claims with quotes and unicode are passed intact', async (t) => {
  const claims = { sub: ALICE, role: 'authenticated', user_metadata: { name: "O'Brien; drop table x; --", emoji: '✓' } }
  const back = await withRequestTransaction(pool, { role: 'authenticated', claims }, project.record.roleTimeouts, async (client) => (await client.query(`select auth.jwt() as jwt`)).rows[0].jwt)
  t.same(back, claims)
})

t.test('project pools: the server budget bounds open connections; the least recently used idle one makes room', async (t) => {
  const small = new ProjectPools({ maxConnections: 2, poolSize: 2, idleMillis: 60000, applicationName: 'test' })
  t.teardown(() => small.closeAll())
  const projects = await Promise.all([1, 2, 3].map((n) => platform.createProject({ name: `P${n}` })))
  for (const p of projects) t.same((await small.get(apiDatabaseOf(p.record)).query('select 1 as ok')).rows, [{ ok: 1 }])
  const { projects: open } = small.stats()
  t.same(
    projects.map((p) => open[p.ref]?.open ?? 0),
    [0, 1, 1],
    'the third project took the first one\'s idle connection: two connections for a budget of two',
  )
  t.same((await small.get(apiDatabaseOf(projects[0]!.record)).query('select 1 as ok')).rows, [{ ok: 1 }], 'the first project reconnects on next use')
})
