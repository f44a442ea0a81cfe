// Migrations (issue 42 item 7): `baseplane db push REF --dir DIR` and `db
// migrations`, and the admin API's `/database/migrations`, against a real
// project database: applied as the owner in version order and recorded in
// supabase_migrations.schema_migrations; applied twice, the second a no-op;
// a changed one refused with nothing applied; a failing one rolled back,
// naming its file, line and PostgreSQL's error, those before it kept.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import t from 'tap'
import { ownerUrlOf } from '../../lib/catalogue.ts'
import { developerToolCommands } from '../../cli/commands/developer-tools.ts'
import type { CliContext, ParsedArgs } from '../../cli/command.ts'
import { runCli } from '../helpers/cli.ts'
import { request, type ErrorBody } from '../helpers/http.ts'
import { startTestPlatform, type TestProject } from '../helpers/platform.ts'

const platform = await startTestPlatform(t)
const port = new URL(platform.origin).port
const baseplane = (args: string[]) => runCli(args, { DATABASE_URL: platform.catalogueUrl, PORT: port })
const admin = `${platform.origin}/platform/v1`
const auth = { authorization: `Bearer ${platform.config.adminToken}` }

async function ownerOf(project: TestProject): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: ownerUrlOf(project.record) })
  // A suspension ends the owner's sessions, this one too.
  client.on('error', () => {})
  await client.connect()
  t.teardown(() => client.end())
  return client
}

const tablesOf = async (owner: pg.Client) =>
  (await owner.query<{ name: string }>(`select tablename as name from pg_tables where schemaname = 'public' order by 1`)).rows.map((row) => row.name)
const ledgerOf = async (owner: pg.Client) =>
  (await owner.query<{ version: string; name: string; statements: string[]; created_by: string }>('select version, name, statements, created_by from supabase_migrations.schema_migrations order by version')).rows

