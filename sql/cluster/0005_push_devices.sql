-- The role the push actor's changes to push.devices run as (sql/push/0004):
-- the project's owner owns that table (its policies are the developers'), so
-- a trigger or rule of theirs fires on the actor's update. The update runs in
-- a SECURITY DEFINER function owned by this role, which holds nothing but
-- select and update on push.devices; inside it the owner's code can neither
-- reset nor set its role (PostgreSQL refuses SET ROLE within a security-definer
-- function), so it never runs with the platform's login role's rights.
-- BYPASSRLS: the owner's policies decide what callers see, not what the
-- platform deactivates.
do $$
begin
  if not exists (select from pg_roles where rolname = 'baseplane_push_devices') then
    create role baseplane_push_devices nologin noinherit bypassrls;
  end if;
end
$$;
