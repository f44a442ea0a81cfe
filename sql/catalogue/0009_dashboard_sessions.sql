-- Dashboard sign-ins (control-plane/dashboard/session.ts). The cookie holds a
-- random id; only its SHA-256 is kept, so a copy of this table signs no one in.
-- Signing out deletes the row, which ends the session in every process at once.
create table baseplane.dashboard_sessions (
  id_hash text primary key,
  expires_at timestamptz not null
);
create index dashboard_sessions_expiry on baseplane.dashboard_sessions (expires_at);
