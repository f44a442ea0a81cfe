-- GraphQL schema version (workers/graphql): a counter every DDL, GRANT, REVOKE
-- or COMMENT that can change the generated GraphQL schema moves forward, so a
-- built schema is cached per (database, version, role) and a steady request
-- rebuilds nothing (issue 4 item 6). A sequence is not transactional, so DDL
-- not yet committed in the caller's own transaction is seen at once.
-- Temporary objects and REFRESH MATERIALIZED VIEW leave the version alone
-- (SPEC 4.2 rule 3). Installed by the platform's admin role (a superuser:
-- event triggers need one).

create schema if not exists graphql;
grant usage on schema graphql to anon, authenticated, service_role, :"owner_role";

create sequence graphql.schema_version as bigint;
grant select on sequence graphql.schema_version to anon, authenticated, service_role, :"owner_role";

create function graphql.bump_schema_version_on_ddl() returns event_trigger
language plpgsql security definer set search_path = pg_catalog as $$
begin
  if tg_tag = 'REFRESH MATERIALIZED VIEW' then
    return;
  end if;
  -- Nothing but temporary objects (schema pg_temp_N): nothing to rebuild. A
  -- DROP lists no command here; the sql_drop trigger below counts it.
  if not exists (
    select from pg_event_trigger_ddl_commands() c
    where c.schema_name is null or (c.schema_name not like 'pg\_temp%' and c.schema_name not like 'pg\_toast\_temp%')
  ) then
    return;
  end if;
  perform nextval('graphql.schema_version');
end
$$;

create function graphql.bump_schema_version_on_drop() returns event_trigger
language plpgsql security definer set search_path = pg_catalog as $$
begin
  if not exists (select from pg_event_trigger_dropped_objects() d where not d.is_temporary) then
    return;
  end if;
  perform nextval('graphql.schema_version');
end
$$;

create event trigger baseplane_graphql_ddl on ddl_command_end
  execute function graphql.bump_schema_version_on_ddl();
create event trigger baseplane_graphql_drop on sql_drop
  execute function graphql.bump_schema_version_on_drop();
