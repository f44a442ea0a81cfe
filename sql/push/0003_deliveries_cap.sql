-- The push deliveries quota under `cap` (issue 27 item 3), enforced at
-- enqueue: the fan-out adds a statement's deliveries to the UTC month's count
-- and refuses the whole statement (BPS02, nothing queued) when that takes the
-- count past the project's figure. The platform writes the figure with the
-- plan (workers/push/install.ts syncPushSettings); null: no cap (also under
-- `bill`, which never refuses), and then nothing is counted here.
alter table push.settings add column deliveries_cap bigint check (deliveries_cap >= 0);

create table push.monthly_deliveries (
  month date primary key,
  deliveries bigint not null check (deliveries >= 0)
);
grant select on push.monthly_deliveries to :"owner_role", service_role;

create or replace function push.fan_out() returns trigger
  language plpgsql security definer set search_path = '' as $$
declare
  v_plan text;
  v_cap bigint;
  v_first timestamptz;
  v_count bigint;
  v_total bigint;
  v_month date := date_trunc('month', now() at time zone 'utc')::date;
begin
  select s.plan, s.deliveries_cap into v_plan, v_cap from push.settings s;
  if coalesce(v_plan, 'free') = 'free' then
    -- A few seconds of grace for clocks that differ between client and server.
    select min(m.send_at) into v_first from new_messages m where m.send_at > now() + interval '5 seconds';
    if v_first is not null then
      raise exception using
        errcode = 'BPS01',
        message = format('Scheduled sending is not available on the Free plan: send_at (%s) is in the future.', v_first),
        hint = 'Leave send_at empty to send now, or move the project to the Plus, Pro or Business plan.';
    end if;
  end if;
  insert into push.queue (message_id, device_id, platform, run_at, expires_at, apns_id)
  select m.id, d.id, d.platform, greatest(m.send_at, now()),
         greatest(m.send_at, now()) + make_interval(secs => m.ttl), md5(m.id::text || d.id::text)::uuid
    from new_messages m join push.devices d on d.id = m.device_id
   where m.device_id is not null and d.active
  union all
  select m.id, d.id, d.platform, greatest(m.send_at, now()),
         greatest(m.send_at, now()) + make_interval(secs => m.ttl), md5(m.id::text || d.id::text)::uuid
    from new_messages m join push.devices d on d.user_id = m.user_id
   where m.device_id is null and d.active;
  get diagnostics v_count = row_count;
  if v_cap is not null and v_count > 0 then
    insert into push.monthly_deliveries as c (month, deliveries) values (v_month, v_count)
      on conflict (month) do update set deliveries = c.deliveries + excluded.deliveries
      returning c.deliveries into v_total;
    if v_total > v_cap then
      raise exception using
        errcode = 'BPS02',
        message = format('This project has reached its monthly quota of %s push deliveries: this send would make %s. It resets on %s (UTC), or when the operator raises it.',
                         v_cap, v_total, (v_month + interval '1 month')::date),
        detail = v_cap::text,
        hint = 'Nothing of this send was queued.';
    end if;
  end if;
  if v_count > 0 then
    perform pg_notify('baseplane_push', 'queue');
  end if;
  return null;
end $$;
-- Replacing the function replaced its settings too (0002's reasons hold).
alter function push.fan_out() set enable_hashjoin = off;
alter function push.fan_out() set enable_mergejoin = off;
alter function push.fan_out() set jit = off;
