-- Failed auth attempts per (project, address), shared by every data-plane
-- process of the catalogue, so that N processes behind a load balancer do not
-- give an address N times the attempts (data-plane/throttle.ts keeps the
-- synchronous view and writes here in batches). Unlogged: a crash only
-- forgives some recent failures, and the batches cost no WAL.
create unlogged table baseplane.throttle (
  ref text not null,
  address text not null,
  window_start timestamptz not null,
  failures integer not null check (failures >= 0),
  blocked_until timestamptz,
  -- When a block was last set: each process polls for blocks set since its last look.
  blocked_at timestamptz,
  primary key (ref, address)
);

create index throttle_blocked_at on baseplane.throttle (blocked_at) where blocked_at is not null;
