-- More database servers (`baseplane servers add`): each row gets the number of
-- connections one data-plane process may open to project databases there
-- (the default server's is BASEPLANE_MAX_PROJECT_CONNECTIONS), and the
-- server's system identifier, so one server is not registered twice under two
-- names or URLs. Rows written by hand before `servers add` existed get a
-- budget of 100; `servers add` always states one.
alter table baseplane.db_servers
  add column connection_budget integer not null default 100 check (connection_budget between 1 and 100000),
  add column system_identifier text unique;
alter table baseplane.db_servers alter column connection_budget drop default;

-- The catalogue holds every project's secrets: no tenant role may even
-- connect to its database (when it is not `postgres`, which the cluster SQL
-- closes). The platform's own role keeps access as owner or superuser.
do $$
begin
  execute format('revoke connect on database %I from public', current_database());
end
$$;
