-- Any role may be served by the GraphQL engine, as pg_graphql serves any role
-- its grants allow (issue 13 item 8): every request reads
-- graphql.schema_version() (executable by PUBLIC since 0020), which needs
-- USAGE on schema graphql. Before this, a role the project created itself was
-- refused with "permission denied for schema graphql". Nothing else opens up:
-- the state table and the sequence grant PUBLIC nothing, and the event-trigger
-- functions can only run as event triggers.
grant usage on schema graphql to public;
