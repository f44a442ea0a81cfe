-- TOTP second factors and their challenges (issue 6). `last_timestep` is
-- Baseplane's own: the last accepted 30-second step, so a code is accepted
-- once (SPEC 5.5), which GoTrue does not guard.
create table auth.mfa_factors (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references auth.users (id) on delete cascade,
  friendly_name text,
  factor_type auth.factor_type not null,
  status auth.factor_status not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  secret text,
  phone text,
  last_challenged_at timestamptz,
  last_timestep bigint
);
create index factor_id_created_at_idx on auth.mfa_factors (user_id, created_at);
create unique index mfa_factors_user_friendly_name_unique on auth.mfa_factors (friendly_name, user_id) where trim(friendly_name) <> '';

create table auth.mfa_challenges (
  id uuid primary key default gen_random_uuid(),
  factor_id uuid not null references auth.mfa_factors (id) on delete cascade,
  created_at timestamptz not null default now(),
  verified_at timestamptz,
  ip_address inet not null
);
create index mfa_challenge_created_at_idx on auth.mfa_challenges (created_at desc);

alter table auth.sessions add constraint sessions_factor_id_fkey foreign key (factor_id) references auth.mfa_factors (id) on delete set null;

grant select, insert, update, delete on auth.mfa_factors, auth.mfa_challenges to baseplane_auth_admin;
grant select on auth.mfa_factors to :"owner_role";
