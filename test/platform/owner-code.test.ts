// Code the project's owner writes never acts as the platform (issue 36 item 1).
// One owner function resets its role (`set_config('role', 'none', true)`, which
// makes it the session's login role) and then tries what the platform keeps for
// itself: Push's provider and VAPID keys, Auth's refresh tokens and password
// hashes, the monthly active users counters, and becoming the platform's roles.
// It runs through every surface that runs owner code: REST rpc, GraphQL, a
// trigger under REST, the pre-request function, a trigger on auth.users (at
// sign-up, and under the admin API's purge of anonymous users), both Postgres
// hook kinds, and a trigger on push.messages under the admin API's test send.
// Each records what it could do; the test asserts nothing of the platform's was
// reached, and that a Supabase-style profile trigger on auth.users still works.
import pg from 'pg'
import t, { type Test } from 'tap'
import { setAuthOptions } from '../../control-plane/auth-settings.ts'
import { setProjectProduct } from '../../control-plane/projects.ts'
import { setRestSettings } from '../../control-plane/rest-settings.ts'
import { ownerUrlOf } from '../../lib/catalogue.ts'
import { platformLoginName } from '../../lib/db/platform-logins.ts'
import { authFixture } from '../auth/helpers.ts'

const f = await authFixture(t, {}, { external_anonymous_users_enabled: true, mailer_autoconfirm: true })
const cp = f.test.platform.controlPlane
const ref = f.project.ref
const record = await setProjectProduct(cp, ref, 'push', true)
const apiRole = record.dbApiRole
const authRole = platformLoginName(apiRole, 'auth')
const platformRole = platformLoginName(apiRole, 'platform')

const owner = new pg.Client({ connectionString: ownerUrlOf(record) })
await owner.connect()
t.teardown(() => owner.end())

// What the owner writes. Each step's outcome is 'ok' or the SQLSTATE that refused it.
await owner.query(`
  create table public.escapes (id serial primary key, surface text not null, result jsonb not null);
  grant all on public.escapes to public;
  grant usage, select on sequence public.escapes_id_seq to public;
  grant usage on schema public to supabase_auth_admin;

  create function public.probe() returns jsonb language plpgsql as $$
  declare
    was text := current_user;
    out jsonb := jsonb_build_object('session_user', session_user::text);
    n bigint;
    v text;
    super boolean;
  begin
    perform set_config('role', 'none', true);
    select rolsuper into super from pg_roles where rolname = current_user;
    out := out || jsonb_build_object('reset_to', current_user::text, 'superuser', super);
    begin select count(*) into n from push.credentials; out := out || '{"credentials":"ok"}';
      exception when others then out := out || jsonb_build_object('credentials', sqlstate); end;
    begin select private_key into v from push.vapid_keys; out := out || '{"vapid_private_key":"ok"}';
      exception when others then out := out || jsonb_build_object('vapid_private_key', sqlstate); end;
    begin select count(*) into n from auth.refresh_tokens; out := out || '{"refresh_tokens":"ok"}';
      exception when others then out := out || jsonb_build_object('refresh_tokens', sqlstate); end;
    begin select encrypted_password into v from auth.users limit 1; out := out || '{"password_hashes":"ok"}';
      exception when others then out := out || jsonb_build_object('password_hashes', sqlstate); end;
    begin delete from auth.monthly_active_user_counts; out := out || '{"empty_mau":"ok"}';
      exception when others then out := out || jsonb_build_object('empty_mau', sqlstate); end;
    begin perform set_config('role', 'baseplane_auth_admin', true);
      begin delete from auth.monthly_active_users; out := out || '{"empty_mau_as_auth_admin":"ok"}';
        exception when others then out := out || jsonb_build_object('empty_mau_as_auth_admin', sqlstate); end;
      begin select count(*) into n from push.credentials; out := out || '{"credentials_as_auth_admin":"ok"}';
        exception when others then out := out || jsonb_build_object('credentials_as_auth_admin', sqlstate); end;
      out := out || '{"become_auth_admin":"ok"}';
      exception when others then out := out || jsonb_build_object('become_auth_admin', sqlstate); end;
    perform set_config('role', 'none', true);
    foreach v in array array['${platformRole}', '${authRole}', 'baseplane_push_devices', 'postgres', '${record.dbOwnerRole}'] loop
      begin perform set_config('role', v, true); out := out || jsonb_build_object('become_' || v, 'ok');
        exception when others then out := out || jsonb_build_object('become_' || v, sqlstate); end;
      perform set_config('role', 'none', true);
    end loop;
    perform set_config('role', was, true);
    return out;
  end $$;

  create function public.record_probe(surface text) returns void language plpgsql as $$
  begin
    insert into public.escapes (surface, result) values (surface, public.probe());
  end $$;

  -- A trigger under REST.
  create table public.items (id serial primary key, name text);
  grant all on public.items to anon;
  grant usage on sequence public.items_id_seq to anon;
  create function public.items_probe() returns trigger language plpgsql as $$
  begin perform public.record_probe('rest trigger'); return new; end $$;
  create trigger items_probe after insert on public.items for each row execute function public.items_probe();

  -- The pre-request function.
  create function public.pre_request() returns void language plpgsql as $$
  begin
    if current_setting('request.path', true) like '%/rpc/nothing' then perform public.record_probe('pre-request'); end if;
  end $$;
  create function public.nothing() returns int language sql as 'select 1';

  -- Triggers on auth.users, as Supabase apps write them: one probing as Auth's role runs it,
  -- and a profile row per sign-up through a SECURITY DEFINER function (Supabase's advice).
  create function public.users_probe() returns trigger language plpgsql as $$
  begin perform public.record_probe('auth.users trigger ' || tg_op); return coalesce(new, old); end $$;
  create trigger users_probe after insert or delete on auth.users for each row execute function public.users_probe();
  create table public.profiles (id uuid primary key references auth.users on delete cascade, email text);
  grant select on public.profiles to authenticated;
  create function public.handle_new_user() returns trigger language plpgsql security definer set search_path = '' as $$
  begin insert into public.profiles (id, email) values (new.id, new.email); return new; end $$;
  create trigger on_auth_user_created after insert on auth.users for each row execute function public.handle_new_user();

  -- Both Postgres hook kinds.
  create function public.token_hook(event jsonb) returns jsonb language plpgsql as $$
  begin perform public.record_probe('custom access token hook'); return jsonb_build_object('claims', event->'claims'); end $$;
  grant execute on function public.token_hook to supabase_auth_admin;
  create function public.email_hook(event jsonb) returns jsonb language plpgsql as $$
  begin perform public.record_probe('send email hook'); return '{}'::jsonb; end $$;
  grant execute on function public.email_hook to supabase_auth_admin;
`)

