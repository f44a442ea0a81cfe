-- The function a project's data API calls before every request's statement
-- (PostgREST's `db-pre-request`), named by the operator per project as
-- `schema.fn` or `fn`; null means none. Kept on the project's row, beside the
-- exposed schemas (0017) and the max rows (0018), so a change bumps its
-- version (trigger project_touched) and every data plane calls it from its
-- next request. The control plane checks the name before saving
-- (lib/pg-catalog/pre-request.ts); the check here keeps what every node reads
-- a name it can quote and call, whoever writes the row. A function that does
-- not exist is not refused here: it may be created after it is named.
alter table baseplane.projects
  add column rest_pre_request text
  constraint projects_rest_pre_request_valid check (
    rest_pre_request ~ '^([A-Za-z_][A-Za-z0-9_$]{0,62}\.)?[A-Za-z_][A-Za-z0-9_$]{0,62}$'
  );
