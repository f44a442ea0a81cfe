-- How a project's data API ends its transactions and whether it answers
-- plans (issue 40 items 2 and 3), set by the operator per project beside the
-- max rows (0018) and the pre-request function (0019), so a change bumps the
-- project's version (trigger project_touched) and every data plane applies it
-- from its next request.
--
-- rest_tx_end is PostgREST's `db-tx-end`: `commit` (the default, as
-- PostgREST's), `commit-allow-override` (commit unless the request says
-- `Prefer: tx=rollback`), `rollback` (every transaction rolled back) and
-- `rollback-allow-override` (rolled back unless `Prefer: tx=commit`).
-- rest_plans is its `db-plan-enabled`: `Accept: application/vnd.pgrst.plan`
-- answers the statement's EXPLAIN; off by default, as plans reveal the
-- project's objects. The control plane checks both before saving
-- (lib/rest-tx-end.ts, lib/rest-plans.ts); the checks here keep what every
-- node reads one of the values it knows, whoever writes the row.
alter table baseplane.projects
  add column rest_tx_end text not null default 'commit'
    constraint projects_rest_tx_end_valid check (rest_tx_end in ('commit', 'commit-allow-override', 'rollback', 'rollback-allow-override')),
  add column rest_plans boolean not null default false;
