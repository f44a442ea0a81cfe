// The SQL editor (control-plane/sql-editor.ts) through the admin API's
// `POST /projects/{ref}/database/query` and, for callers the router cannot
// make yet (members), through the operation: Supabase's shape (201, an array
// of row objects); the table form with the columns' types, NULL apart from
// 'NULL', pages; each role under the table's row-level security (anon fewer
// rows than service_role, a user their own, the claims as the Data API sets
// them); several statements answering the last, in one transaction; errors
// with their position and hint; the role's timeout, and a text that turns it
// off still ended; EXPLAIN (ANALYZE rolled back); read-only runs, a
// read-only member refused writes; history and snippets per caller; bad
// input refused in the admin API's shape with nothing run or recorded.
import pg from 'pg'
import t from 'tap'
import { createClient } from '@supabase/supabase-js'
import { ownerUrlOf } from '../../lib/catalogue.ts'
import { OPERATOR, type Caller } from '../../control-plane/access.ts'
import { runSql, SqlError, type SqlResultView } from '../../control-plane/sql-editor.ts'
import { createSqlSnippet, listSqlSnippets, sqlHistory } from '../../control-plane/sql-history.ts'
import { request } from '../helpers/http.ts'
import { startTestPlatform } from '../helpers/platform.ts'

const platform = await startTestPlatform(t)
const project = await platform.createProject({ name: 'Editor', auth: true })
const ref = project.ref
const admin = createClient(project.baseUrl, project.serviceRoleKey, { auth: { persistSession: false } })
const ada = await admin.auth.admin.createUser({ email: 'ada@example.com', email_confirm: true })
const bob = await admin.auth.admin.createUser({ email: 'bob@example.com', email_confirm: true })
if (ada.error || bob.error) throw ada.error ?? bob.error
const adaId = ada.data.user!.id
const bobId = bob.data.user!.id
const owner = new pg.Client({ connectionString: ownerUrlOf(project.record) })
await owner.connect()
t.teardown(() => owner.end())
await owner.query(`
  create table public.notes (id int primary key, owner uuid, body text, public boolean not null default false, price numeric(10,2), label varchar(20));
  alter table public.notes enable row level security;
  create policy everyone on public.notes for select to anon using (public);
  create policy own on public.notes for select to authenticated using (public or owner = auth.uid());
  grant select, insert on public.notes to anon, authenticated, service_role;
  insert into public.notes values
    (1, '${adaId}', 'ada''s note', false, 1.50, 'a'),
    (2, '${bobId}', 'bob''s note', false, null, 'b'),
    (3, null, 'for everyone', true, 2, null),
    (4, null, null, false, null, 'NULL'),
    (5, null, 'NULL', false, null, null);`)

const auth = { authorization: `Bearer ${platform.config.adminToken}` }
const queryUrl = `${platform.origin}/platform/v1/projects/${ref}/database/query`
const query = <T = unknown>(body: unknown) => request<T>(queryUrl, { headers: auth, body: body as object })
const table = (body: Record<string, unknown>) => query<SqlResultView & { code?: string; message?: string }>({ format: 'table', ...body })
const history = async () => (await request<{ runs: Array<{ query: string; role: string; error_code: string | null; row_count: number | null; user_id: string | null; explain: boolean; read_only: boolean }> }>(`${queryUrl}/history?limit=100`, { headers: auth })).json.runs
const count = async () => Number((await owner.query('select count(*) from public.notes')).rows[0].count)
const context = { addressing: { publicUrl: platform.config.publicUrl, baseDomain: platform.config.baseDomain } }
const member = (role: 'owner' | 'developer' | 'read-only', email = `${role}@example.com`): Caller => ({ kind: 'member', memberId: `m-${role}`, email, roles: new Map([[ref, role]]) })

