// Supabase's default extensions in every project database (issue 40 item 9):
// a seed written for Supabase (crypt(..., gen_salt('bf')), uuid_generate_v4(),
// unqualified) loads through `baseplane db url` into a new project and into
// one made before the change (its schema `extensions`, the extensions and the
// database's search path taken away, the migration forgotten), which the
// upgrade every start runs brings back. The API roles reach the functions
// too: a Data API request finds them on its search path.
import { createClient } from '@supabase/supabase-js'
import pg from 'pg'
import t, { type Test } from 'tap'
import { upgradeAllProjects } from '../../control-plane/projects.ts'
import { DEFAULT_EXTENSIONS } from '../../control-plane/default-extensions.ts'
import { runCli } from '../helpers/cli.ts'
import { adminQuery, serverUrl, withDatabase } from '../helpers/db.ts'
import { startTestPlatform, type TestProject } from '../helpers/platform.ts'

const test = await startTestPlatform(t)
const server = await serverUrl()

const SEED = `
  create table public.members (
    id uuid primary key default uuid_generate_v4(),
    email text not null unique,
    password_hash text not null
  );
  alter table public.members enable row level security;
  create policy "members read" on public.members for select to anon using (true);
  insert into public.members (email, password_hash) values
    ('ada@example.test', crypt('correct horse', gen_salt('bf'))),
    ('alan@example.test', crypt('battery staple', gen_salt('bf', 6)));
  create function public.password_matches(member_email text, attempt text) returns boolean
    language sql stable as $$
      select password_hash = crypt(attempt, password_hash) from public.members where email = member_email
    $$;
  create function public.new_id() returns uuid language sql volatile as $$ select uuid_generate_v4() $$;
`

/** The project's owner URL, as an operator gets it. */
async function ownerUrl(ref: string): Promise<string> {
  const run = await runCli(['db', 'url', ref], { DATABASE_URL: test.catalogueUrl, BASEPLANE_LOG_LEVEL: 'silent' })
  if (run.code !== 0) throw new Error(`baseplane db url failed: ${run.stderr}`)
  return run.stdout.trim()
}

async function asOwner<T>(ref: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: await ownerUrl(ref) })
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}

async function extensionsOf(database: string): Promise<Array<{ extname: string; schema: string }>> {
  const { rows } = await adminQuery<{ extname: string; schema: string }>(
    withDatabase(server, database),
    `select e.extname, n.nspname as schema from pg_extension e join pg_namespace n on n.oid = e.extnamespace
      where e.extname = any($1) order by e.extname`,
    [DEFAULT_EXTENSIONS],
  )
  return rows
}

/** Loads the seed as the owner and checks it through the owner's session and the Data API. */
async function seedAndCheck(t: Test, project: TestProject): Promise<void> {
  const ref = project.record.ref
  const seeded = await asOwner(ref, async (owner) => {
    const path = (await owner.query<{ search_path: string }>('show search_path')).rows[0]!.search_path
    await owner.query(SEED)
    const { rows } = await owner.query<{ email: string; hashed: boolean; uuid_v4: boolean }>(
      `select email, password_hash like '$2a$%' as hashed, id::text ~ '^[0-9a-f]{8}-[0-9a-f]{4}-4' as uuid_v4 from members order by email`,
    )
    return { path, rows }
  })
  t.equal(seeded.path, '"$user", public, extensions', "the owner's search path ends in extensions")
  t.same(seeded.rows, [
    { email: 'ada@example.test', hashed: true, uuid_v4: true },
    { email: 'alan@example.test', hashed: true, uuid_v4: true },
  ], 'crypt() hashed with bcrypt and uuid_generate_v4() made version 4 keys')

  const supabase = createClient(project.baseUrl, project.anonKey, { auth: { persistSession: false, autoRefreshToken: false } })
  const right = await supabase.rpc('password_matches', { member_email: 'ada@example.test', attempt: 'correct horse' })
  t.same([right.error, right.data], [null, true], 'crypt() resolves on a Data API request')
  const wrong = await supabase.rpc('password_matches', { member_email: 'ada@example.test', attempt: 'wrong' })
  t.same([wrong.error, wrong.data], [null, false])
  const id = await supabase.rpc('new_id')
  t.equal(id.error, null)
  t.match(id.data, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'uuid_generate_v4() resolves on a Data API request')
  const listed = await supabase.from('members').select('email').order('email')
  t.same([listed.error, listed.data], [null, [{ email: 'ada@example.test' }, { email: 'alan@example.test' }]])
}

t.test('a new project has pgcrypto and uuid-ossp in extensions, and a Supabase seed loads', async (t) => {
  const project = await test.createProject({})
  t.same(await extensionsOf(project.record.dbName), [
    { extname: 'pgcrypto', schema: 'extensions' },
    { extname: 'uuid-ossp', schema: 'extensions' },
  ])
  await seedAndCheck(t, project)
})

t.test('a project made before the change gets them on the next upgrade', async (t) => {
  const project = await test.createProject({})
  const inProject = withDatabase(server, project.record.dbName)
  // Back to the shape of a project made before sql/project/0060.
  await adminQuery(inProject, `drop schema extensions cascade; delete from baseplane.migrations where migration_set = 'project' and version = 60`)
  await adminQuery(server, `alter database "${project.record.dbName}" reset search_path`)
  t.same(await extensionsOf(project.record.dbName), [], 'no default extension left')
  const before = await asOwner(project.record.ref, (owner) => owner.query('select uuid_generate_v4()').then(() => null, (error: { code?: string }) => error.code))
  t.equal(before, '42883', 'the seed would fail as the issue saw it: no uuid_generate_v4()')

  const { applied } = await upgradeAllProjects(test.platform.controlPlane)
  t.same(applied.get(project.record.ref), [60], 'the extensions migration applied')
  t.same(await extensionsOf(project.record.dbName), [
    { extname: 'pgcrypto', schema: 'extensions' },
    { extname: 'uuid-ossp', schema: 'extensions' },
  ])
  await seedAndCheck(t, project)
})

t.test('an extension the owner installed elsewhere is left where it is', async (t) => {
  const project = await test.createProject({})
  const inProject = withDatabase(server, project.record.dbName)
  await adminQuery(inProject, `drop extension pgcrypto; create extension pgcrypto with schema public`)
  const { applied } = await upgradeAllProjects(test.platform.controlPlane)
  t.same(applied.get(project.record.ref), undefined, 'nothing to migrate')
  t.same(await extensionsOf(project.record.dbName), [
    { extname: 'pgcrypto', schema: 'public' },
    { extname: 'uuid-ossp', schema: 'extensions' },
  ], 'pgcrypto stays in public; the upgrade neither moves nor duplicates it')
  await seedAndCheck(t, project)
})
