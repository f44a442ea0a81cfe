-- Schemas auth, push and graphql are the platform's names in every project
-- database. They are made here, owned by the platform's admin role with no
-- create right for the project's owner, so the owner (who may create schemas
-- in its database) cannot take one of them before the platform needs it:
-- push is only installed when the product is enabled. For projects whose
-- owner made one of them already, `if not exists` leaves it, and enabling
-- push refuses with what to do (workers/push/install.ts).
create schema if not exists auth;
create schema if not exists push;
create schema if not exists graphql;