t.test("Supabase's shape: an array of row objects, 201, every row, values parsed as node-postgres parses them", async (t) => {
  const reply = await query<unknown[]>({ query: 'select id, body, public, price from public.notes order by id' })
  t.equal(reply.status, 201)
  t.same(reply.json, [
    { id: 1, body: "ada's note", public: false, price: '1.50' },
    { id: 2, body: "bob's note", public: false, price: null },
    { id: 3, body: 'for everyone', public: true, price: '2.00' },
    { id: 4, body: null, public: false, price: null },
    { id: 5, body: 'NULL', public: false, price: null },
  ], 'as the owner, who owns the table: every row')
  const many = await query<unknown[]>({ query: 'select g from generate_series(1, 2500) g' })
  t.equal(many.json.length, 2500, 'not paged')
  const before = await count()
  const huge = await query<{ code: string; message: string }>({ query: "insert into public.notes values (70, null, 'huge'); select g from generate_series(1, 10001) g" })
  t.same([huge.status, huge.json.code], [400, 'too_many_rows'], 'past 10,000 rows: refused, not cut')
  t.equal(await count(), before, 'and rolled back')
  const failed = await query<{ code: string; message: string }>({ query: 'select * from missing_table' })
  t.equal(failed.status, 400)
  t.equal(failed.json.message, 'relation "missing_table" does not exist', "PostgreSQL's message, where Supabase's tools read it")
  const paged = await query<{ code: string }>({ query: 'select 1', limit: 5 })
  t.same([paged.status, paged.json.code], [400, 'invalid_argument'], 'limit pages the table form only')
})

t.test('the table form: columns with their types, NULL apart from the text NULL, values as PostgreSQL writes them', async (t) => {
  const reply = await table({ query: 'select id, body, price, label, owner, public, now()::date as today, array[1,2] as list from public.notes where id in (4, 5) order by id' })
  t.equal(reply.status, 200)
  t.same(reply.json.columns.map((c) => [c.name, c.type]), [
    ['id', 'integer'],
    ['body', 'text'],
    ['price', 'numeric(10,2)'],
    ['label', 'character varying(20)'],
    ['owner', 'uuid'],
    ['public', 'boolean'],
    ['today', 'date'],
    ['list', 'integer[]'],
  ])
  t.equal(reply.json.columns[0]!.type_oid, 23)
  const rows = reply.json.rows
  t.same(rows.map((row) => row.slice(0, 6)), [
    ['4', null, null, 'NULL', null, 'f'],
    ['5', 'NULL', null, null, null, 'f'],
  ], 'NULL is null; the text NULL is a string')
  t.equal(rows[0]![7], '{1,2}')
  t.same([reply.json.command, reply.json.row_count, reply.json.more, reply.json.statements, reply.json.role, reply.json.committed], ['SELECT', 2, false, 1, 'owner', true])
})

t.test('pages: a limit (100 by default, at most 1000), an offset, and whether there were more', async (t) => {
  const first = await table({ query: 'select g from generate_series(1, 250) g' })
  t.same([first.json.rows.length, first.json.rows[0], first.json.more, first.json.row_count, first.json.limit], [100, ['1'], true, null, 100])
  const last = await table({ query: 'select g from generate_series(1, 250) g', limit: 100, offset: 200 })
  t.same([last.json.rows.length, last.json.rows[0], last.json.more, last.json.row_count], [50, ['201'], false, 250])
  const exact = await table({ query: 'select g from generate_series(1, 10) g', limit: 10 })
  t.same([exact.json.rows.length, exact.json.more, exact.json.row_count], [10, false, 10], 'a result of exactly a page has no more')
  for (const limit of [0, 1001]) {
    const refused = await table({ query: 'select 1', limit })
    t.same([refused.status, refused.json.code], [400, 'invalid_argument'], `limit ${limit}`)
  }
})

