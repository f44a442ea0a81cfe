-- The most rows a project's data API answers in one response (issue 29):
-- PostgREST's `db-max-rows`, set by the operator per project. Null means the
-- node's own (BASEPLANE_REST_MAX_ROWS, 1,000 unless set). Kept on the
-- project's row, beside the exposed schemas (0017), so a change bumps its
-- version (trigger project_touched) and every data plane applies it from its
-- next request. The control plane checks the value before saving
-- (control-plane/rest-settings.ts); the check here keeps what every node
-- reads in range whoever writes the row.
alter table baseplane.projects
  add column rest_max_rows integer
  constraint projects_rest_max_rows_valid check (rest_max_rows between 1 and 1000000);
