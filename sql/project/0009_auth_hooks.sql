-- Auth hooks (issue 25 item 4). The login role switches to
-- supabase_auth_admin (sql/cluster/0004) to run a project's hook functions.
grant supabase_auth_admin to :"api_role";

-- A mail handed to the send email hook is recorded like the others (the
-- hourly ceiling counts it), with no body.
alter table auth.mail_messages drop constraint mail_messages_delivery_check;
alter table auth.mail_messages add constraint mail_messages_delivery_check check (delivery in ('smtp', 'outbox', 'hook'));