t.test('each role under row-level security, with the claims the Data API sets', async (t) => {
  const ids = async (body: Record<string, unknown>) => {
    const reply = await table({ query: 'select id from public.notes order by id', ...body })
    t.equal(reply.status, 200, JSON.stringify(reply.json).slice(0, 300))
    return reply.json.rows.map((row) => Number(row[0]))
  }
  t.same(await ids({ role: 'anon' }), [3], 'anon: the public row only')
  t.same(await ids({ role: 'service_role' }), [1, 2, 3, 4, 5], 'service_role bypasses RLS')
  t.same(await ids({ role: 'authenticated', user: 'ada@example.com' }), [1, 3], 'ada: her own and the public one')
  t.same(await ids({ user: bobId }), [2, 3], 'bob by id (the role authenticated implied)')
  const claims = await table({
    role: 'authenticated',
    user: 'ADA@example.com',
    query: "select current_user, auth.uid(), auth.role(), auth.email(), current_setting('request.jwt.claim.sub'), current_setting('request.jwt.claims')::jsonb ->> 'aud', current_setting('statement_timeout')",
  })
  t.same(claims.json.rows[0], ['authenticated', adaId, 'authenticated', 'ada@example.com', adaId, 'authenticated', '8s'])
  t.same(claims.json.user, { id: adaId, email: 'ada@example.com' })
  const anon = await table({ role: 'anon', query: "select current_user, current_setting('request.jwt.claims')::jsonb ->> 'role', current_setting('statement_timeout')" })
  t.same(anon.json.rows[0], ['anon', 'anon', '3s'], "the anon key's claims, anon's timeout")
  const reset = await table({ role: 'anon', query: 'reset role; select current_user' })
  t.equal(reset.json.rows[0]![0], project.record.dbApiRole, "RESET ROLE lands on the API's login role, never the server's admin")
  const denied = await table({ role: 'anon', query: "insert into public.notes values (9, null, 'x')" })
  t.same([denied.status, denied.json.code, (denied.json as unknown as { sqlstate: string }).sqlstate], [400, 'sql_failed', '42501'], 'anon has no policy to insert')
})

t.test('several statements: one transaction, the last answered; a failure rolls back the ones before', async (t) => {
  const reply = await table({ query: "create table public.made (n int);\ninsert into public.made values (1), (2);\nselect sum(n) from public.made;  -- the answer\n" })
  t.same([reply.status, reply.json.statements, reply.json.rows, reply.json.command], [200, 3, [['3']], 'SELECT'])
  t.equal((await owner.query('select count(*)::int as n from public.made')).rows[0].n, 2, 'committed')
  const write = await table({ query: "insert into public.made values (3), (4), (5)" })
  t.same([write.json.command, write.json.row_count, write.json.columns], ['INSERT', 3, []], "a write's count")
  const failed = await table({ query: 'create table public.never (n int);\nselect 1/0;' })
  t.same([failed.status, (failed.json as unknown as { sqlstate: string; statement: number }).sqlstate, (failed.json as unknown as { statement: number }).statement], [400, '22012', 2])
  t.equal((await owner.query("select to_regclass('public.never') as r")).rows[0].r, null, 'the first statement rolled back')
  const dollars = await table({ query: "create function public.semi() returns text language plpgsql as $$ begin return 'a;b'; end $$;\nselect public.semi(), 'x;y' as \"c;d\"" })
  t.same(dollars.json.rows, [['a;b', 'x;y']], 'semicolons in dollar quotes, strings and identifiers do not cut')
  const atomic = await table({ query: 'create function public.two() returns int language sql begin atomic select 1; select 2; end;\nselect public.two()' })
  t.same(atomic.json.rows, [['2']], 'a BEGIN ATOMIC body is one statement')
})

t.test("errors: PostgreSQL's code, message, detail, hint and position in the whole text", async (t) => {
  const syntax = await table({ query: 'select 1;\n  selec 2' })
  t.equal(syntax.status, 400)
  t.match(syntax.json, { code: 'sql_failed', sqlstate: '42601', message: 'syntax error at or near "selec"', position: 13, line: 2, column: 3, statement: 2 })
  const hinted = await table({ query: 'select no_such_function(1)' })
  t.match(hinted.json, { sqlstate: '42883', position: 8, hint: /No function matches the given name and argument types/ })
  const detailed = await table({ query: 'insert into public.notes (id) values (1)' })
  t.match(detailed.json, { sqlstate: '23505', detail: 'Key (id)=(1) already exists.' })
  const unicode = await table({ query: "select 'été' as a, nope" })
  t.equal((unicode.json as unknown as { position: number }).position, 20, 'counted in characters, as PostgreSQL counts')
})

