-- The SQL editor's history and saved snippets (issue 42 item 4), each kept
-- per project and per caller: `actor` is who ran or saved it as events name
-- them (control-plane/access.ts actorOf: 'operator' or 'member:<email>'), so
-- the operator and each member see their own. No key to a members table: a
-- member's rows go with the project, and naming them by actor keeps them
-- readable in the events' terms.
create table baseplane.sql_runs (
  id bigint generated always as identity primary key,
  ref text not null references baseplane.projects (ref) on delete cascade,
  actor text not null check (length(actor) between 1 and 400),
  query text not null,
  -- 'owner', 'anon', 'authenticated' (as `user_id`) or 'service_role'.
  role text not null check (role in ('owner', 'anon', 'authenticated', 'service_role')),
  user_id uuid,
  explain boolean not null default false,
  read_only boolean not null default false,
  at timestamptz not null default now(),
  duration_ms integer not null check (duration_ms >= 0),
  -- The last statement's rows (returned or affected) when it succeeded, else null.
  row_count bigint,
  -- PostgreSQL's SQLSTATE (or the platform's code) when it failed, else null.
  error_code text
);
-- A caller's history, newest first; the operation keeps the last few per caller.
create index sql_runs_by_actor on baseplane.sql_runs (ref, actor, id desc);

create table baseplane.sql_snippets (
  id bigint generated always as identity primary key,
  ref text not null references baseplane.projects (ref) on delete cascade,
  actor text not null check (length(actor) between 1 and 400),
  name text not null check (length(name) between 1 and 100),
  query text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint sql_snippets_name_unique unique (ref, actor, name)
);
