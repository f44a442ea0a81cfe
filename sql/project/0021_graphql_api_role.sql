-- The data plane's login role reads the schema version before it switches to
-- the caller's role (GraphQL opens the transaction and sets the role in one
-- round trip), so it needs to see schema graphql too.
grant usage on schema graphql to :"api_role";
