-- Quotas by plan (issue 27 item 3). The plans' figures and policies are
-- code (lib/plans.ts PLAN_QUOTAS); a project may have the operator's own
-- overrides, kept on its row so that a change bumps its version and reaches
-- every data plane at once, like any other setting:
--   {"policy": "bill" | "cap", "figures": {"<quota>": <whole number> | null}}
-- (null: no quota). The control plane validates the keys (control-plane/quotas.ts).
alter table baseplane.projects
  add column quota_overrides jsonb not null default '{}' check (jsonb_typeof(quota_overrides) = 'object'),
  -- Past its database size cap (the latest sample at or over the figure): the
  -- API roles' and the owner's writes are refused until a sample is under it
  -- again (control-plane/quota-watch.ts sets and clears it).
  add column read_only boolean not null default false;

-- Each crossing of 80% and 100% of a quota, once per project, month and step:
-- the primary key makes the fleet's job idempotent whichever node runs it.
create table baseplane.quota_notices (
  ref text not null,
  month date not null check (extract(day from month) = 1),
  quota text not null,
  percent integer not null check (percent in (80, 100)),
  used bigint not null,
  figure bigint not null,
  crossed_at timestamptz not null default now(),
  primary key (ref, month, quota, percent)
);

-- The fleet job that compares each project's month with its quotas.
insert into baseplane.usage_jobs (job) values ('quotas') on conflict do nothing;
