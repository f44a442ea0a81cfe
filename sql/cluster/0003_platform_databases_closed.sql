-- Tenants' login roles (every project's owner and api roles) may connect to
-- their own project database and nothing else on the server. `postgres` and
-- `template1` grant CONNECT to public by default, which let an owner role in
-- to LISTEN on the platform's change channel (issue 11). CREATE DATABASE
-- copies template1 without connecting to it, so creating projects still works.
-- Run on every server each time roles are ensured, so existing installs are
-- closed too; a server without one of these databases is skipped.
do $$
declare
  name text;
begin
  -- Only where PUBLIC still has CONNECT: a steady start rewrites no catalogue row.
  for name in
    select datname from pg_database
     where datname in ('postgres', 'template1')
       and (datacl is null or exists (select from aclexplode(datacl) acl where acl.grantee = 0 and acl.privilege_type = 'CONNECT'))
  loop
    execute format('revoke connect on database %I from public', name);
  end loop;
end
$$;
