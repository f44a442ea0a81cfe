-- What every data-plane process of one catalogue must agree on, written once by
-- the first process and checked by every other at its start
-- (control-plane/fleet-settings.ts). The admin token is a secret like the
-- projects' JWT secrets beside it: the catalogue is the platform's secret store.
create table baseplane.fleet_settings (
  name text primary key,
  value text not null,
  set_at timestamptz not null default now()
);
