// The answer's status and headers set from SQL (PostgREST's response.status
// and response.headers): by a function (POST and GET, scalar and set), by a
// trigger (an AFTER trigger included) on the write paths (committed in the
// statement's own message, or inside BEGIN when the result is checked), by
// the pre-request function; the first request (ordinary path) and the next
// (one message) alike; a header SQL names replacing the answer's own;
// PGRST111 / PGRST112 for malformed settings; a session-wide setting never
// reaching another request; and no round trip added (counted on a
// connection of our own running the worker's answerRest).
import pg from 'pg'
import t from 'tap'
import { apiDatabaseOf } from '../../lib/catalogue.ts'
import type { RequestIdentity } from '../../lib/roles.ts'
import { answerRest } from '../../workers/rest/answer/answer.ts'
import { ModelCache } from '../../workers/rest/schema/model.ts'
import { parseCall } from '../../workers/rest/worker.ts'
import { request } from '../helpers/http.ts'
import { restProject } from './helpers.ts'

const f = await restProject(t, `
  create table items (id int primary key, name text);
  insert into items values (1, 'one'), (2, 'two');
  create table audited (id int primary key, body text);
  grant all on items, audited to anon;
  create function teapot() returns text language plpgsql as $$
  begin
    perform set_config('response.status', '418', true);
    perform set_config('response.headers', '[{"X-Brew": "earl grey"}, {"Cache-Control": "no-store"}, {"X-Brew": "hot"}]', true);
    return 'short and stout';
  end $$;
  create function listed() returns setof items language plpgsql stable as $$
  begin
    perform set_config('response.headers', '[{"X-Total-Known": "yes"}, {"Content-Type": "application/x-items"}]', true);
    return query select * from items order by id;
  end $$;
  create function stable_scalar() returns int language plpgsql stable as $$
  begin
    perform set_config('response.headers', '[{"X-Scalar": "set"}]', true);
    return 7;
  end $$;
  create function redirect() returns void language plpgsql as $$
  begin
    perform set_config('response.status', '303', true);
    perform set_config('response.headers', '[{"Location": "/elsewhere"}]', true);
  end $$;
  create function set_setting(name text, value text) returns int language sql as $$select 1 from (select set_config(name, value, true)) s$$;
  create function leaky() returns int language sql as $$select 1 from (select set_config('response.headers', '[{"X-Leak": "yes"}]', false)) s$$;
  create function mark() returns trigger language plpgsql as $$
  begin
    perform set_config('response.headers', '[{"X-Audited": "' || tg_op || ' ' || (select count(*) from audited) || '"}]', true);
    perform set_config('response.status', '202', true);
    return null;
  end $$;
  create trigger audited_after after insert or update on audited for each statement execute function mark();
  create function tag_request() returns void language plpgsql stable as $$
  begin
    perform set_config('response.headers', '[{"X-Request-Path": "' || current_setting('request.path', true) || '"}]', true);
  end $$;
  create function login() returns text language plpgsql as $$
  begin
    perform set_config('response.headers', '[{"Set-Cookie": "session=abc; Path=/; Expires=Wed, 21 Oct 2026 07:28:00 GMT; HttpOnly"}, {"Set-Cookie": "theme=dark; Path=/"}, {"X-Logged": "in"}]', true);
    return 'welcome';
  end $$;
  grant execute on all functions in schema public to anon;
`)
const s = f.anon()

