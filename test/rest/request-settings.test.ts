// What PostgREST tells SQL about the request, through supabase-js and real
// HTTP: request.method, request.path, request.headers and request.cookies
// read by policies and functions, and the pre-request function named by the
// database setting pgrst.db_pre_request (its raised PTxyz answering xyz).
import t from 'tap'
import { escapeIdentifier } from 'pg'
import { adminQuery, serverUrl } from '../helpers/db.ts'
import { restProject } from './helpers.ts'

const f = await restProject(t, `
  create table notes (id int primary key, body text);
  insert into notes values (1, 'first');
  alter table notes enable row level security;
  create policy by_header on notes for select using (current_setting('request.headers', true)::json->>'x-custom' = 'open');
  create policy by_method on notes for insert with check (current_setting('request.method', true) = 'POST' and current_setting('request.path', true) = '/notes');
  grant select, insert on notes to anon;
  create function whoami() returns json language sql stable as $$
    select json_build_object('method', current_setting('request.method', true), 'path', current_setting('request.path', true),
      'headers', current_setting('request.headers', true)::json, 'cookies', current_setting('request.cookies', true)::json,
      'sub', current_setting('request.jwt.claims', true)::json->>'sub')
  $$;
  create function check_request() returns void language plpgsql stable as $$
  begin
    if current_setting('request.headers', true)::json->>'x-blocked' = 'yes' then
      raise sqlstate 'PT403' using message = 'Blocked by the pre-request check', detail = 'x-blocked is set', hint = 'Drop the header';
    end if;
  end $$;
  create function refuse_all() returns void language plpgsql stable as $$begin raise exception 'closed for %', current_setting('request.path', true); end$$;
  grant execute on all functions in schema public to anon, authenticated;
`)
const database = (await f.sql('select current_database() as name')).rows[0].name as string
const admin = async (sql: string) => adminQuery(await serverUrl(), sql)
t.teardown(() => admin(`alter database ${escapeIdentifier(database)} reset pgrst.db_pre_request`).catch(() => {}))

interface Who {
  method: string
  path: string
  headers: Record<string, string>
  cookies: Record<string, string>
  sub: string | null
}

t.test('a policy reads request.headers, request.method and request.path', async (t) => {
  const plain = await f.anon().from('notes').select('id, body')
  t.equal(plain.error, null)
  t.same(plain.data, [], 'without the header the policy shows nothing')
  const open = f.anon()
  const withHeader = await f.anon().from('notes').select('id, body').setHeader('x-custom', 'open')
  t.equal(withHeader.error, null)
  t.same(withHeader.data, [{ id: 1, body: 'first' }])
  // Twice, so the second runs on the thread's known schema (one message).
  const again = await f.anon().from('notes').select('id').setHeader('x-custom', 'open')
  t.same(again.data, [{ id: 1 }])
  const inserted = await open.from('notes').insert({ id: 2, body: 'posted' })
  t.equal(inserted.error, null)
  t.equal(inserted.status, 201)
  t.equal((await f.sql('select body from notes where id = 2')).rows[0].body, 'posted')
})

t.test('functions see the method, the path, the headers and the cookies', async (t) => {
  const s = f.anon()
  const post = await s.rpc('whoami').setHeader('x-custom', 'yes')
  t.equal(post.error, null)
  const who = post.data as Who
  t.equal(who.method, 'POST')
  t.equal(who.path, '/rpc/whoami')
  t.equal(who.headers['x-custom'], 'yes')
  t.match(who.headers['x-client-info'], /^supabase-js/)
  t.equal(who.headers['content-type'], 'application/json')
  t.notOk('apikey' in who.headers, 'the apikey is left out')
  t.notOk('authorization' in who.headers, 'the bearer token is left out')
  t.same(who.cookies, {})
  const get = await s.rpc('whoami', {}, { get: true })
  t.equal(get.error, null)
  t.equal((get.data as Who).method, 'GET')
  const user = await (await f.user('0b7e4c3a-1a2b-4c5d-8e9f-000000000001')).rpc('whoami')
  t.equal(user.error, null)
  t.equal((user.data as Who).sub, '0b7e4c3a-1a2b-4c5d-8e9f-000000000001', 'request.jwt.claims still set beside them')
  const raw = await f.raw<Who>('/rpc/whoami', { method: 'POST', headers: { cookie: 'a=1; theme=dark; a=2', 'X-Mixed-Case': 'v' }, body: {} })
  t.equal(raw.status, 200)
  t.same(raw.json.cookies, { a: '1', theme: 'dark' })
  t.notOk('cookie' in raw.json.headers, 'cookies are request.cookies, not a header')
  t.equal(raw.json.headers['x-mixed-case'], 'v', 'names are lower-cased')
})

