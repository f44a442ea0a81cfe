-- Cluster-wide API roles, as Supabase defines them. No login: the platform's
-- per-project login role switches to them with SET LOCAL ROLE per request.
-- Applied idempotently to every database server before a project is placed on it.
do $$
begin
  if not exists (select from pg_roles where rolname = 'anon') then
    create role anon nologin noinherit;
  end if;
  if not exists (select from pg_roles where rolname = 'authenticated') then
    create role authenticated nologin noinherit;
  end if;
  if not exists (select from pg_roles where rolname = 'service_role') then
    create role service_role nologin noinherit bypassrls;
  end if;
end
$$;
