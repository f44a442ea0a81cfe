-- The operator's overrides of a project's API role timeouts, in milliseconds
-- (0: no limit): keys anon, authenticated, service_role (statement_timeout)
-- and idle_in_transaction (idle_in_transaction_session_timeout). Only
-- overrides are stored, so a change of the platform's defaults (lib/plans.ts)
-- reaches every project that kept them. Written by
-- control-plane/role-timeouts.ts; the update trigger bumps the project's
-- version and notifies, so the next request runs with the new values.
--
-- The check keeps what every data-plane process reads well-formed (known keys,
-- whole milliseconds within PostgreSQL's range for these settings), whoever
-- writes the row; the tighter bound the operator sees lives in the control plane.
create function baseplane.role_timeouts_valid(value jsonb) returns boolean
  language sql immutable strict as $$
    select jsonb_typeof(value) = 'object'
      and value - array['anon', 'authenticated', 'service_role', 'idle_in_transaction'] = '{}'::jsonb
      and not jsonb_path_exists(value, '$.* ? (@.type() != "number" || @ < 0 || @ > 2147483647 || @.floor() != @)')
  $$;

alter table baseplane.projects
  add column role_timeouts jsonb not null default '{}'::jsonb
  constraint projects_role_timeouts_valid check (baseplane.role_timeouts_valid(role_timeouts));
