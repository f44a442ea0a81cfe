-- Emailed codes and links (one_time_tokens), PKCE flow state, the audit log
-- and the mail record (outbox when the platform has no SMTP server, and the
-- per-hour ceiling's count either way).
create table auth.one_time_tokens (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references auth.users (id) on delete cascade,
  token_type auth.one_time_token_type not null,
  -- hex(sha224(email || code)); the link carries it (prefixed pkce_ for PKCE).
  token_hash text not null check (char_length(token_hash) > 0),
  relates_to text not null,
  created_at timestamp not null default now(),
  updated_at timestamp not null default now(),
  -- Baseplane: wrong guesses of the code (SPEC 8.2: spent after five, from any address).
  failed_attempts integer not null default 0,
  -- Baseplane: the PKCE flow this code belongs to, if any.
  flow_state_id uuid,
  -- Baseplane: where the link lands (already checked against the allow list).
  redirect_to text,
  unique (user_id, token_type)
);
create index one_time_tokens_token_hash_hash_idx on auth.one_time_tokens using hash (token_hash);
create index one_time_tokens_relates_to_hash_idx on auth.one_time_tokens using hash (relates_to);

create table auth.flow_state (
  id uuid primary key default gen_random_uuid(),
  user_id uuid,
  auth_code text,
  code_challenge_method auth.code_challenge_method,
  code_challenge text,
  provider_type text not null,
  provider_access_token text,
  provider_refresh_token text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  authentication_method text not null,
  auth_code_issued_at timestamptz,
  invite_token text,
  referrer text,
  -- Baseplane: the OAuth `nonce`-like secret bound into the provider state.
  state_secret text
);
create unique index flow_state_auth_code_idx on auth.flow_state (auth_code);
create index flow_state_created_at_idx on auth.flow_state (created_at desc);

create table auth.audit_log_entries (
  instance_id uuid,
  id uuid primary key default gen_random_uuid(),
  payload json,
  created_at timestamptz not null default now(),
  ip_address varchar(64) not null default ''
);
create index audit_logs_created_at_idx on auth.audit_log_entries (created_at);

-- Every mail the project's auth sent. `delivery` is 'smtp' (body not kept) or
-- 'outbox' (kept for `baseplane mail list`).
create table auth.mail_messages (
  id bigserial primary key,
  created_at timestamptz not null default now(),
  kind text not null,
  recipient text not null,
  subject text not null,
  html text,
  delivery text not null check (delivery in ('smtp', 'outbox'))
);
create index mail_messages_created_at_idx on auth.mail_messages (created_at);

grant select, insert, update, delete on auth.one_time_tokens, auth.flow_state, auth.audit_log_entries, auth.mail_messages to baseplane_auth_admin;
grant usage, select on sequence auth.mail_messages_id_seq to baseplane_auth_admin;