/** Every probe recorded for `surface` (the table is the owner's: read as the owner). */
async function probes(surface: string): Promise<Array<Record<string, unknown>>> {
  const { rows } = await owner.query<{ result: Record<string, unknown> }>('select result from public.escapes where surface = $1 order by id', [surface])
  return rows.map((row) => row.result)
}

const DENIED = '42501'

/** What holds wherever owner code runs: none of the platform's own. */
function nothingOfThePlatform(t: Test, result: Record<string, unknown>, sessionUser: string): void {
  t.equal(result.session_user, sessionUser, 'the session is the login role expected')
  t.equal(result.reset_to, sessionUser, 'resetting the role lands on that login role')
  t.equal(result.superuser, false, 'never a superuser')
  t.equal(result.credentials, DENIED, 'push.credentials refused')
  t.equal(result.vapid_private_key, DENIED, 'the VAPID private key refused')
  t.equal(result.empty_mau, DENIED, 'the active users counters cannot be emptied')
  for (const role of [platformRole, 'baseplane_push_devices', 'postgres', record.dbOwnerRole]) {
    t.equal(result[`become_${role}`], DENIED, `cannot become ${role}`)
  }
}

/** The API's login role: nothing but the API roles. */
function asTheApi(t: Test, result: Record<string, unknown> | undefined): void {
  t.ok(result, 'the probe ran')
  if (!result) return
  nothingOfThePlatform(t, result, apiRole)
  t.equal(result.refresh_tokens, DENIED, 'refresh tokens refused')
  t.equal(result.password_hashes, DENIED, 'password hashes refused')
  t.equal(result.become_auth_admin, DENIED, 'cannot become baseplane_auth_admin')
  t.equal(result[`become_${authRole}`], DENIED, "cannot become Auth's login role")
}

/** Auth's login role: Auth's tables (as on Supabase, where such code runs as supabase_auth_admin), not the platform's. */
function asAuth(t: Test, result: Record<string, unknown> | undefined): void {
  t.ok(result, 'the probe ran')
  if (!result) return
  nothingOfThePlatform(t, result, authRole)
  t.equal(result.become_auth_admin, 'ok', "Auth's tables, as supabase_auth_admin reaches them on Supabase")
  t.equal(result.empty_mau_as_auth_admin, DENIED, 'but not the active users counters')
  t.equal(result.credentials_as_auth_admin, DENIED, 'nor the push keys')
}

const rest = (path: string, init: RequestInit = {}) =>
  fetch(`${f.project.baseUrl}/rest/v1${path}`, {
    ...init,
    headers: { apikey: f.project.anonKey, authorization: `Bearer ${f.project.anonKey}`, 'content-type': 'application/json', ...(init.headers as Record<string, string>) },
  })

t.test('REST rpc, called as anon', async (t) => {
  const response = await rest('/rpc/probe', { method: 'POST', body: '{}' })
  t.equal(response.status, 200)
  asTheApi(t, (await response.json()) as Record<string, unknown>)
})

