-- Anonymous sign-ins (issue 25; GoTrue's GOTRUE_EXTERNAL_ANONYMOUS_USERS_ENABLED).
-- auth.users.is_anonymous is in 0002 already; GoTrue indexes it
-- (migrations/20240214120130_add_is_anonymous_column.up.sql).
create index if not exists users_is_anonymous_idx on auth.users (is_anonymous);

-- The per-address limit on anonymous sign-ins (GoTrue's RATE_LIMIT_ANONYMOUS_USERS)
-- counts the sign-up audit entries of the address in the last hour
-- (workers/auth/db/audit.ts): this index holds only those entries.
create index if not exists audit_logs_anonymous_signups_idx on auth.audit_log_entries (ip_address, created_at)
  where (payload ->> 'action') = 'user_signedup' and (payload -> 'traits' ->> 'provider') = 'anonymous';