t.test("the role's statement timeout, and a text that turns it off still ends", async (t) => {
  const patched = await request(`${platform.origin}/platform/v1/projects/${ref}/timeouts`, { method: 'PATCH', headers: auth, body: { anon: '300ms' } })
  t.equal(patched.status, 200)
  const slow = await table({ role: 'anon', query: 'select pg_sleep(2)' })
  t.match([slow.status, slow.json], [400, { sqlstate: '57014', message: /statement timeout/ }])
  const started = Date.now()
  const escaped = await table({ role: 'anon', query: 'set local statement_timeout = 0; select pg_sleep(30)' })
  t.match([escaped.status, escaped.json], [400, { sqlstate: '57014', message: /deadline/, statement: 2 }])
  t.ok(Date.now() - started < 15_000, 'ended at the deadline (300 ms and the margin), not after 30 s')
  const trickled = Date.now()
  const trickle = await table({ role: 'anon', query: 'select pg_sleep(0.0001) from generate_series(1, 40000); select 1' })
  t.match([trickle.status, trickle.json], [400, { sqlstate: '57014', statement: 1 }], 'a statement whose every fetch is quick still meets one deadline')
  t.ok(Date.now() - trickled < 15_000)
  const running = await owner.query<{ n: number }>("select count(*)::int as n from pg_stat_activity where query like '%pg_sleep(30)%' and pid <> pg_backend_pid()")
  t.equal(running.rows[0]!.n, 0, 'its backend was ended')
  await request(`${platform.origin}/platform/v1/projects/${ref}/timeouts`, { method: 'PATCH', headers: auth, body: { anon: null } })
})

t.test('EXPLAIN on request, ANALYZE rolled back', async (t) => {
  const text = await table({ query: 'select * from public.notes where id = 1', explain: true })
  t.equal(text.status, 200)
  t.match(text.json.explain, { format: 'text', analyze: false, plan: /Index Scan|Seq Scan/ })
  t.equal(text.json.committed, false)
  const json = await table({ query: 'select * from public.notes', explain: 'json' })
  t.match(json.json.explain, { format: 'json', plan: [{ Plan: { 'Node Type': 'Seq Scan' } }] })
  const before = await count()
  const analyzed = await table({ query: "insert into public.notes values (50, null, 'analyzed')", explain: true, analyze: true })
  t.match(analyzed.json.explain, { analyze: true, plan: /actual time/ })
  t.equal(await count(), before, 'the analyzed insert rolled back')
  const alone = await table({ query: 'select 1', analyze: true })
  t.same([alone.status, alone.json.code], [400, 'invalid_argument'])
})

t.test('read-only runs: asked for, and always for a read-only member', async (t) => {
  const before = await count()
  const asked = await table({ query: "insert into public.notes values (60, null, 'x')", read_only: true })
  t.match([asked.status, asked.json], [400, { sqlstate: '25006' }])
  const reader = member('read-only')
  const read = await runSql(platform.platform.controlPlane, ref, reader, { query: 'select count(*) from public.notes', role: 'owner' }, context)
  t.same([read.read_only, read.rows], [true, [[String(before)]]])
  for (const text of ["insert into public.notes values (61, null, 'x')", "select 1; insert into public.notes values (62, null, 'x')", "set transaction read write; insert into public.notes values (63, null, 'x')", "reset all; insert into public.notes values (66, null, 'x')", "set local transaction_read_only = off; insert into public.notes values (67, null, 'x')"]) {
    const refused = await runSql(platform.platform.controlPlane, ref, reader, { query: text, role: 'service_role' }, context).then(
      () => undefined,
      (error: unknown) => error,
    )
    t.ok(refused instanceof SqlError, text)
    t.match(refused, { sqlstate: /^25006|25001$/ })
  }
  const commit = await runSql(platform.platform.controlPlane, ref, reader, { query: "select 1; commit; insert into public.notes values (64, null, 'x')", role: 'owner' }, context).catch((e: unknown) => e)
  t.match(commit, { code: 'invalid_argument', field: 'query', message: /statement 2 \(COMMIT, line 1\)/ }, 'a COMMIT (which would let what follows write) is refused before anything runs')
  t.equal(await count(), before, 'nothing written')
  const hinted = await runSql(platform.platform.controlPlane, ref, reader, { query: 'delete from public.notes', role: 'owner' }, context).catch((e: unknown) => e)
  t.match(hinted, { hint: /read-only/ })
  const developer = await runSql(platform.platform.controlPlane, ref, member('developer'), { query: "insert into public.notes values (65, null, 'dev')", role: 'owner' }, context)
  t.same([developer.read_only, developer.row_count], [false, 1], 'a developer writes')
  const stranger: Caller = { kind: 'member', memberId: 'm-x', email: 'x@example.com', roles: new Map([['otherproject', 'owner']]) }
  t.match(await runSql(platform.platform.controlPlane, ref, stranger, { query: 'select 1', role: 'owner' }, context).catch((e: unknown) => e), { status: 403 })
})

