-- A project's own API roles (`baseplane projects roles`): roles besides anon,
-- authenticated and service_role that its tokens may name, as a Supabase
-- developer makes with `create role editor; grant editor to authenticator`.
-- Written by control-plane/project-roles.ts, which makes the role on the
-- project's server before the row is committed, so the data plane never
-- accepts a role its login role cannot switch to.
--
-- The name check repeats the control plane's (a lowercase identifier), so
-- what every data-plane process reads is well-formed whoever writes the row.
create table baseplane.project_roles (
  ref text not null references baseplane.projects (ref) on delete cascade,
  name text not null check (name ~ '^[a-z][a-z0-9_]{0,62}$'),
  created_at timestamptz not null default now(),
  primary key (ref, name)
);

-- Adding or removing a role is a change of the project: touching its row bumps
-- its version and notifies (baseplane.project_touched), so every data plane
-- reloads the record and the gate accepts or refuses the role on the next request.
create function baseplane.project_roles_touched() returns trigger language plpgsql as $$
begin
  update baseplane.projects set version = version where ref = coalesce(new.ref, old.ref);
  return null;
end $$;

create trigger project_roles_touched after insert or delete on baseplane.project_roles
  for each row execute function baseplane.project_roles_touched();
