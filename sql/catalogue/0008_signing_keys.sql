-- A project's asymmetric signing keys (issue 15 item 7; auth-clients.md
-- section 2): Auth signs access tokens with the key in use and publishes every
-- key here at /auth/v1/.well-known/jwks.json; the data plane accepts tokens of
-- any of them (and HS256 with the legacy jwt_secret, as before). Private keys
-- live here as the JWT secret does, in baseplane.projects.
--
-- States follow from the timestamps, so a key changes state on time without
-- anyone writing (lib/jwt.ts signingKeyState): standby until signs_from
-- (published, not signing), in use until retires_at (the next key's
-- signs_from), previously used until drops_at (its last token's expiry), then
-- dropped: no longer read, and deleted by the next rotation. Written only by
-- control-plane/signing-keys.ts. Keys for projects made before this file are
-- made by the control plane when it opens (key generation needs node:crypto).
create table baseplane.signing_keys (
  kid uuid primary key,
  ref text not null references baseplane.projects (ref) on delete cascade,
  alg text not null check (alg in ('ES256', 'RS256')),
  private_jwk jsonb not null check (jsonb_typeof(private_jwk) = 'object' and private_jwk ? 'd'),
  signs_from timestamptz not null,
  retires_at timestamptz,
  drops_at timestamptz,
  created_at timestamptz not null default now(),
  check ((retires_at is null) = (drops_at is null)),
  check (retires_at is null or (retires_at >= signs_from and drops_at >= retires_at))
);

create index signing_keys_ref on baseplane.signing_keys (ref, signs_from);

-- Every data plane reads keys with the project's record: a change to them is a
-- change of the project (version bump and notification, as project_roles).
create function baseplane.signing_keys_touched() returns trigger language plpgsql as $$
begin
  update baseplane.projects set version = version where ref = coalesce(new.ref, old.ref);
  return null;
end $$;

create trigger signing_keys_touched after insert or update or delete on baseplane.signing_keys
  for each row execute function baseplane.signing_keys_touched();

-- Milliseconds since the epoch, as the catalogue's readers want timestamps in JSON.
create function baseplane.epoch_ms(t timestamptz) returns bigint language sql stable as $$
  select floor(extract(epoch from t) * 1000)::bigint
$$;