t.test('the pre-request function named by pgrst.db_pre_request', async (t) => {
  const s = f.anon()
  // Warm: this thread has planned requests with no pre-request function.
  t.equal((await s.rpc('whoami').setHeader('x-blocked', 'yes')).error, null)
  await admin(`alter database ${escapeIdentifier(database)} set pgrst.db_pre_request = 'public.check_request'`)

  const blocked = await s.rpc('whoami').setHeader('x-blocked', 'yes')
  t.equal(blocked.status, 403)
  t.same(blocked.error, { code: 'PT403', message: 'Blocked by the pre-request check', details: 'x-blocked is set', hint: 'Drop the header' })
  const allowed = await s.rpc('whoami')
  t.equal(allowed.error, null)
  t.equal((allowed.data as Who).path, '/rpc/whoami')

  const read = await s.from('notes').select('id').setHeader('x-custom', 'open').setHeader('x-blocked', 'yes')
  t.equal(read.status, 403)
  t.equal(read.error?.code, 'PT403')
  const readAgain = await s.from('notes').select('id').order('id').setHeader('x-custom', 'open')
  t.equal(readAgain.error, null)
  t.same(readAgain.data, [{ id: 1 }, { id: 2 }])

  const write = await s.from('notes').insert({ id: 3, body: 'refused' }).setHeader('x-blocked', 'yes')
  t.equal(write.status, 403)
  t.equal(write.error?.code, 'PT403')
  t.equal((await f.sql('select count(*)::int as n from notes where id = 3')).rows[0].n, 0, 'nothing written')
  const written = await s.from('notes').insert({ id: 3, body: 'kept' })
  t.equal(written.error, null)
  t.equal((await f.sql('select count(*)::int as n from notes where id = 3')).rows[0].n, 1)

  // A plain exception (P0001) is a 400, and it sees the settings too; a setting for the role wins over the database's.
  await admin(`alter role anon in database ${escapeIdentifier(database)} set pgrst.db_pre_request = 'refuse_all'`)
  t.teardown(() => admin(`alter role anon in database ${escapeIdentifier(database)} reset pgrst.db_pre_request`).catch(() => {}))
  const refused = await s.from('notes').select('id')
  t.equal(refused.status, 400)
  t.same(refused.error, { code: 'P0001', message: 'closed for /notes', details: null, hint: null })
  const user = await (await f.user('0b7e4c3a-1a2b-4c5d-8e9f-000000000002')).rpc('whoami').setHeader('x-blocked', 'yes')
  t.equal(user.status, 403, 'authenticated still has the database-wide function')
  await admin(`alter role anon in database ${escapeIdentifier(database)} reset pgrst.db_pre_request`)

  await admin(`alter database ${escapeIdentifier(database)} reset pgrst.db_pre_request`)
  const off = await s.rpc('whoami').setHeader('x-blocked', 'yes')
  t.equal(off.error, null, 'reset, the next request is not checked')
})

t.test('a write right after the pre-request function is named is checked by it', async (t) => {
  await f.sql('create table marks (id serial primary key, v text); grant insert on marks to anon; grant usage on marks_id_seq to anon')
  const s = f.anon()
  // Every REST thread plans inserts with no pre-request function and sends them with their commit, behind a guard.
  for (let i = 0; i < 6; i++) t.equal((await s.from('marks').insert({ v: 'warm' })).error, null)
  await admin(`alter database ${escapeIdentifier(database)} set pgrst.db_pre_request = 'public.check_request'`)
  t.teardown(() => admin(`alter database ${escapeIdentifier(database)} reset pgrst.db_pre_request`).catch(() => {}))
  for (let i = 0; i < 3; i++) {
    const refused = await s.from('marks').insert({ v: 'blocked' }).setHeader('x-blocked', 'yes')
    t.equal(refused.status, 403, 'the function ran, though the thread assumed none')
    t.equal(refused.error?.code, 'PT403')
  }
  t.equal((await f.sql(`select count(*)::int as n from marks where v = 'blocked'`)).rows[0].n, 0, 'nothing written')
  await admin(`alter database ${escapeIdentifier(database)} reset pgrst.db_pre_request`)
})
