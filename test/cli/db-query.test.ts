// `baseplane db query REF`, as an operator runs it (the real command line in
// a child process, on a running platform's catalogue): SQL from standard
// input and from --file, the table it prints (types under the names, NULL
// apart from the text NULL, the rows counted, more pages named), each role
// under row-level security, a write's count, EXPLAIN, --json, a refusal with
// its line, caret and hint, and the command line's own refusals; and its
// remote form, the admin API call a member's token makes, answered as `run`.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import t from 'tap'
import { createClient } from '@supabase/supabase-js'
import { ownerUrlOf } from '../../lib/catalogue.ts'
import { dbQueryCommand, showSqlResult } from '../../cli/commands/db-query.ts'
import type { SqlResultView } from '../../control-plane/sql-editor.ts'
import { runCli } from '../helpers/cli.ts'
import { request } from '../helpers/http.ts'
import { startTestPlatform } from '../helpers/platform.ts'

const platform = await startTestPlatform(t)
const project = await platform.createProject({ name: 'Cli Sql', auth: true })
const ref = project.ref
const port = new URL(platform.origin).port
const baseplane = (args: string[], input = '') => runCli(args, { DATABASE_URL: platform.catalogueUrl, PORT: port }, input)
const admin = createClient(project.baseUrl, project.serviceRoleKey, { auth: { persistSession: false } })
const ada = await admin.auth.admin.createUser({ email: 'ada@example.com', email_confirm: true })
if (ada.error) throw ada.error
const owner = new pg.Client({ connectionString: ownerUrlOf(project.record) })
await owner.connect()
t.teardown(() => owner.end())
await owner.query(`
  create table public.notes (id int primary key, owner uuid, body text, public boolean not null default false);
  alter table public.notes enable row level security;
  create policy everyone on public.notes for select to anon using (public);
  create policy own on public.notes for select to authenticated using (public or owner = auth.uid());
  grant select on public.notes to anon, authenticated, service_role;
  insert into public.notes values (1, '${ada.data.user!.id}', 'ada''s', false), (2, null, 'NULL', true), (3, null, null, false);`)

t.test('a table from standard input: names, types, NULL apart from the text NULL, the rows counted', async (t) => {
  const run = await baseplane(['db', 'query', ref], 'select id, body from public.notes order by id;')
  t.equal(run.code, 0, run.stderr)
  t.equal(run.stdout, ['id       body', 'integer  text', '1        ada\'s', "2        'NULL'", '3        NULL', '(3 rows)', ''].join('\n'))
})

t.test('--file, the roles under row-level security, a write, pages', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bp-sql-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  const file = path.join(dir, 'ids.sql')
  fs.writeFileSync(file, '-- which rows\nselect id from public.notes order by id\n')
  const ids = async (args: string[]) => {
    const run = await baseplane(['db', 'query', ref, '--file', file, '--json', ...args])
    t.equal(run.code, 0, run.stderr)
    return (JSON.parse(run.stdout) as SqlResultView).rows.map((row) => Number(row[0]))
  }
  t.same(await ids([]), [1, 2, 3], 'the owner')
  t.same(await ids(['--role', 'anon']), [2], 'anon')
  t.same(await ids(['--user', 'ada@example.com']), [1, 2], 'ada')
  t.same(await ids(['--role', 'service_role']), [1, 2, 3], 'service_role')
  const write = await baseplane(['db', 'query', ref], "create table public.made (n int); insert into public.made values (1), (2)")
  t.same([write.code, write.stdout], [0, 'INSERT 2\n'], write.stderr)
  const page = await baseplane(['db', 'query', ref, '--limit', '2'], 'select g from generate_series(1, 5) g')
  t.match(page.stdout, /\n\(2 rows; there are more: --offset 2\)\n$/)
  const next = await baseplane(['db', 'query', ref, '--limit', '2', '--offset', '4'], 'select g from generate_series(1, 5) g')
  t.match(next.stdout, /^g\s*\ninteger\n5\n\(rows 5 to 5 of 5\)\n$/)
  const readOnly = await baseplane(['db', 'query', ref, '--read-only'], 'insert into public.made values (3)')
  t.equal(readOnly.code, 1)
  t.match(readOnly.stderr, /25006: cannot execute INSERT in a read-only transaction/)
})

