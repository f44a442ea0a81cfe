-- The role the auth worker switches to (SET ROLE) to read and write schema
-- `auth`. No login; each project's login role is made a member of it by the
-- project SQL (sql/project/0002). The API roles anon, authenticated and
-- service_role get nothing in schema auth beyond its functions.
do $$
begin
  if not exists (select from pg_roles where rolname = 'baseplane_auth_admin') then
    create role baseplane_auth_admin nologin noinherit;
  end if;
end
$$;
