-- Who sends for each push-enabled project (workers/push/lease-keeper.ts): one
-- row per project, held by one node until `expires_at` (the database's clock).
-- The holder renews it every few seconds; any node takes it once it has lapsed,
-- and `generation` grows with every take, so a holder that slept through a
-- takeover finds its generation gone. Holding a row needs no connection, which
-- is why nodes that do not send for a project keep none open to it.
create table baseplane.push_leases (
  ref text primary key references baseplane.projects (ref) on delete cascade,
  holder text not null,
  generation bigint not null default 1,
  expires_at timestamptz not null,
  taken_at timestamptz not null default now()
);
