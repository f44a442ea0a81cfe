-- The role Supabase's documentation grants a project's auth hooks to
-- (`grant execute on function ... to supabase_auth_admin`, `grant usage on
-- schema public to supabase_auth_admin`), so those grants work unchanged. No
-- login, no rights of its own: the auth worker runs a hook's function as it
-- (SET LOCAL ROLE, workers/auth/hooks/pg-hook.ts), and it holds only what a
-- project's developers grant it in that project's database. Each project's
-- login role is made a member of it by the project SQL (sql/project/0009).
do $$
begin
  if not exists (select from pg_roles where rolname = 'supabase_auth_admin') then
    create role supabase_auth_admin nologin noinherit;
  end if;
end
$$;
