-- Strict "next request" for settings: every change gets a number; each
-- data-plane process (a row in baseplane.nodes) records the highest change it
-- has applied to its cache, and the control plane waits until every live
-- process has caught up before it reports a change as done.
create sequence baseplane.change_seq as bigint;

create table baseplane.nodes (
  id text primary key,
  seen_change bigint not null default 0,
  heartbeat_at timestamptz not null default now()
);

create or replace function baseplane.project_touched() returns trigger language plpgsql as $$
begin
  if tg_op = 'UPDATE' then
    new.version := old.version + 1;
    new.updated_at := now();
  end if;
  -- The ref alone, for anything that only wants to know (push actors), and
  -- the ref with its change number, for the caches that acknowledge it.
  perform pg_notify('baseplane_project_changed', coalesce(new.ref, old.ref));
  perform pg_notify('baseplane_change', coalesce(new.ref, old.ref) || ':' || nextval('baseplane.change_seq'));
  return coalesce(new, old);
end $$;

create function baseplane.last_change() returns bigint language sql stable as $$
  select case when is_called then last_value else 0 end from baseplane.change_seq
$$;
