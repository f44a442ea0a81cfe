-- The plan and the deliveries cap in push.settings are written from several
-- places (the control plane when the operator changes them, each push worker
-- thread, the project's push sender when it claims the project or hears of a
-- change), each with the project's catalogue record as it last saw it. The
-- record's version says which write is newer, so an older one arriving late
-- never puts back a cap the operator has just lifted.
alter table push.settings add column catalogue_version bigint not null default 0;
