-- Installed into every project database by the platform's admin role.
-- Variables: :"api_role" (the login role the data plane uses), :"owner_role"
-- (the project's developers), :"database".

-- Only this project's own login roles may connect to its database.
revoke all on database :"database" from public;
grant connect, temporary on database :"database" to :"api_role", :"owner_role";
grant create on database :"database" to :"owner_role";

-- The developers own `public` (tables, policies, functions go there).
alter schema public owner to :"owner_role";
grant usage on schema public to anon, authenticated, service_role;

-- Default privileges on public, as Supabase grants them: objects the owner
-- (or the platform) creates are reachable by the API roles, and row-level
-- security decides which rows.
alter default privileges for role :"owner_role" in schema public grant all on tables to anon, authenticated, service_role;
alter default privileges for role :"owner_role" in schema public grant all on functions to anon, authenticated, service_role;
alter default privileges for role :"owner_role" in schema public grant all on sequences to anon, authenticated, service_role;
alter default privileges in schema public grant all on tables to anon, authenticated, service_role;
alter default privileges in schema public grant all on functions to anon, authenticated, service_role;
alter default privileges in schema public grant all on sequences to anon, authenticated, service_role;

create schema auth;
grant usage on schema auth to anon, authenticated, service_role, :"owner_role";

-- These read the request's JWT claims exactly as Supabase's do.
create function auth.uid() returns uuid language sql stable as $$
  select coalesce(
    nullif(current_setting('request.jwt.claim.sub', true), ''),
    (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'sub')
  )::uuid
$$;
comment on function auth.uid() is 'Deprecated. Use auth.jwt() -> ''sub'' instead.';

create function auth.role() returns text language sql stable as $$
  select coalesce(
    nullif(current_setting('request.jwt.claim.role', true), ''),
    (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'role')
  )::text
$$;
comment on function auth.role() is 'Deprecated. Use auth.jwt() -> ''role'' instead.';

create function auth.email() returns text language sql stable as $$
  select coalesce(
    nullif(current_setting('request.jwt.claim.email', true), ''),
    (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'email')
  )::text
$$;
comment on function auth.email() is 'Deprecated. Use auth.jwt() -> ''email'' instead.';

create function auth.jwt() returns jsonb language sql stable as $$
  select coalesce(
    nullif(current_setting('request.jwt.claim', true), ''),
    nullif(current_setting('request.jwt.claims', true), '')
  )::jsonb
$$;

grant execute on all functions in schema auth to anon, authenticated, service_role, :"owner_role";
