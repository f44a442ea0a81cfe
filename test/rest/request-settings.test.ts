// What PostgREST tells SQL about the request, through supabase-js and real
// HTTP: request.method, request.path, request.headers and request.cookies
// read by policies and functions, and the pre-request function the operator
// names for the project (admin API `pre_request`; its raised PTxyz answering
// xyz), followed from the next request; one dropped or revoked since it was
// named answers PostgreSQL's error naming the pre-request function.
import t from 'tap'
import { request } from '../helpers/http.ts'
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
/** Names the project's pre-request function (null: none) through the admin API, as an operator does. */
async function preRequest(name: string | null): Promise<void> {
  const url = `${f.platform.origin}/platform/v1/projects/${f.project.ref}/rest`
  const set = await request<{ pre_request: string | null }>(url, { method: 'PATCH', headers: { authorization: `Bearer ${f.platform.config.adminToken}` }, body: { pre_request: name } })
  if (set.status !== 200 || set.json.pre_request !== name) throw new Error(`pre_request not set: ${set.status} ${JSON.stringify(set.json)}`)
}

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

t.test("the project's pre-request function", async (t) => {
  const s = f.anon()
  // Warm: this thread has planned requests with no pre-request function.
  t.equal((await s.rpc('whoami').setHeader('x-blocked', 'yes')).error, null)
  await preRequest('public.check_request')
  t.teardown(() => preRequest(null))

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

  const user = await (await f.user('0b7e4c3a-1a2b-4c5d-8e9f-000000000002')).rpc('whoami').setHeader('x-blocked', 'yes')
  t.equal(user.status, 403, 'it runs for every role')

  // A plain exception (P0001) is a 400, and it sees the settings too; a name without a schema is found on the search path.
  await preRequest('refuse_all')
  const refused = await s.from('notes').select('id')
  t.equal(refused.status, 400)
  t.same(refused.error, { code: 'P0001', message: 'closed for /notes', details: null, hint: null })
  const root = await f.raw('/', {})
  t.equal(root.status, 400, 'the OpenAPI description runs it too')

  // Dropped after it was named: PostgreSQL's 42883 and PostgREST's status, the message naming the pre-request function
  // (not the request's table), and the project's other requests are not broken for good.
  await f.sql('create function public.not_there() returns void language plpgsql as $$begin end$$')
  await preRequest('public.not_there')
  await f.sql('drop function public.not_there()')
  const details = "It is called before every request (PostgREST's db-pre-request), so every request fails until it can be called"
  const hint = 'Create the function (taking no arguments) and grant execute on it to the API roles, or name another pre-request function (or none) for the project'
  const missing = await s.from('notes').select('id')
  t.equal(missing.status, 404)
  t.same(missing.error, { code: '42883', message: "The project's pre-request function public.not_there cannot be called: function public.not_there() does not exist", details, hint })
  const missingRoot = await f.raw<{ message: string }>('/', {})
  t.same([missingRoot.status, missingRoot.json.message], [404, "The project's pre-request function public.not_there cannot be called: function public.not_there() does not exist"], 'the OpenAPI description says so too')

  // Its schema dropped: 3F000, named as well.
  await f.sql('create schema gate; grant usage on schema gate to anon, authenticated, service_role; create function gate.check() returns void language plpgsql as $$begin end$$')
  await preRequest('gate.check')
  t.equal((await s.from('notes').select('id').setHeader('x-custom', 'open')).error, null, 'callable: the request answers')
  await f.sql('drop schema gate cascade')
  const noSchema = await s.from('notes').select('id')
  t.equal(noSchema.status, 400)
  t.same(noSchema.error, { code: '3F000', message: `The project's pre-request function gate.check cannot be called: schema "gate" does not exist`, details, hint })

  // EXECUTE taken back from the API roles: 42501 (401 for anon, as PostgREST answers), named.
  await f.sql('create function public.guarded() returns void language plpgsql as $$begin end$$')
  await preRequest('guarded')
  await f.sql('revoke execute on function public.guarded() from public, anon, authenticated, service_role')
  const revoked = await s.from('notes').select('id')
  t.equal(revoked.status, 401)
  t.same(revoked.error, { code: '42501', message: "The project's pre-request function guarded cannot be called: permission denied for function guarded", details, hint })

  await preRequest(null)
  const off = await s.rpc('whoami').setHeader('x-blocked', 'yes')
  t.equal(off.error, null, 'cleared, the next request is not checked')
})

t.test('a write right after the pre-request function is named is checked by it', async (t) => {
  await f.sql('create table marks (id serial primary key, v text); grant insert on marks to anon; grant usage on marks_id_seq to anon')
  const s = f.anon()
  // Every REST thread plans inserts with no pre-request function and sends them with their commit, behind a guard.
  for (let i = 0; i < 6; i++) t.equal((await s.from('marks').insert({ v: 'warm' })).error, null)
  await preRequest('public.check_request')
  t.teardown(() => preRequest(null))
  for (let i = 0; i < 3; i++) {
    const refused = await s.from('marks').insert({ v: 'blocked' }).setHeader('x-blocked', 'yes')
    t.equal(refused.status, 403, 'the function ran, though the thread assumed none')
    t.equal(refused.error?.code, 'PT403')
  }
  t.equal((await f.sql(`select count(*)::int as n from marks where v = 'blocked'`)).rows[0].n, 0, 'nothing written')
  await preRequest(null)
  t.equal((await s.from('marks').insert({ v: 'open again' }).setHeader('x-blocked', 'yes')).error, null)
})