t.test('--explain prints the plan', async (t) => {
  const run = await baseplane(['db', 'query', ref, '--explain'], 'select * from public.notes')
  t.equal(run.code, 0, run.stderr)
  t.match(run.stdout, /^Seq Scan on notes/)
  const json = await baseplane(['db', 'query', ref, '--explain', '--explain-format', 'json'], 'select * from public.notes')
  t.match(JSON.parse(json.stdout), [{ Plan: { 'Node Type': 'Seq Scan' } }])
})

t.test('a refusal: its line with a caret under the position, and the hint', async (t) => {
  const run = await baseplane(['db', 'query', ref], 'select 1;\nselect no_such(1)')
  t.equal(run.code, 1)
  t.equal(
    run.stderr,
    [
      'baseplane: ERROR:  42883: function no_such(integer) does not exist',
      'LINE 2: select no_such(1)',
      '               ^',
      'HINT:  No function matches the given name and argument types. You might need to add explicit type casts.',
      '',
    ].join('\n'),
  )
  const column = await baseplane(['db', 'query', ref], 'select role from public.notes')
  t.match(column.stderr, /column "role" does not exist/, "PostgreSQL's words are not rewritten into flags")
})

t.test("the command line's refusals", async (t) => {
  const cases: Array<[string[], string, number, RegExp]> = [
    [['--role', 'postgres'], 'select 1', 1, /--role must be one of owner, anon, authenticated, service_role, got "postgres"/],
    [['--role', 'authenticated'], 'select 1', 1, /--role authenticated needs --user/],
    [['--role', 'anon', '--user', 'ada@example.com'], 'select 1', 1, /--user goes with --role authenticated, not anon/],
    [['--user', 'nobody@example.com'], 'select 1', 1, /nobody@example.com/],
    [['--analyze'], 'select 1', 2, /--analyze goes with --explain/],
    [['--limit', '0'], 'select 1', 1, /--limit must be a whole number from 1 to 1000, got 0/],
    [[], '  -- nothing\n', 1, /holds no statement/],
    [[], 'begin; select 1; commit', 1, /statement 1 \(BEGIN, line 1\) would end the run's transaction/],
    [['--file', '/nonexistent/x.sql'], '', 1, /--file \/nonexistent\/x.sql: no such file/],
  ]
  for (const [args, input, code, message] of cases) {
    const run = await baseplane(['db', 'query', ref, ...args], input)
    t.equal(run.code, code, `${args.join(' ')}: ${run.stderr}`)
    t.match(run.stderr, message)
    t.equal(run.stdout, '')
  }
  const unknown = await baseplane(['db', 'query', 'nosuchproject'], 'select 1')
  t.match([unknown.code, unknown.stderr], [1, /Project "nosuchproject" not found/])
})

t.test('the remote form: the admin API call a member token makes, answered as run answers', async (t) => {
  const context = { readStdin: async () => 'select id, body from public.notes where id = 2' } as unknown as Parameters<NonNullable<typeof dbQueryCommand.remote>>[1]
  const call = await dbQueryCommand.remote!({ values: { role: 'anon', limit: '10' }, positionals: [ref] }, context)
  t.same(call, { method: 'POST', path: `/projects/${ref}/database/query`, body: { format: 'table', query: 'select id, body from public.notes where id = 2', role: 'anon', limit: 10 } })
  const reply = await request<SqlResultView>(`${platform.origin}/platform/v1${call.path}`, { headers: { authorization: `Bearer ${platform.config.adminToken}` }, body: call.body as object })
  t.equal(reply.status, 200)
  t.equal(showSqlResult(reply.json), ['id       body', 'integer  text', "2        'NULL'", '(1 row)'].join('\n'))
})