t.test('GraphQL, called as anon', async (t) => {
  const response = await fetch(`${f.project.baseUrl}/graphql/v1`, {
    method: 'POST',
    headers: { apikey: f.project.anonKey, 'content-type': 'application/json' },
    body: JSON.stringify({ query: 'mutation { probe }' }),
  })
  const body = (await response.json()) as { data?: { probe: string | Record<string, unknown> }; errors?: unknown }
  t.equal(body.errors, undefined)
  const probe = body.data?.probe
  asTheApi(t, typeof probe === 'string' ? JSON.parse(probe) : probe)
})

t.test('a trigger under a REST insert', async (t) => {
  const response = await rest('/items', { method: 'POST', body: JSON.stringify({ name: 'x' }) })
  t.equal(response.status, 201)
  asTheApi(t, (await probes('rest trigger'))[0])
})

t.test('the pre-request function', async (t) => {
  await setRestSettings(cp, ref, { pre_request: 'public.pre_request' })
  t.teardown(() => setRestSettings(cp, ref, { pre_request: null }))
  const response = await rest('/rpc/nothing', { method: 'POST', body: '{}' })
  t.equal(response.status, 200)
  asTheApi(t, (await probes('pre-request'))[0])
})

t.test('a trigger on auth.users, at sign-up, with a profile row as on Supabase', async (t) => {
  const { data, error } = await f.anon().auth.signUp({ email: 'trigger@example.test', password: 'correct horse battery' })
  t.error(error)
  t.ok(data.user)
  asAuth(t, (await probes('auth.users trigger INSERT'))[0])
  const { rows } = await owner.query('select email from public.profiles where id = $1', [data.user!.id])
  t.same(rows, [{ email: 'trigger@example.test' }], 'the SECURITY DEFINER profile trigger made its row')
})

t.test('both Postgres hook kinds', async (t) => {
  await setAuthOptions(cp, ref, { hook_custom_access_token_uri: 'pg-functions://postgres/public/token_hook', hook_send_email_uri: 'pg-functions://postgres/public/email_hook' })
  t.teardown(() => setAuthOptions(cp, ref, { hook_custom_access_token_uri: null, hook_send_email_uri: null }))
  const signIn = await f.anon().auth.signInWithPassword({ email: 'trigger@example.test', password: 'correct horse battery' })
  t.error(signIn.error)
  asAuth(t, (await probes('custom access token hook'))[0])
  const otp = await f.anon().auth.signInWithOtp({ email: 'trigger@example.test' })
  t.error(otp.error)
  asAuth(t, (await probes('send email hook'))[0])
})

t.test("a trigger on auth.users under the admin API's purge of anonymous users", async (t) => {
  const anonymous = await f.anon().auth.signInAnonymously()
  t.error(anonymous.error)
  const response = await fetch(`${f.test.origin}/platform/v1/projects/${ref}/auth/anonymous-users?older_than_days=0`, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${f.test.config.adminToken}` },
  })
  t.equal(response.status, 200, await response.clone().text())
  const deleted = await probes('auth.users trigger DELETE')
  t.equal(deleted.length, 1, 'the purge fired the trigger once')
  asAuth(t, deleted[0])
})

t.test("a trigger on push.messages under the admin API's test send", async (t) => {
  await owner.query(`
    create function public.messages_probe() returns trigger language plpgsql as $$
    begin perform public.record_probe('push.messages trigger'); return new; end $$;
    create trigger messages_probe after insert on push.messages for each row execute function public.messages_probe();`)
  const device = await fetch(`${f.project.baseUrl}/push/v1/devices`, {
    method: 'POST',
    headers: { apikey: f.project.serviceRoleKey, authorization: `Bearer ${f.project.serviceRoleKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ platform: 'apns', token: 'a'.repeat(64) }),
  })
  const registered = (await device.json()) as { id?: string }
  t.ok(registered.id, JSON.stringify(registered))
  const response = await fetch(`${f.test.origin}/platform/v1/projects/${ref}/push/devices/${registered.id}/test`, {
    method: 'POST',
    headers: { authorization: `Bearer ${f.test.config.adminToken}`, 'content-type': 'application/json' },
    body: '{}',
  })
  t.equal(response.status, 201, await response.clone().text())
  asTheApi(t, (await probes('push.messages trigger'))[0])
})

t.test('the login roles hold what the design says', async (t) => {
  const { rows } = await owner.query<{ role: string; member_of: string[] }>(
    `select r.rolname as role, coalesce(array_agg(m.rolname::text order by m.rolname) filter (where m.rolname is not null), '{}')::text[] as member_of
       from pg_roles r left join pg_auth_members a on a.member = r.oid
       left join pg_roles m on m.oid = a.roleid and m.rolname <> 'pg_use_reserved_connections'
      where r.rolname = any($1) group by r.rolname order by r.rolname`,
    [[apiRole, authRole, platformRole]],
  )
  t.same(
    Object.fromEntries(rows.map((row) => [row.role, row.member_of])),
    {
      [apiRole]: ['anon', 'authenticated', 'service_role'],
      [authRole]: ['baseplane_auth_admin', 'supabase_auth_admin'],
      [platformRole]: [],
    },
    'the roles each login role may become (beside the reserved connection slots, granted WITH SET FALSE on PostgreSQL 16+)',
  )
})