t.test('history: the last runs of each caller, with role, rows or error code', async (t) => {
  const runs = await history()
  t.ok(runs.length >= 10)
  t.match(runs.find((run) => run.query === 'select * from public.notes' && run.explain), { role: 'owner', explain: true, error_code: null })
  t.match(runs.find((run) => run.query === 'select no_such_function(1)'), { error_code: '42883', row_count: null })
  t.match(runs.find((run) => run.user_id === adaId), { role: 'authenticated' })
  t.notOk(runs.some((run) => run.query.includes("'dev'")), "a member's runs are not the operator's")
  const mine = await sqlHistory(platform.platform.controlPlane, ref, member('read-only'))
  t.ok(mine.runs.length >= 4 && mine.runs.every((run) => run.read_only), "the read-only member's own runs")
  t.ok(mine.runs.some((run) => run.error_code === '25006' && run.role === 'service_role'), 'a refused write as service_role, with its code')
  const operator = await sqlHistory(platform.platform.controlPlane, ref, OPERATOR, 2)
  t.equal(operator.runs.length, 2)
})

t.test('bad input: 400 in the admin API shape, nothing run, nothing recorded', async (t) => {
  const before = (await history()).length
  const cases: Array<[Record<string, unknown>, string, RegExp]> = [
    [{}, 'query', /query/],
    [{ query: '   -- only a comment\n' }, 'query', /no statement/],
    [{ query: 'select 1', role: 'postgres' }, 'role', /role must be one of owner, anon, authenticated, service_role/],
    [{ query: 'select 1', role: 'authenticated' }, 'user', /user/],
    [{ query: 'select 1', user: 'nobody@example.com' }, 'user', /nobody@example.com/],
    [{ query: 'select 1', role: 'anon', user: adaId }, 'user', /goes with role authenticated/],
    [{ query: 'select 1', explain: 'yaml' }, 'explain', /explain/],
    [{ query: 'select 1', colour: 'blue' }, 'colour', /Unknown field/],
    [{ query: 'select $1; select 2', parameters: [1] }, 'parameters', /one statement/],
    [{ query: 'begin; select 1' }, 'query', /BEGIN/],
  ]
  for (const [body, field, message] of cases) {
    const reply = await query<{ code: string; message: string }>(body)
    t.same([reply.status, reply.json.code], [400, 'invalid_argument'], `${JSON.stringify(body)} (${field})`)
    t.match(reply.json.message, message)
  }
  const bad = await request<{ code: string }>(queryUrl, { headers: { ...auth, 'content-type': 'application/json' }, body: '{"query": ' })
  t.same([bad.status, bad.json.code], [400, 'bad_json'])
  const unknown = await request<{ code: string }>(`${platform.origin}/platform/v1/projects/nosuchproject/database/query`, { headers: auth, body: { query: 'select 1' } })
  t.same([unknown.status, unknown.json.code], [404, 'project_not_found'])
  t.equal((await history()).length, before, 'none of them recorded')
  const withParameters = await query<unknown[]>({ query: 'select $1::int + 1 as n', parameters: [41] })
  t.same([withParameters.status, withParameters.json], [201, [{ n: 42 }]], "Supabase's parameters")
})

