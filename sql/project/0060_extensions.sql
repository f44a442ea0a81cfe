-- Supabase's default extensions (issue 40, DECISIONS "The clients' own
-- expectations"): seeds and migrations written for Supabase call
-- crypt(..., gen_salt('bf')) and uuid_generate_v4() unqualified, finding them
-- in the schema `extensions` on the search path. This makes that schema and
-- puts it last on every session's path in the project's database (the owner's
-- `baseplane db url` sessions and the platform's logins; the Data API sets its
-- own path per request and appends it there too, request/profiles.ts).
-- The extensions themselves are installed by control-plane/default-extensions.ts
-- on every upgrade, where the server has them, so a server that gains one
-- later installs it then.
create schema if not exists extensions;
grant usage on schema extensions to anon, authenticated, service_role, :"owner_role";
-- The owner may add extensions of its own there, as Supabase's docs show
-- (`create extension pg_trgm with schema extensions`). Last on the path, the
-- schema shadows nothing in pg_catalog or public.
grant create on schema extensions to :"owner_role";
alter database :"database" set search_path = "$user", public, extensions;
