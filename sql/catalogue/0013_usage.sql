-- Usage per project, recorded once for the fleet (issue 27 item 1): each
-- data-plane node counts in memory and adds its counts here in one statement
-- a minute (data-plane/usage-recorder.ts); one node at a time rolls the
-- minutes up into hours and days and deletes them, prunes past the retention,
-- and samples the projects' database sizes (control-plane/usage-upkeep.ts).
--
-- No foreign key to baseplane.projects: the usage of a deleted project is kept
-- for billing (../shared/DECISIONS.md). Counters are named by text
-- (lib/metrics/usage-counters.ts: `requests_auth`, `push_fcm_sent`, ...), one
-- row per nonzero counter, so a new counter (a new concern) needs no
-- migration. Times are UTC: the billing month is the UTC calendar month.

-- Added to by every node (`value = value + excluded.value`); rolled up and
-- deleted once their minute is over, so the table holds a few minutes.
create table baseplane.usage_minutes (
  ref text not null,
  minute timestamptz not null,
  counter text not null,
  value bigint not null check (value >= 0),
  primary key (ref, minute, counter)
);

create table baseplane.usage_hours (
  ref text not null,
  hour timestamptz not null,
  counter text not null,
  value bigint not null check (value >= 0),
  primary key (ref, hour, counter)
);

create table baseplane.usage_days (
  ref text not null,
  day date not null,
  counter text not null,
  value bigint not null check (value >= 0),
  primary key (ref, day, counter)
);

-- The export reads a month of days for every project in one pass.
create index usage_days_day on baseplane.usage_days (day);
create index usage_minutes_minute on baseplane.usage_minutes (minute);

-- Monthly active users, exact: a user who signed in or refreshed a token in
-- the month (Supabase's definition), one row however many nodes saw them
-- (`on conflict do nothing`). `anonymous` is as first seen in the month.
create table baseplane.usage_active_users (
  ref text not null,
  month date not null check (extract(day from month) = 1),
  user_id uuid not null,
  anonymous boolean not null,
  primary key (ref, month, user_id)
);

create index usage_active_users_month on baseplane.usage_active_users (month);

-- pg_database_size per project and day: the largest sample and the latest.
create table baseplane.usage_database_sizes (
  ref text not null,
  day date not null,
  peak_bytes bigint not null,
  last_bytes bigint not null,
  sampled_at timestamptz not null,
  primary key (ref, day)
);

create index usage_database_sizes_day on baseplane.usage_database_sizes (day);

-- The fleet's periodic usage jobs (the idea of push_leases, for work that is
-- not per project): a node runs a job only after it has moved the job's
-- `due_at` past now (one update, the database's clock), so one node a period
-- does it, and a node that dies mid-job leaves it to the next period.
create table baseplane.usage_jobs (
  job text primary key,
  due_at timestamptz not null default '-infinity',
  holder text,
  claimed_at timestamptz
);

insert into baseplane.usage_jobs (job) values ('rollup'), ('retention'), ('database_sizes');
