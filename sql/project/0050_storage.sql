-- Storage's objects in every project database, in the shape Supabase Storage
-- gives them, so its documented policies (on storage.objects and
-- storage.buckets, with storage.foldername(), storage.filename(),
-- storage.extension(), auth.uid()) run unchanged. Every API call runs its SQL
-- as the caller's role (workers/storage), so the owner's policies decide:
-- insert to upload, select to read, list and sign, update for upsert and move,
-- delete to remove; service_role bypasses them.
--
-- The owner writes the policies, as the `postgres` role does on Supabase, so it
-- owns the two tables; the schema stays the platform's (the owner cannot
-- create in it). Which bytes exist is the platform's own bookkeeping, in
-- baseplane_storage below, which owner code cannot reach.
create schema if not exists storage;
grant usage on schema storage to anon, authenticated, service_role, :"api_role", :"owner_role", :"platform_role";

create table if not exists storage.buckets (
  id text not null primary key,
  name text not null,
  owner uuid,
  owner_id text,
  public boolean not null default false,
  avif_autodetection boolean not null default false,
  file_size_limit bigint,
  allowed_mime_types text[],
  type text not null default 'STANDARD',
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create unique index if not exists bname on storage.buckets (name);
alter table storage.buckets enable row level security;

create table if not exists storage.objects (
  id uuid not null default gen_random_uuid() primary key,
  bucket_id text references storage.buckets (id),
  name text,
  owner uuid,
  owner_id text,
  created_at timestamptz default now(),
  updated_at timestamptz default now(),
  last_accessed_at timestamptz default now(),
  metadata jsonb,
  path_tokens text[] generated always as (string_to_array(name, '/')) stored,
  -- The platform's key of the object's bytes (a uuid): a new one for every write, so an upload never overwrites bytes a reader streams.
  version text,
  user_metadata jsonb
);
create unique index if not exists bucketid_objname on storage.objects (bucket_id, name);
-- The listing's folder walk (prefix ranges in C order, whatever the database's collation).
create index if not exists objects_bucket_id_name_c on storage.objects (bucket_id, name collate "C");
alter table storage.objects enable row level security;

grant select, insert, update, delete on storage.buckets, storage.objects to anon, authenticated, service_role;

-- The path's folders, its last segment, and that segment's extension, as Supabase's helpers answer them.
create or replace function storage.foldername(name text) returns text[]
language plpgsql immutable as $$
declare
  _parts text[];
begin
  select string_to_array(name, '/') into _parts;
  return _parts[1 : array_length(_parts, 1) - 1];
end
$$;

create or replace function storage.filename(name text) returns text
language plpgsql immutable as $$
declare
  _parts text[];
begin
  select string_to_array(name, '/') into _parts;
  return _parts[array_length(_parts, 1)];
end
$$;

create or replace function storage.extension(name text) returns text
language plpgsql immutable as $$
declare
  _parts text[];
  _filename text;
begin
  select string_to_array(name, '/') into _parts;
  select _parts[array_length(_parts, 1)] into _filename;
  return reverse(split_part(reverse(_filename), '.', 1));
end
$$;

grant execute on function storage.foldername(text), storage.filename(text), storage.extension(text) to anon, authenticated, service_role, :"api_role", :"owner_role";

alter table storage.buckets owner to :"owner_role";
alter table storage.objects owner to :"owner_role";

-- The platform's record of every blob it wrote, read and written only on the
-- platform's login role (no owner code runs there): a blob is recorded before
-- its bytes are written, and is garbage once no object row names its version
-- and its upload's time has passed (workers/storage/collector.ts). Its sizes
-- are the project's storage size in the usage and the quotas, whatever the
-- owner does to storage.objects.
create schema if not exists baseplane_storage;
revoke all on schema baseplane_storage from public;
grant usage on schema baseplane_storage to :"platform_role";
create table if not exists baseplane_storage.blobs (
  version uuid not null primary key,
  bucket_id text not null,
  name text not null,
  size bigint not null default 0,
  -- Until then the blob may still be in the middle of its upload, so the collector leaves it alone.
  collect_after timestamptz not null,
  created_at timestamptz not null default now()
);
create index if not exists blobs_collect_after on baseplane_storage.blobs (collect_after);
grant select, insert, update, delete on baseplane_storage.blobs to :"platform_role";
-- The collector reads which versions rows still name (the platform's role is BYPASSRLS; only the version is read).
grant select (version) on storage.objects to :"platform_role";
