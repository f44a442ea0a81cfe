-- Members (issue 42): the platform's own accounts, never a project's Auth
-- users. The operator (the admin token) invites a person by email to projects
-- with a role; the member sets a password from the invitation mail, signs in
-- to the dashboard (optionally with TOTP) and makes personal access tokens for
-- the admin API and the CLI (control-plane/members.ts).
create table baseplane.members (
  id uuid primary key default gen_random_uuid(),
  email text not null unique check (email = lower(email) and email ~ '^[^@\s]+@[^@\s]+$' and length(email) <= 254),
  -- bcrypt, as Auth's; null until the invitation is accepted.
  password_hash text,
  -- base32 TOTP secret once enrolled (otplib, as Auth's MFA); the last step used refuses a replayed code.
  totp_secret text,
  totp_last_step bigint,
  created_at timestamptz not null default now()
);

-- A member's role on a project. A deleted project takes its memberships with it.
create table baseplane.memberships (
  member_id uuid not null references baseplane.members (id) on delete cascade,
  ref text not null references baseplane.projects (ref) on delete cascade,
  role text not null check (role in ('owner', 'developer', 'read-only')),
  created_at timestamptz not null default now(),
  primary key (member_id, ref)
);
create index memberships_ref on baseplane.memberships (ref);

-- Dashboard sign-ins of members (as baseplane.dashboard_sessions: only the id's SHA-256 kept).
create table baseplane.member_sessions (
  id_hash text primary key,
  member_id uuid not null references baseplane.members (id) on delete cascade,
  expires_at timestamptz not null
);
create index member_sessions_expiry on baseplane.member_sessions (expires_at);

-- Invitation and password reset links: only the token's SHA-256 kept, used once.
create table baseplane.member_links (
  token_hash text primary key,
  member_id uuid not null references baseplane.members (id) on delete cascade,
  purpose text not null check (purpose in ('invitation', 'reset')),
  expires_at timestamptz not null,
  used_at timestamptz
);
create index member_links_member on baseplane.member_links (member_id);

-- Personal access tokens (`bp_pat_...`): shown once, only their SHA-256 kept.
create table baseplane.member_tokens (
  id uuid primary key default gen_random_uuid(),
  member_id uuid not null references baseplane.members (id) on delete cascade,
  name text not null check (length(name) between 1 and 100),
  token_hash text not null unique,
  -- The first characters, so a member can tell their tokens apart.
  prefix text not null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  revoked_at timestamptz,
  last_used_at timestamptz
);
create index member_tokens_member on baseplane.member_tokens (member_id);

-- Members' mail (invitations, resets): every mail recorded; the body kept only
-- when no SMTP server took it (the outbox `baseplane members mail` reads).
create table baseplane.member_mail (
  id bigint generated always as identity primary key,
  recipient text not null,
  subject text not null,
  html text,
  delivery text not null check (delivery in ('smtp', 'outbox')),
  at timestamptz not null default now()
);

-- Failed sign-ins per email and per address (as Auth's throttle, shared by every node).
create unlogged table baseplane.member_throttle (
  key text primary key,
  window_start timestamptz not null,
  failures integer not null check (failures >= 0)
);

-- Who made a change: `operator`, `member:<email>`, or null (the platform itself: the pause sweep, the quotas).
alter table baseplane.events add column actor text;
