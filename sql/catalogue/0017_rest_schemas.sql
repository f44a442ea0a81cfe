-- The schemas a project's data API exposes (issue 29 item 4): PostgREST's
-- `db-schemas`, the first the default one a request without
-- Accept-Profile/Content-Profile is for. Kept on the project's row, so a
-- change bumps its version (trigger project_touched) and every data plane
-- serves the new list from its next request. The control plane checks the
-- names before saving (lib/pg-catalog/exposed-schemas.ts: identifiers, never
-- the platform's schemas); the check here keeps what every node reads
-- well-formed whoever writes the row.
alter table baseplane.projects
  add column rest_schemas text[] not null default array['public']
  constraint projects_rest_schemas_valid check (
    cardinality(rest_schemas) between 1 and 20
    and array_position(rest_schemas, null) is null
    and array_to_string(rest_schemas, ',') ~ '^[A-Za-z_][A-Za-z0-9_$]{0,62}(,[A-Za-z_][A-Za-z0-9_$]{0,62})*$'
  );
