-- The platform catalogue: every project, where its database lives, its keys
-- and settings. Data-plane processes cache rows and drop them when
-- `baseplane_project_changed` is notified with the project's ref.

create table baseplane.projects (
  ref text primary key check (ref ~ '^[a-z][a-z0-9]{2,39}$'),
  name text not null check (length(name) between 1 and 200),
  plan text not null default 'free' check (plan in ('free', 'plus', 'pro', 'business')),
  db_server text not null default 'default',
  db_name text not null unique,
  db_api_role text not null,
  db_api_password text not null,
  db_owner_role text not null,
  db_owner_password text not null,
  jwt_secret text not null check (length(jwt_secret) >= 43),
  anon_key text not null,
  service_role_key text not null,
  auth_enabled boolean not null default false,
  push_enabled boolean not null default false,
  -- Bumped by every change, so a cached copy can tell it is stale.
  version bigint not null default 1,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

-- Where project databases may live. 'default' is the platform's own server
-- (DATABASE_URL or the embedded one) and needs no row.
create table baseplane.db_servers (
  id text primary key check (id ~ '^[a-z0-9_-]{1,40}$' and id <> 'default'),
  admin_url text not null,
  created_at timestamptz not null default now()
);

create function baseplane.project_touched() returns trigger language plpgsql as $$
begin
  if tg_op = 'UPDATE' then
    new.version := old.version + 1;
    new.updated_at := now();
  end if;
  perform pg_notify('baseplane_project_changed', coalesce(new.ref, old.ref));
  return coalesce(new, old);
end $$;

create trigger project_touched before update on baseplane.projects
  for each row execute function baseplane.project_touched();
create trigger project_inserted_or_deleted after insert or delete on baseplane.projects
  for each row execute function baseplane.project_touched();