t.test('db push and db migrations on a folder', async (t) => {
  const project = await platform.createProject({ name: 'Pushed' })
  const owner = await ownerOf(project)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bp-migrations-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  const write = (file: string, sql: string) => fs.writeFileSync(path.join(dir, file), sql)
  write('20240101000000_create_authors.sql', '-- the authors\ncreate table authors (id bigint primary key, name text not null);\ninsert into authors values (1, \'Ann\');\n')
  write('20240102000000_create_posts.sql', "create table posts (id bigint primary key, author_id bigint references authors (id), body text default 'a;b');\n")
  write('README.md', 'not a migration')

  const pushed = await baseplane(['db', 'push', project.ref, '--dir', dir])
  t.equal(pushed.code, 0, pushed.stderr)
  t.equal(pushed.stdout, `Applied 2 migrations to ${project.ref}:\n  20240101000000_create_authors\n  20240102000000_create_posts\n`)
  t.same(await tablesOf(owner), ['authors', 'posts'])
  const { rows: owned } = await owner.query<{ owner: string }>(`select tableowner as owner from pg_tables where tablename = 'posts'`)
  t.equal(owned[0]!.owner, project.record.dbOwnerRole, 'made as the owner role')
  t.same(await ledgerOf(owner), [
    { version: '20240101000000', name: 'create_authors', statements: ['-- the authors\ncreate table authors (id bigint primary key, name text not null)', "insert into authors values (1, 'Ann')"], created_by: 'operator' },
    { version: '20240102000000', name: 'create_posts', statements: ["create table posts (id bigint primary key, author_id bigint references authors (id), body text default 'a;b')"], created_by: 'operator' },
  ])

  const again = await baseplane(['db', 'push', project.ref, '--dir', dir])
  t.equal(again.code, 0, again.stderr)
  t.equal(again.stdout, `Nothing to apply to ${project.ref}: the 2 migrations are applied already\n`)
  t.equal((await ledgerOf(owner)).length, 2, 'the second push recorded nothing')
  t.equal((await owner.query('select * from authors')).rowCount, 1, 'and ran nothing again')

  // Changed after it was applied: refused whole, the new one not applied either.
  write('20240101000000_create_authors.sql', "create table authors (id bigint primary key, name text not null);\ninsert into authors values (1, 'Ann'), (2, 'Bob');\n")
  write('20240103000000_create_tags.sql', 'create table tags (name text primary key);\n')
  const changed = await baseplane(['db', 'push', project.ref, '--dir', dir])
  t.equal(changed.code, 1)
  t.match(changed.stderr, /20240101000000_create_authors\.sql was applied with other statements than its file has now; nothing was applied/)
  t.same(await tablesOf(owner), ['authors', 'posts'], 'tags was not made')
  const listed = await baseplane(['db', 'migrations', project.ref, '--dir', dir])
  t.equal(listed.code, 0, listed.stderr)
  t.match(listed.stdout, /^VERSION\s+NAME\s+STATE\n20240101000000\s+create_authors\s+changed\n20240102000000\s+create_posts\s+applied\n20240103000000\s+create_tags\s+pending\n$/)

  // Only its comments and layout changed: the same migration.
  write('20240101000000_create_authors.sql', "create table authors (\n  id bigint primary key,\n  name text not null\n); -- reformatted\ninsert into authors values (1, 'Ann');")
  const reformatted = await baseplane(['db', 'push', project.ref, '--dir', dir])
  t.equal(reformatted.code, 0, reformatted.stderr)
  t.equal(reformatted.stdout, `Applied 1 migration to ${project.ref}:\n  20240103000000_create_tags\n(2 applied before, left as they are)\n`)

  // A failing migration: rolled back, those before it stay, those after it are not applied.
  write('20240104000000_create_likes.sql', 'create table likes (post_id bigint references posts (id));\n')
  write('20240105000000_broken.sql', 'create table broken_one (id int);\n\ncreate tabel broken_two (id int);\n')
  write('20240106000000_after.sql', 'create table after_broken (id int);\n')
  const failed = await baseplane(['db', 'push', project.ref, '--dir', dir])
  t.equal(failed.code, 1)
  t.match(failed.stderr, new RegExp(`${dir.replaceAll('/', '\\/')}\\/20240105000000_broken\\.sql failed at statement 2 \\(line 3, column 8\\): syntax error at or near "tabel" \\(SQLSTATE 42601\\); it and the 1 after it were not applied, applied before it: .*20240104000000_create_likes\\.sql`))
  t.same(await tablesOf(owner), ['authors', 'likes', 'posts', 'tags'], 'likes applied; broken_one rolled back; after_broken not run')
  t.same((await ledgerOf(owner)).map((row) => row.version), ['20240101000000', '20240102000000', '20240103000000', '20240104000000'])

  const ledgerOnly = await baseplane(['db', 'migrations', project.ref, '--json'])
  t.equal(ledgerOnly.code, 0, ledgerOnly.stderr)
  t.same(JSON.parse(ledgerOnly.stdout), {
    ref: project.ref,
    compared: false,
    migrations: [
      { version: '20240101000000', name: 'create_authors', state: 'applied' },
      { version: '20240102000000', name: 'create_posts', state: 'applied' },
      { version: '20240103000000', name: 'create_tags', state: 'applied' },
      { version: '20240104000000', name: 'create_likes', state: 'applied' },
    ],
  })

  // The remote form a member's token takes: the route answers what the command's run does.
  const listCommand = developerToolCommands.find((command) => command.words.join(' ') === 'db migrations')!
  const call = await listCommand.remote!({ values: { dir }, positionals: [project.ref] } as ParsedArgs, {} as CliContext)
  t.match(call, { method: 'POST', path: `/projects/${project.ref}/database/migrations/status` })
  const remote = await request(`${admin}${call.path}`, { method: call.method, headers: auth, body: call.body as object })
  const local = await baseplane(['db', 'migrations', project.ref, '--dir', dir, '--json'])
  t.equal(remote.status, 200, remote.text)
  t.same(remote.json, JSON.parse(local.stdout), 'the remote call answers what the command prints with --json')

  write('create.sql', 'select 1;')
  const misnamed = await baseplane(['db', 'push', project.ref, '--dir', dir])
  t.equal(misnamed.code, 1)
  t.match(misnamed.stderr, /create\.sql is not named as a migration: <version>_<name>\.sql/)
  const missing = await baseplane(['db', 'push', project.ref, '--dir', path.join(dir, 'nowhere')])
  t.equal(missing.code, 1)
  t.match(missing.stderr, /cannot read the migrations folder .*nowhere: it does not exist/)
})

