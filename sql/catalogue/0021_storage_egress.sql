-- Storage's egress under a cap (issue 39 item 8): past the month's figure of
-- the bytes its answers sent (bytes_out_storage in the usage), a capped
-- project's Storage downloads are refused until the month resets or the figure
-- is raised (control-plane/quotas.ts watchQuotas sets and clears it, as it
-- does read_only for the database size).
alter table baseplane.projects
  add column storage_egress_capped boolean not null default false;
