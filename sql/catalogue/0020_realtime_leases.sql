-- Who reads each project's changes (workers/realtime/changes/): one row per
-- project that has Realtime sockets somewhere in the fleet, held by one node
-- until `expires_at` (the database's clock), as push's leases are
-- (0010_push_leases.sql). Every node with a socket of the project tries to take
-- it, so a reader exists while any node has one; the holder reads through a
-- TEMPORARY replication slot, which PostgreSQL drops with its connection, so a
-- lapsed lease never leaves a slot retaining WAL.
create table baseplane.realtime_leases (
  ref text primary key references baseplane.projects (ref) on delete cascade,
  holder text not null,
  generation bigint not null default 1,
  expires_at timestamptz not null,
  taken_at timestamptz not null default now()
);
