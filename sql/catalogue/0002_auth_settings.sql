-- Auth settings of a project (site URL, redirect allow list, email templates,
-- rate limits, provider configuration). Owned by workers/auth's settings
-- module; the data plane passes them to the auth worker with each request.
alter table baseplane.projects add column auth_settings jsonb not null default '{}'::jsonb;
