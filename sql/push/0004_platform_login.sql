-- Push's own statements move from the API's login role (:"api_role", where
-- owner code runs: REST, GraphQL, a pre-request function) to the platform's
-- (:"platform_role", lib/db/platform-logins.ts), on which no owner code runs
-- (issue 36 item 1). The API's role keeps nothing here of its own: it reaches
-- push as the API roles do. The platform's role is BYPASSRLS (made so with the
-- project's roles), so no policy, and no owner code in one, applies to its
-- reads of the owner's tables (messages, devices); its one write to them, the
-- deactivation of devices, runs as baseplane_push_devices (sql/cluster/0005).
drop policy if exists devices_actor on push.devices;
drop policy if exists messages_actor on push.messages;
drop policy if exists queue_actor on push.queue;
drop policy if exists delivery_log_actor on push.delivery_log;
revoke all on push.settings, push.vapid_keys, push.credentials, push.devices, push.messages, push.queue, push.delivery_log from :"api_role";
revoke all on function push.vapid_public_key() from :"api_role";
revoke usage on schema push from :"api_role";

grant usage on schema push to :"platform_role";
grant select, update on push.settings to :"platform_role";
grant select, insert, update on push.vapid_keys to :"platform_role";
grant select, insert, update, delete on push.credentials to :"platform_role";
grant select on push.devices, push.messages to :"platform_role";
grant select, update, delete on push.queue to :"platform_role";
grant select, insert on push.delivery_log to :"platform_role";
grant execute on function push.vapid_public_key() to :"platform_role";

-- Devices a provider reported gone (workers/push/queue/deactivate-devices.ts).
-- With APNs' timestamp, only a device not registered again since then.
grant usage on schema push to baseplane_push_devices;
grant select, update on push.devices to baseplane_push_devices;
create function push.deactivate_devices(ids uuid[], reasons text[], ats timestamptz[]) returns void
  language sql volatile security definer set search_path = '' as $$
  update push.devices d
     set active = false, deactivated_at = now(), deactivated_reason = g.reason
    from unnest(ids, reasons, ats) as g(id, reason, at)
   where d.id = g.id and d.active and (g.at is null or d.updated_at <= g.at)
$$;
alter function push.deactivate_devices(uuid[], text[], timestamptz[]) owner to baseplane_push_devices;
revoke all on function push.deactivate_devices(uuid[], text[], timestamptz[]) from public;
grant execute on function push.deactivate_devices(uuid[], text[], timestamptz[]) to :"platform_role";
