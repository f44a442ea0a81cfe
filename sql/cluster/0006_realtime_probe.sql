-- The role a private channel's read check inserts its probe rows as (sql/project/0040):
-- Supabase Realtime authorizes a join by inserting a message per extension
-- into realtime.messages, reading them back under the caller's role and
-- claims, and rolling back. The project's owner owns that table (its policies
-- are the developers'), so a trigger of theirs fires on the insert. The
-- insert runs in a SECURITY DEFINER function owned by this role, which holds
-- nothing but insert on realtime.messages; inside it the owner's code cannot
-- set its role (PostgreSQL refuses SET ROLE within a security-definer
-- function), so it never runs with the platform's login role's rights.
-- BYPASSRLS: the probe is the platform's, inserted whatever the policies say;
-- reading it back as the caller is the check.
do $$
begin
  if not exists (select from pg_roles where rolname = 'baseplane_realtime_probe') then
    create role baseplane_realtime_probe nologin noinherit bypassrls;
  end if;
end
$$;
