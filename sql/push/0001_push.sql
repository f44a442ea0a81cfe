-- Schema `push`, installed into a project's database when push is enabled
-- (control-plane/product-hooks.ts -> workers/push/install.ts), by the admin role.
-- Variables: :"api_role" (the data plane's login role: the HTTP API and the
-- sending actor), :"owner_role" (the project's developers).
--
-- Access: sending is an insert into push.messages run as the caller, so row-level
-- security decides who may send; with no policy only service_role (bypassrls)
-- can. The actor connects as the api role and reads/writes the internal tables
-- through grants and policies made for it alone. Provider keys are readable by
-- the api role only: never by anon, authenticated, service_role or the owner.

create schema if not exists push;
grant usage on schema push to anon, authenticated, service_role, :"owner_role", :"api_role";

-- One row: what the trigger must know about the project. The platform writes
-- `plan` at install time and whenever the catalogue's plan changes.
create table push.settings (
  id boolean primary key default true check (id),
  plan text not null default 'free' check (plan in ('free', 'plus', 'pro', 'business')),
  updated_at timestamptz not null default now()
);
insert into push.settings default values;
grant select, update on push.settings to :"api_role";
grant select on push.settings to :"owner_role", service_role;

-- The project's VAPID key pair (made at install), for Web Push.
create table push.vapid_keys (
  id boolean primary key default true check (id),
  public_key text not null,
  private_key text not null,
  subject text not null default 'mailto:webpush@baseplane.invalid'
    check (subject ~ '^(mailto:|https://)'),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
grant select, insert, update on push.vapid_keys to :"api_role";

-- Browsers subscribe with the public half: anyone may read it.
create function push.vapid_public_key() returns text
  language sql stable security definer set search_path = '' as $$
  select public_key from push.vapid_keys
$$;
revoke all on function push.vapid_public_key() from public;
grant execute on function push.vapid_public_key() to anon, authenticated, service_role, :"owner_role", :"api_role";

-- Provider keys. `secret` holds the key material and is never returned; the
-- other columns identify the key. `version` bumps on every change, so a stop
-- recorded for old keys never sticks to new ones.
create table push.credentials (
  platform text primary key check (platform in ('apns', 'fcm')),
  topic text,
  key_id text,
  team_id text,
  environment text check (environment in ('production', 'sandbox')),
  project_id text,
  client_email text,
  private_key_id text,
  secret jsonb not null,
  version bigint not null default 1,
  stopped_reason text,
  stopped_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
grant select, insert, update, delete on push.credentials to :"api_role";

-- Devices: an APNs device token, an FCM registration token, or a Web Push
-- subscription (endpoint in `token`, keys in `p256dh` and `auth`).
create table push.devices (
  id uuid primary key default gen_random_uuid(),
  user_id uuid default auth.uid(),
  platform text not null check (platform in ('apns', 'fcm', 'web')),
  token text not null check (length(token) between 1 and 4096),
  p256dh text,
  auth text,
  app text check (length(app) <= 200),
  active boolean not null default true,
  deactivated_at timestamptz,
  deactivated_reason text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (platform, token),
  check (platform <> 'apns' or token ~ '^[0-9a-fA-F]{32,200}$'),
  check (platform <> 'web' or (token ~ '^https?://' and p256dh is not null and auth is not null)),
  check (platform = 'web' or (p256dh is null and auth is null))
);
create index devices_user on push.devices (user_id) where active;
alter table push.devices enable row level security;
create policy devices_select_own on push.devices for select to authenticated using (user_id = auth.uid());
create policy devices_insert_own on push.devices for insert to authenticated with check (user_id = auth.uid());
create policy devices_update_own on push.devices for update to authenticated
  using (user_id = auth.uid()) with check (user_id = auth.uid());
create policy devices_delete_own on push.devices for delete to authenticated using (user_id = auth.uid());
create policy devices_actor on push.devices for all to :"api_role" using (true) with check (true);
grant select, insert, update, delete on push.devices to authenticated, service_role;
grant select, update on push.devices to :"api_role";

-- A device token belongs to whoever registered it last (an app reinstalled or
-- signed in as someone else keeps its token). The caller's own row policies
-- cannot move another user's row, so this removes it first.
create function push.release_token(p_platform text, p_token text) returns void
  language plpgsql volatile security definer set search_path = '' as $$
begin
  if auth.uid() is null then return; end if;
  delete from push.devices d
   where d.platform = p_platform and d.token = p_token and d.user_id is distinct from auth.uid();
end $$;
revoke all on function push.release_token(text, text) from public;
grant execute on function push.release_token(text, text) to authenticated, service_role;

-- Messages: insert = send. Exactly one of user_id (every active device of that
-- user) and device_id (that device).
create table push.messages (
  id uuid primary key default gen_random_uuid(),
  user_id uuid,
  device_id uuid,
  title text check (length(title) <= 1000),
  body text check (length(body) <= 4000),
  data jsonb not null default '{}' check (jsonb_typeof(data) = 'object'),
  ttl integer not null default 2419200 check (ttl between 0 and 2419200),
  collapse_key text check (octet_length(collapse_key) between 1 and 64),
  priority text not null default 'high' check (priority in ('high', 'normal')),
  send_at timestamptz not null default now(),
  sender uuid default auth.uid(),
  created_at timestamptz not null default now(),
  check (num_nonnulls(user_id, device_id) = 1)
);
alter table push.messages enable row level security;
create policy messages_actor on push.messages for select to :"api_role" using (true);
grant select, insert on push.messages to anon, authenticated, service_role;
grant select on push.messages to :"api_role";

-- Work to do: one row per message and device until its delivery is settled
-- (sent, failed for good, or expired); then the row leaves the queue and the
-- delivery log keeps the history. The actor claims due rows with SELECT ...
-- FOR UPDATE SKIP LOCKED inside one transaction per batch and settles them in
-- the same transaction: if the actor dies mid-batch the transaction aborts,
-- the locks go, and the rows are claimed again (at-least-once).
create table push.queue (
  id bigint generated always as identity primary key,
  message_id uuid not null,
  device_id uuid not null,
  platform text not null check (platform in ('apns', 'fcm', 'web')),
  run_at timestamptz not null,
  expires_at timestamptz not null,
  attempts integer not null default 0,
  first_attempt_at timestamptz,
  -- Deterministic per message and device (at-least-once: a resend carries the same id).
  apns_id uuid not null,
  last_http_status integer,
  last_reason text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
-- The actor claims in (run_at, id) order from where its last claim ended, so it
-- does not walk again over rows it has just settled (dead until vacuum).
create index queue_due on push.queue (run_at, id);
create index queue_message on push.queue (message_id);
alter table push.queue enable row level security;
create policy queue_actor on push.queue for all to :"api_role" using (true) with check (true);
create policy queue_owner on push.queue for select to :"owner_role" using (true);
create policy queue_select_own on push.queue for select to authenticated
  using (device_id in (select d.id from push.devices d where d.user_id = auth.uid()));
grant select on push.queue to authenticated, service_role, :"owner_role";
grant select, update, delete on push.queue to :"api_role";

-- Every attempt, append-only.
create table push.delivery_log (
  id bigint generated always as identity primary key,
  queue_id bigint not null,
  message_id uuid not null,
  device_id uuid not null,
  provider text not null check (provider in ('apns', 'fcm', 'web')),
  attempt integer not null,
  status text not null check (status in ('sent', 'failed', 'retry', 'held', 'expired')),
  http_status integer,
  reason text,
  provider_id text,
  attempted_at timestamptz not null default now()
);
create index delivery_log_message on push.delivery_log (message_id);
alter table push.delivery_log enable row level security;
create policy delivery_log_actor on push.delivery_log for all to :"api_role" using (true) with check (true);
create policy delivery_log_owner on push.delivery_log for select to :"owner_role" using (true);
create policy delivery_log_select_own on push.delivery_log for select to authenticated
  using (device_id in (select d.id from push.devices d where d.user_id = auth.uid()));
grant select on push.delivery_log to authenticated, service_role, :"owner_role";
grant select, insert on push.delivery_log to :"api_role";

-- Fan-out: one queue row per message and active device, then one NOTIFY per
-- statement (delivered at commit; the actor also polls, NOTIFY is only a hint).
-- A future send_at on the Free plan is refused here, so SQL and the API agree.
create function push.fan_out() returns trigger
  language plpgsql security definer set search_path = '' as $$
declare
  v_plan text;
  v_first timestamptz;
  v_count bigint;
begin
  select s.plan into v_plan from push.settings s;
  if coalesce(v_plan, 'free') = 'free' then
    -- A few seconds of grace for clocks that differ between client and server.
    select min(m.send_at) into v_first from new_messages m where m.send_at > now() + interval '5 seconds';
    if v_first is not null then
      raise exception using
        errcode = 'BPS01',
        message = format('Scheduled sending is not available on the Free plan: send_at (%s) is in the future.', v_first),
        hint = 'Leave send_at empty to send now, or move the project to the Plus, Pro or Business plan.';
    end if;
  end if;
  insert into push.queue (message_id, device_id, platform, run_at, expires_at, apns_id)
  select m.id, d.id, d.platform, greatest(m.send_at, now()),
         greatest(m.send_at, now()) + make_interval(secs => m.ttl), md5(m.id::text || d.id::text)::uuid
    from new_messages m join push.devices d on d.id = m.device_id
   where m.device_id is not null and d.active
  union all
  select m.id, d.id, d.platform, greatest(m.send_at, now()),
         greatest(m.send_at, now()) + make_interval(secs => m.ttl), md5(m.id::text || d.id::text)::uuid
    from new_messages m join push.devices d on d.user_id = m.user_id
   where m.device_id is null and d.active;
  get diagnostics v_count = row_count;
  if v_count > 0 then
    perform pg_notify('baseplane_push', 'queue');
  end if;
  return null;
end $$;
revoke all on function push.fan_out() from public;

create trigger fan_out after insert on push.messages
  referencing new table as new_messages
  for each statement execute function push.fan_out();

-- Developers write policies on the tables users touch (messages, devices), so
-- their role owns them; the trigger function stays the platform's.
alter table push.messages owner to :"owner_role";
alter table push.devices owner to :"owner_role";