t.test('snippets: named, per caller, created, listed, renamed, rewritten, deleted', async (t) => {
  const url = `${platform.origin}/platform/v1/projects/${ref}/database/snippets`
  const made = await request<{ id: string; name: string; query: string }>(url, { headers: auth, body: { name: 'Public notes', query: 'select * from notes where public' } })
  t.equal(made.status, 201)
  t.match(made.json, { id: /^\d+$/, name: 'Public notes', query: 'select * from notes where public' })
  const again = await request<{ code: string }>(url, { headers: auth, body: { name: 'Public notes', query: 'select 1' } })
  t.same([again.status, again.json.code], [409, 'snippet_exists'])
  for (const body of [{ query: 'select 1' }, { name: 'x' }, { name: 'x'.repeat(101), query: 'select 1' }, { name: 'x', query: 'select 1', shared: true }]) {
    const refused = await request<{ code: string }>(url, { headers: auth, body })
    t.same([refused.status, refused.json.code], [400, 'invalid_argument'], JSON.stringify(body).slice(0, 60))
  }
  const other = await request<{ id: string }>(url, { headers: auth, body: { name: 'Count', query: 'select count(*) from notes' } })
  const listed = await request<{ snippets: Array<{ name: string }> }>(url, { headers: auth })
  t.same(listed.json.snippets.map((s) => s.name), ['Count', 'Public notes'], 'by name')
  const renamed = await request<{ name: string; query: string }>(`${url}/${made.json.id}`, { method: 'PATCH', headers: auth, body: { name: 'Everyone', query: 'select 2' } })
  t.same([renamed.status, renamed.json.name, renamed.json.query], [200, 'Everyone', 'select 2'])
  const clash = await request<{ code: string }>(`${url}/${made.json.id}`, { method: 'PATCH', headers: auth, body: { name: 'Count' } })
  t.same([clash.status, clash.json.code], [409, 'snippet_exists'])
  const removed = await request(`${url}/${other.json.id}`, { method: 'DELETE', headers: auth })
  t.equal(removed.status, 204)
  const gone = await request<{ code: string }>(`${url}/${other.json.id}`, { method: 'DELETE', headers: auth })
  t.same([gone.status, gone.json.code], [404, 'snippet_not_found'])
  const theirs = await createSqlSnippet(platform.platform.controlPlane, ref, member('developer'), { name: 'Everyone', query: 'select 3' })
  t.equal(theirs.name, 'Everyone', 'a member may use a name the operator uses')
  t.same((await listSqlSnippets(platform.platform.controlPlane, ref, member('developer'))).snippets.map((s) => s.query), ['select 3'], 'and sees only their own')
  const patchOther = await request<{ code: string }>(`${url}/${theirs.id}`, { method: 'PATCH', headers: auth, body: { query: 'select 4' } })
  t.equal(patchOther.status, 404, "the operator does not reach a member's snippet by its id")
})

t.test('the history keeps the newest runs of each caller and drops the older ones', async (t) => {
  const db = await import('../../control-plane/db/sql-editor.ts')
  const catalogue = platform.platform.controlPlane.catalogue
  const run = (n: number) => ({ ref, actor: 'member:keep@example.com', query: `select ${n}`, role: 'owner', userId: null, explain: false, readOnly: false, durationMs: 1, rowCount: 1, errorCode: null })
  for (const n of [1, 2, 3, 4]) await db.insertSqlRun(catalogue, run(n), 3)
  t.same((await db.sqlRuns(catalogue, ref, 'member:keep@example.com', 10)).map((r) => r.query), ['select 4', 'select 3', 'select 2'])
  t.ok((await db.sqlRuns(catalogue, ref, 'operator', 10)).length > 0, "another caller's runs are not dropped")
})

t.test("the SQL tab drawn for a read-only member: read-only checked, fixed, and said so", async (t) => {
  const { sqlScreen } = await import('../../control-plane/dashboard/pages/sql/screen.ts')
  const context = { controlPlane: platform.platform.controlPlane } as Parameters<typeof sqlScreen>[0]
  const reader = String((await sqlScreen(context, ref, member('read-only'))).body)
  t.match(reader, /id="sql-read-only" name="read_only" value="true" checked disabled/)
  t.match(reader, /Your role on this project is read-only/)
  const operator = String((await sqlScreen(context, ref, OPERATOR)).body)
  t.notMatch(operator, /checked disabled/)
  t.match(operator, /<option value="owner">the owner/)
})
