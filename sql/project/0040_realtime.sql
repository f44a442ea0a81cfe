-- Realtime's objects in every project database, named as Supabase names them so
-- its policies, triggers and `alter publication` statements work unchanged:
-- realtime.messages (what private channels are authorized on, and what
-- broadcasts from SQL go through), realtime.topic(), realtime.send(),
-- realtime.send_binary(), realtime.broadcast_changes(), and the
-- supabase_realtime publication whose tables Postgres Changes reads.
create schema if not exists realtime;
grant usage on schema realtime to anon, authenticated, service_role, :"api_role", :"owner_role";

-- Not partitioned (Supabase partitions it by day and drops old days): rows
-- older than three days are deleted by the inserts themselves (the trigger
-- below), which the index on inserted_at keeps cheap at the sizes one project
-- reaches; a project that sends nothing keeps what it has.
create table if not exists realtime.messages (
  id uuid not null default gen_random_uuid() primary key,
  topic text not null,
  extension text not null,
  payload jsonb,
  binary_payload bytea,
  event text,
  private boolean default false,
  -- In UTC whatever the session's TimeZone, so a replay's `since` (epoch milliseconds) compares exactly.
  updated_at timestamp without time zone not null default timezone('utc', now()),
  inserted_at timestamp without time zone not null default timezone('utc', now())
);
create index if not exists messages_inserted_at_topic_index on realtime.messages (inserted_at desc, topic);
alter table realtime.messages enable row level security;
grant select, insert, update on realtime.messages to anon, authenticated, service_role;

-- The channel a policy is evaluated for: set by the data plane for each authorization.
create or replace function realtime.topic() returns text
language sql stable as $$
  select nullif(current_setting('realtime.topic', true), '')::text
$$;

-- A broadcast from SQL: a row of realtime.messages, which the project's change
-- reader delivers to the channel's subscribers. An error is a warning, never
-- the caller's transaction failing (a trigger must not break the write it follows).
create or replace function realtime.send(payload jsonb, event text, topic text, private boolean default true) returns void
language plpgsql volatile as $$
begin
  insert into realtime.messages (payload, event, topic, private, extension)
  values (payload, event, topic, private, 'broadcast');
exception when others then
  raise warning 'ErrorSendingBroadcastMessage: %', sqlerrm;
end
$$;

create or replace function realtime.send_binary(payload bytea, event text, topic text, private boolean default true) returns void
language plpgsql volatile as $$
begin
  insert into realtime.messages (binary_payload, event, topic, private, extension)
  values (payload, event, topic, private, 'broadcast');
exception when others then
  raise warning 'ErrorSendingBroadcastMessage: %', sqlerrm;
end
$$;

-- For triggers: the row's change as Supabase's broadcast_changes sends it.
create or replace function realtime.broadcast_changes(
  topic_name text, event_name text, operation text, table_name text, table_schema text,
  new record, old record, level text default 'ROW'
) returns void
language plpgsql volatile as $$
declare
  row_data jsonb;
begin
  row_data := jsonb_build_object(
    'old_record', case when old is null then null else to_jsonb(old) end,
    'record', case when new is null then null else to_jsonb(new) end,
    'operation', operation, 'table', table_name, 'schema', table_schema);
  perform realtime.send(row_data, event_name, topic_name);
end
$$;

grant execute on all functions in schema realtime to anon, authenticated, service_role, :"api_role", :"owner_role";

-- A private channel's read check (data-plane/realtime/authorization.ts): the
-- two probe rows Supabase Realtime inserts, as baseplane_realtime_probe (see
-- sql/cluster/0006), which the data plane reads back as the caller and rolls back.
grant usage on schema realtime to baseplane_realtime_probe;
grant insert on realtime.messages to baseplane_realtime_probe;
create or replace function realtime.baseplane_probe(probe_topic text, broadcast_id uuid, presence_id uuid) returns void
language sql volatile security definer set search_path = '' as $$
  insert into realtime.messages (id, topic, extension, private) values
    (broadcast_id, probe_topic, 'broadcast', true), (presence_id, probe_topic, 'presence', true)
$$;
alter function realtime.baseplane_probe(text, uuid, uuid) owner to baseplane_realtime_probe;

-- Messages are kept three days (what a replay can reach). About one insert
-- statement in a hundred deletes up to a thousand older rows, so the table
-- stays bounded by what a project sends without the platform visiting every
-- database; as baseplane_realtime_probe, for the owner's policies have no
-- delete for the caller.
grant select, delete on realtime.messages to baseplane_realtime_probe;
create or replace function realtime.baseplane_prune() returns trigger
language plpgsql volatile security definer set search_path = '' as $$
begin
  if random() < 0.01 then
    delete from realtime.messages where id in (
      select id from realtime.messages where inserted_at < timezone('utc', now()) - interval '3 days' limit 1000);
  end if;
  return null;
end
$$;
alter function realtime.baseplane_prune() owner to baseplane_realtime_probe;
revoke execute on function realtime.baseplane_prune() from public;
drop trigger if exists baseplane_prune on realtime.messages;
create trigger baseplane_prune after insert on realtime.messages for each statement execute function realtime.baseplane_prune();
revoke execute on function realtime.baseplane_probe(text, uuid, uuid) from public, anon, authenticated, service_role, :"owner_role";
grant execute on function realtime.baseplane_probe(text, uuid, uuid) to :"api_role";

-- Postgres Changes reads this publication's tables; the owner adds its own
-- (`alter publication supabase_realtime add table ...`), so it owns it.
do $$
begin
  if not exists (select from pg_publication where pubname = 'supabase_realtime') then
    create publication supabase_realtime;
  end if;
  -- Broadcasts from SQL are read from here, beside the owner's tables (the owner cannot change it).
  if not exists (select from pg_publication where pubname = 'supabase_realtime_messages_publication') then
    create publication supabase_realtime_messages_publication for table realtime.messages with (publish = 'insert');
  end if;
end
$$;
alter publication supabase_realtime owner to :"owner_role";
-- The owner writes the policies (as the `postgres` role does on Supabase), so it owns the table
-- (after the publication above takes it in, which needs its owner or a superuser).
alter table realtime.messages owner to :"owner_role";
