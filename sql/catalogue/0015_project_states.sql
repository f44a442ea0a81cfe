-- Suspension and pause (issue 27 item 4). A project is `active`, `suspended`
-- by its operator (with a reason, shown to operators only), or `paused` by the
-- fleet after a time without requests (free plan, BASEPLANE_PAUSE_IDLE_DAYS).
-- Anything but active answers every request with project_suspended or
-- project_paused, and its login roles are NOLOGIN (control-plane/suspension.ts).
-- A change of state is an update of the row, so its trigger bumps the version
-- and notifies: every data plane reloads the record, and the push actor hosts
-- let the project's sending lease go.
alter table baseplane.projects
  add column state text not null default 'active' check (state in ('active', 'suspended', 'paused')),
  add column state_reason text check (length(state_reason) between 1 and 500),
  add column state_changed_at timestamptz,
  add check ((state = 'suspended') = (state_reason is not null));

-- When each project was last asked something (a request the data plane let
-- through to it), for the pause. Written by each node once a flush interval for
-- the projects it served (data-plane/request-activity.ts), never per request;
-- apart from baseplane.projects so that writing it notifies no one.
create table baseplane.project_activity (
  ref text primary key references baseplane.projects (ref) on delete cascade,
  last_request_at timestamptz not null
);