t.test('a function sets the status and headers, on the first request and the next', async (t) => {
  for (const round of ['ordinary', 'one message']) {
    const raw = await f.raw('/rpc/teapot', { method: 'POST', body: {} })
    t.equal(raw.status, 418, round)
    t.equal(raw.text, '"short and stout"', 'the body as without the settings')
    t.equal(raw.headers['x-brew'], 'earl grey, hot', 'two of one name: one list')
    t.equal(raw.headers['cache-control'], 'no-store')
    t.equal(raw.headers['content-type'], 'application/json; charset=utf-8')
  }
  // supabase-js reads any 2xx as success.
  const created = await s.rpc('set_setting', { name: 'response.status', value: '201' })
  t.equal(created.error, null)
  t.equal(created.status, 201)
  t.equal(created.data, 1)
  const read = await f.raw('/rpc/listed?select=id&id=gt.1')
  t.equal(read.status, 200)
  t.equal(read.headers['x-total-known'], 'yes', 'a GET (read-only) function too')
  t.equal(read.headers['content-type'], 'application/x-items', "a header SQL names replaces the answer's own")
  t.equal(read.text, '[{"id":2}]')
  for (const round of ['first', 'again']) {
    const scalar = await f.raw('/rpc/stable_scalar')
    t.equal(scalar.text, '7', round)
    t.equal(scalar.headers['x-scalar'], 'set', 'a scalar: read after the body in the same projection')
  }
  const moved = await f.raw('/rpc/redirect', { method: 'POST', body: {} })
  t.equal(moved.status, 303)
  t.equal(moved.headers.location, '/elsewhere')
  const plain = await f.raw('/items?select=id')
  t.equal(plain.status, 200)
  t.equal(plain.headers['x-brew'], undefined, 'another request carries none of it')
})

t.test('a trigger sets them on writes: committed in one message, or inside BEGIN when checked', async (t) => {
  const minimal = await s.from('audited').insert({ id: 1, body: 'a' })
  t.equal(minimal.error, null)
  t.equal(minimal.status, 202, 'an AFTER trigger, which fires once the statement ran')
  const raw = await f.raw('/audited', { method: 'POST', body: { id: 2, body: 'b' } })
  t.equal(raw.status, 202)
  t.equal(raw.headers['x-audited'], 'INSERT 2')
  const single = await s.from('audited').insert({ id: 3, body: 'c' }).select().single()
  t.equal(single.error, null)
  t.equal(single.status, 202)
  t.same(single.data, { id: 3, body: 'c' })
  const checked = await f.raw('/audited', { method: 'PATCH', headers: { prefer: 'handling=strict, max-affected=5' }, body: { body: 'z' } })
  t.equal(checked.status, 202)
  t.equal(checked.headers['x-audited'], 'UPDATE 3')
  t.equal((await f.sql('select count(*) from audited where body = $1', ['z'])).rows[0].count, '3', 'committed')
})

t.test('malformed settings: PGRST111 and PGRST112', async (t) => {
  const headerCases = ['{"X-A": "1"}', '[{"X-A": 1}]', '[{"X-A": "1", "X-B": "2"}]', '["X-A"]', 'not json', '[{"X-A": "a\\r\\nSet-Cookie: stolen=1"}]', '[{"X A": "1"}]']
  for (const value of headerCases) {
    const r = await s.rpc('set_setting', { name: 'response.headers', value })
    t.equal(r.status, 500, value)
    t.same(r.error, { code: 'PGRST111', details: null, hint: null, message: 'response.headers guc must be a JSON array composed of objects with a single key and a string value' }, value)
  }
  for (const value of ['teapot', '99', '600', '-1']) {
    const r = await s.rpc('set_setting', { name: 'response.status', value })
    t.equal(r.status, 500, value)
    t.same(r.error, { code: 'PGRST112', details: null, hint: null, message: 'response.status guc must be a valid status code' }, value)
  }
  const withText = await s.rpc('set_setting', { name: 'response.status', value: '201 Created' })
  t.equal(withText.error, null)
  t.equal(withText.status, 201, "the leading digits, as PostgREST's decimal reads them")
  const empty = await s.rpc('set_setting', { name: 'response.headers', value: '[]' })
  t.equal(empty.error, null)
  t.equal(empty.status, 200)
  const framing = await f.raw('/rpc/set_setting', { method: 'POST', body: { name: 'response.headers', value: '[{"Content-Length": "1"}, {"X-Kept": "1"}]' } })
  t.equal(framing.status, 200)
  t.equal(framing.text, '1', "the reply's framing stays the server's")
  t.equal(framing.headers['x-kept'], '1')
})

t.test('a setting made for the session never reaches another request', async (t) => {
  const leaked = await f.raw('/rpc/leaky', { method: 'POST', body: {} })
  t.equal(leaked.headers['x-leak'], 'yes')
  for (let i = 0; i < 5; i++) {
    const next = await f.raw('/items?select=id')
    t.equal(next.status, 200)
    t.equal(next.headers['x-leak'], undefined)
  }
})

