-- Events for the host (issue 27 item 5): what happened to the fleet's
-- projects (created, deleted, plan changed, suspended, paused, resumed; the
-- kinds are control-plane/events.ts EVENT_KINDS, an open list: the check
-- below admits any dotted lowercase name, so a new kind needs no migration).
-- Each is appended in the transaction of the change it reports, so an event
-- exists exactly when its change was committed.
--
-- The table is also the operator webhook's outbox
-- (control-plane/event-outbox.ts): an event appended while the fleet has a
-- webhook (fleet setting operator_webhook_url) is `pending`; any node with the
-- webhook configured claims due events with `for update skip locked` (one
-- node per event at a time), posts them, and records the attempt. A node that
-- dies mid-post leaves its claim to the database, which ends it, and the event
-- is tried again: at least once, never lost.
--
-- No foreign key to baseplane.projects: a deleted project's events are kept.
create table baseplane.events (
  id bigint generated always as identity primary key,
  kind text not null check (kind ~ '^[a-z][a-z_]*(\.[a-z][a-z_]*)+$'),
  ref text not null check (ref ~ '^[a-z][a-z0-9]{2,39}$'),
  at timestamptz not null default now(),
  -- What the kind carries besides the ref (the plan before and after, the reason, ...).
  data jsonb not null default '{}' check (jsonb_typeof(data) = 'object'),
  -- `none`: no webhook when it happened; `pending`: to be posted at next_attempt_at;
  -- `delivered`; `failed`: every attempt of the schedule failed.
  delivery text not null check (delivery in ('none', 'pending', 'delivered', 'failed')),
  attempts integer not null default 0 check (attempts >= 0),
  next_attempt_at timestamptz,
  last_attempt_at timestamptz,
  last_error text,
  delivered_at timestamptz,
  check ((delivery = 'pending') = (next_attempt_at is not null))
);

-- Reading (newest first, by project or kind) and the outbox's due scan.
create index events_ref on baseplane.events (ref, id);
create index events_kind on baseplane.events (kind, id);
create index events_due on baseplane.events (next_attempt_at) where delivery = 'pending';
