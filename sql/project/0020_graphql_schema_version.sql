-- GraphQL schema version (workers/graphql): every DDL, GRANT, REVOKE or
-- COMMENT that can change the generated GraphQL schema gives
-- graphql.schema_state a new version, so a built schema is cached per
-- (database, version, role) and a steady request rebuilds nothing (issue 4
-- item 6, SPEC 4.2 rule 3).
--
-- The version is written transactionally: a transaction sees its own DDL's
-- version at once (so resolve() inside it rebuilds and sees the uncommitted
-- tables), other connections see the new version only once it commits (so
-- they never cache a schema built before the commit under the new version).
-- The values come from a sequence, so a rolled-back version is never reused.
-- Temporary objects and REFRESH MATERIALIZED VIEW leave the version alone.
-- Installed by the platform's admin role (a superuser: event triggers need one).

create schema if not exists graphql;
grant usage on schema graphql to anon, authenticated, service_role, :"owner_role";

create sequence graphql.schema_version_seq as bigint;

create table graphql.schema_state (
  singleton boolean primary key default true check (singleton),
  version bigint not null
);
insert into graphql.schema_state (version) values (nextval('graphql.schema_version_seq'));
revoke all on graphql.schema_state from public;

-- Readable by every role (library callers may use roles of their own).
create function graphql.schema_version() returns bigint
language sql stable security definer set search_path = pg_catalog as $$
  select version from graphql.schema_state
$$;
grant execute on function graphql.schema_version() to public;

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
  update graphql.schema_state set version = nextval('graphql.schema_version_seq');
end
$$;

create function graphql.bump_schema_version_on_drop() returns event_trigger
language plpgsql security definer set search_path = pg_catalog as $$
begin
  if not exists (select from pg_event_trigger_dropped_objects() d where not d.is_temporary) then
    return;
  end if;
  update graphql.schema_state set version = nextval('graphql.schema_version_seq');
end
$$;

create event trigger baseplane_graphql_ddl on ddl_command_end
  execute function graphql.bump_schema_version_on_ddl();
create event trigger baseplane_graphql_drop on sql_drop
  execute function graphql.bump_schema_version_on_drop();