t.test('the pre-request function sets them for every request', async (t) => {
  const setting = (name: string | null) =>
    request(`${f.platform.origin}/platform/v1/projects/${f.project.ref}/rest`, { method: 'PATCH', headers: { authorization: `Bearer ${f.platform.config.adminToken}` }, body: { pre_request: name } })
  t.equal((await setting('public.tag_request')).status, 200)
  t.teardown(async () => {
    await setting(null)
  })
  for (const path of ['/items?select=id', '/items?select=id', '/items?id=in.()']) {
    const r = await f.raw(path)
    t.equal(r.status, 200, path)
    t.equal(r.headers['x-request-path'], '/items', path)
  }
  const written = await f.raw('/items', { method: 'POST', body: { id: 3, name: 'three' } })
  t.equal(written.status, 201)
  t.equal(written.headers['x-request-path'], '/items')
  const teapot = await f.raw('/rpc/teapot', { method: 'POST', body: {} })
  t.equal(teapot.headers['x-request-path'], undefined, "the function's own list replaces the pre-request function's")
  t.equal(teapot.status, 418)
})

t.test('no round trip added: the settings ride in the statement\'s message', async (t) => {
  const db = apiDatabaseOf(f.project.record)
  const client = new pg.Client({ host: db.host, port: db.port, database: db.database, user: db.user, password: db.password })
  await client.connect()
  t.teardown(() => client.end())
  let messages = 0
  const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>
  ;(client as unknown as { query: (...args: unknown[]) => Promise<unknown> }).query = (...args: unknown[]) => {
    messages++
    return query(...args)
  }
  const connection = { firstRoundTrip: async <T>(first: (c: pg.Client) => Promise<T>) => ({ client, result: await first(client) }), release: () => {} }
  const anon: RequestIdentity = { role: 'anon', claims: { role: 'anon' } }
  const caller = { identity: anon, project: { ref: f.project.record.ref, roleTimeouts: f.project.record.roleTimeouts } }
  const cache = new ModelCache(10)
  const ask = async (method: string, path: string, query = '', body = '', headers: Record<string, string> = {}) => {
    messages = 0
    const answer = await answerRest(parseCall({ method, path, query, headers, body }, 1000), caller, cache, connection)
    return { answer, messages }
  }
  // A cold connection: the ordinary way (BEGIN, the model, the statement and the settings' read, COMMIT).
  const cold = await ask('POST', '/audited', '', '{"id": 9, "body": "w"}')
  t.equal(cold.answer.status, 202)
  t.equal(cold.answer.headers['x-audited'], 'INSERT 4')
  t.ok(cold.messages > 1)
  const read = await ask('POST', '/rpc/teapot', '', '{}')
  t.equal(read.answer.status, 418)
  t.equal(read.answer.headers['x-brew'], 'earl grey, hot')
  t.equal(read.messages, 1, 'a call on a known schema: one message, its settings read in it')
  const write = await ask('POST', '/audited', '', '{"id": 10, "body": "x"}')
  t.equal(write.answer.status, 202)
  t.equal(write.messages, 1, 'a write with nothing to check: one message')
  const checked = await ask('POST', '/audited', '', '{"id": 11, "body": "y"}', { accept: 'application/vnd.pgrst.object+json', prefer: 'return=representation' })
  t.equal(checked.answer.status, 202)
  t.equal(checked.messages, 2, 'a checked write: its message, then COMMIT')
})

t.test('each Set-Cookie SQL names is a header line of its own', async (t) => {
  // Twice: the ordinary way, then in one message on the known schema.
  for (let i = 0; i < 2; i++) {
    const response = await fetch(`${f.project.baseUrl}/rest/v1/rpc/login`, { method: 'POST', headers: { apikey: f.project.anonKey, 'content-type': 'application/json' }, body: '{}' })
    t.equal(response.status, 200)
    t.equal(await response.text(), '"welcome"')
    t.same(response.headers.getSetCookie(), ['session=abc; Path=/; Expires=Wed, 21 Oct 2026 07:28:00 GMT; HttpOnly', 'theme=dark; Path=/'], 'two lines, the comma in Expires kept')
    t.equal(response.headers.get('x-logged'), 'in')
  }
  const { data, error } = await f.anon().rpc('login')
  t.equal(error, null)
  t.equal(data, 'welcome')
})