t.test('the admin API: apply, list, twice, changed, failing, refusals', async (t) => {
  const project = await platform.createProject({ name: 'Pushed by API' })
  const owner = await ownerOf(project)
  const url = `${admin}/projects/${project.ref}/database/migrations`
  const post = (body: object) => request<Record<string, unknown> & ErrorBody>(url, { headers: auth, body })

  const empty = await request(url, { headers: auth })
  t.same({ status: empty.status, body: empty.json }, { status: 200, body: [] }, 'no ledger yet: nothing applied')

  const first = await post({ migrations: [{ version: '2', name: 'two', query: 'create table b (id int); insert into b values (1);' }, { version: '1', name: 'one', statements: ['create table a (id int)'] }] })
  t.same({ status: first.status, body: first.json }, { status: 200, body: { ref: project.ref, applied: [{ version: '1', name: 'one' }, { version: '2', name: 'two' }], already_applied: 0 } }, 'in version order')
  t.same(await tablesOf(owner), ['a', 'b'])
  const listed = await request(url, { headers: auth })
  t.same(listed.json, [{ version: '1', name: 'one' }, { version: '2', name: 'two' }], "Supabase's list shape")

  const twice = await post({ migrations: [{ version: '1', name: 'one', statements: ['create table a (id int)'] }] })
  t.same(twice.json, { ref: project.ref, applied: [], already_applied: 1 })

  const changed = await post({ migrations: [{ version: '1', name: 'one', statements: ['create table a (id bigint)'] }, { version: '3', name: 'three', statements: ['create table c (id int)'] }] })
  t.equal(changed.status, 409)
  t.match(changed.json, { code: 'migration_changed', message: /^1_one was applied with other statements/ })
  t.same(await tablesOf(owner), ['a', 'b'])

  const status = await request<{ migrations: unknown[] }>(`${url}/status`, { headers: auth, body: { migrations: [{ version: '1', name: 'one', statements: ['create table a (id bigint)'] }, { version: '3', name: 'three', statements: ['select 1'] }] } })
  t.equal(status.status, 200, status.text)
  t.same(status.json.migrations, [
    { version: '1', name: 'one', state: 'changed' },
    { version: '2', name: 'two', state: 'applied, no local file' },
    { version: '3', name: 'three', state: 'pending' },
  ])

  const failing = await post({ migrations: [{ version: '4', name: 'ok', statements: ['create table d (id int)'] }, { version: '5', name: 'bad', statements: ['create table e (id int)', 'insert into e values (1)', "insert into e values ('x')"] }] })
  t.equal(failing.status, 400)
  t.match(failing.json, { code: 'migration_failed', message: /^5_bad failed at statement 3 \(line 1, column 23 of the statement\): invalid input syntax for type integer: "x" \(SQLSTATE 22P02\); it was rolled back, applied before it: 4_ok$/ })
  t.same(await tablesOf(owner), ['a', 'b', 'd'])

  const supabaseForm = await post({ query: 'create table f (id int);', name: 'from_studio' })
  t.equal(supabaseForm.status, 200, supabaseForm.text)
  t.match(supabaseForm.json, { applied: [{ version: /^\d{14}$/, name: 'from_studio' }] })

  for (const [body, message] of [
    [{}, /the body needs migrations/],
    [{ migrations: 'x' }, /migrations must be a list/],
    [{ migrations: [{ version: 'v1', statements: [] }] }, /migrations\[0\]\.version must be a string of digits/],
    [{ migrations: [{ version: '7' }] }, /needs either statements .* or query/],
    [{ migrations: [{ version: '7', statements: [1] }] }, /statements must be a list of strings/],
    [{ migrations: [{ version: '7', statements: [] }, { version: '7', query: 'select 1' }] }, /two migrations of version 7/],
  ] as const) {
    const refused = await post(body)
    t.equal(refused.status, 400, JSON.stringify(body))
    t.match(refused.json, { code: 'invalid_argument', message })
  }
  t.equal((await ledgerOf(owner)).length, 4, 'no refusal recorded anything')

  await request(`${admin}/projects/${project.ref}/suspend`, { headers: auth, body: { reason: 'unpaid' } })
  const suspended = await post({ migrations: [{ version: '9', statements: ['select 1'] }] })
  t.equal(suspended.status, 409)
  t.match(suspended.json, { code: 'project_not_active', message: /is suspended: its owner role cannot log in until it is resumed/ })
})

t.test("a ledger an older Supabase CLI made: its rows kept, Studio's columns added", async (t) => {
  const project = await platform.createProject({ name: 'Moved from Supabase' })
  const owner = await ownerOf(project)
  await owner.query(`
    create schema supabase_migrations;
    create table supabase_migrations.schema_migrations (version text not null primary key);
    alter table supabase_migrations.schema_migrations add column statements text[];
    alter table supabase_migrations.schema_migrations add column name text;
    insert into supabase_migrations.schema_migrations (version, name) values ('20230101000000', 'repaired');
    insert into supabase_migrations.schema_migrations (version, name, statements) values ('20230102000000', 'kept', array['create table kept (id int)']);
    create table kept (id int);
  `)
  const url = `${admin}/projects/${project.ref}/database/migrations`
  const pushed = await request(url, {
    headers: auth,
    body: { migrations: [{ version: '20230101000000', name: 'repaired', statements: ['create table whatever (id int)'] }, { version: '20230102000000', name: 'kept', query: '-- as it was\ncreate table kept (id int);' }, { version: '20230103000000', name: 'next', statements: ['create table next (id int)'] }] },
  })
  t.same({ status: pushed.status, body: pushed.json }, { status: 200, body: { ref: project.ref, applied: [{ version: '20230103000000', name: 'next' }], already_applied: 2 } })
  t.same(await tablesOf(owner), ['kept', 'next'])
  const { rows } = await owner.query(`select version, created_by from supabase_migrations.schema_migrations order by version`)
  t.same(rows, [{ version: '20230101000000', created_by: null }, { version: '20230102000000', created_by: null }, { version: '20230103000000', created_by: 'operator' }])
  const status = await request<{ migrations: unknown[] }>(`${url}/status`, { headers: auth, body: { migrations: [{ version: '20230101000000', name: 'repaired', statements: ['select 2'] }] } })
  t.same(status.json.migrations, [
    { version: '20230101000000', name: 'repaired', state: 'applied, statements not recorded' },
    { version: '20230102000000', name: 'kept', state: 'applied, no local file' },
    { version: '20230103000000', name: 'next', state: 'applied, no local file' },
  ])
})
