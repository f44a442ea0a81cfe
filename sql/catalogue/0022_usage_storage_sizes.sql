-- Storage's stored bytes per project and day (issue 39 item 8), sampled with
-- the database sizes (control-plane/usage-upkeep.ts) from each project's own
-- record of its blobs (baseplane_storage.blobs): what the quota watch compares
-- with storage_size_bytes for its notices. A cap is enforced on the live
-- figure (workers/storage), not on this sample.
create table baseplane.usage_storage_sizes (
  ref text not null,
  day date not null,
  last_bytes bigint not null,
  sampled_at timestamptz not null,
  primary key (ref, day)
);
