-- Postgres Changes' visibility check, second form (0041 had the first). Two
-- changes, both from measuring 500 changes a second read by 100 users:
--
-- 1. Each group of subscribers is given the rows routed to it (those its
--    channels' bindings and filters match), and only those are looked up as
--    that group: a team's member no longer pays for the other teams' rows.
--    The columns a role may select are worked out once per role, not per group.
--    The keys are typed before the lookup, so it reaches the primary key's
--    index under a policy too (0041's read the whole table each time then).
-- 2. The reader decodes a transaction's commit a moment before the transaction
--    is visible to other sessions (PostgreSQL writes the commit record, and
--    the walsender may send it, before the committing backend leaves the set
--    of running transactions). Looked up in that moment, a committed row was
--    found by nobody and its change was dropped for everyone. The check now
--    first waits, a millisecond at a time and at most 100 ms, until the
--    batch's transactions (`xids`, as pgoutput names them: 32 bits) are
--    visible to a fresh snapshot.
--
-- `keys`: a JSON array of objects, each holding the primary key of one changed
-- row (column name to its text value; other columns are ignored). `groups`: a
-- JSON array of {role, claims, rows}, `rows` the 1-based positions in `keys`
-- of the rows routed to that group. Answers one row per group, in order: its
-- index (from 0), the positions of its rows it may see, and the columns of the
-- table its role may select. A group whose lookup fails (no privilege on a key
-- column, a policy that raises) sees none of them.
drop function if exists realtime.visible_rows(regclass, jsonb, jsonb);

-- The 64-bit form of a recent 32-bit transaction id: the epoch is the current
-- snapshot's, less one when the id is from before the counter last wrapped.
create or replace function realtime.full_xid(x xid) returns xid8
language sql volatile as $$
  select (((xmax >> 32) - case when x::text::bigint > (xmax & 4294967295) then 1 else 0 end) << 32 | x::text::bigint)::text::xid8
    from (select pg_snapshot_xmax(pg_current_snapshot())::text::bigint as xmax) s
$$;

create or replace function realtime.visible_rows(entity regclass, keys jsonb, groups jsonb, xids xid[])
returns table (grp int, visible int[], selectable text[])
language plpgsql volatile security invoker as $$
declare
  g jsonb;
  n int := 0;
  key_values text;
  key_match text;
  lookup text;
  deadline timestamptz := clock_timestamp() + interval '100 milliseconds';
  columns_of jsonb := '{}';
  role_name text;
begin
  -- Each evaluation takes a new snapshot (a volatile function, read committed).
  while clock_timestamp() < deadline and exists (
    select 1 from unnest(xids) as t(x) where not pg_visible_in_snapshot(realtime.full_xid(t.x), pg_current_snapshot())
  ) loop
    perform pg_sleep(0.001);
  end loop;
  -- The keys are made typed values first (a materialized step), then compared with the table's columns: a
  -- comparison that holds a JSON operator is not leakproof, so under a policy (a security barrier) it could not
  -- reach the primary key's index and every lookup would read the whole table.
  select string_agg(format('(j.v ->> %L)::%s as k%s', a.attname, format_type(a.atttypid, a.atttypmod), c.n), ', ' order by c.n),
         string_agg(format('t.%I = k.k%s', a.attname, c.n), ' and ' order by c.n)
    into key_values, key_match
    from pg_index x
    cross join lateral unnest(x.indkey) with ordinality as c(attnum, n)
    join pg_attribute a on a.attrelid = x.indrelid and a.attnum = c.attnum
   where x.indrelid = entity and x.indisprimary;
  if key_match is not null then
    lookup := format(
      'with k as materialized (select r.i, %s from unnest($2) as r(i) cross join lateral (select $1 -> (r.i - 1) as v) j) '
      'select coalesce(array_agg(k.i order by k.i), ''{}'') from k where exists (select 1 from %s t where %s)',
      key_values, entity, key_match);
  end if;
  for g in select value from jsonb_array_elements(groups) loop
    role_name := g ->> 'role';
    perform set_config('role', role_name, true);
    perform set_config('request.jwt.claims', coalesce(g -> 'claims', '{}')::text, true);
    perform set_config('request.jwt.claim.sub', coalesce(g -> 'claims' ->> 'sub', ''), true);
    perform set_config('request.jwt.claim.role', coalesce(g -> 'claims' ->> 'role', role_name), true);
    perform set_config('request.jwt.claim.email', coalesce(g -> 'claims' ->> 'email', ''), true);
    grp := n;
    if not columns_of ? role_name then
      columns_of := columns_of || jsonb_build_object(role_name, to_jsonb(array(
        select a.attname::text from pg_attribute a
         where a.attrelid = entity and a.attnum > 0 and not a.attisdropped
           and has_column_privilege(entity, a.attnum, 'SELECT')
         order by a.attnum)));
    end if;
    selectable := array(select jsonb_array_elements_text(columns_of -> role_name));
    if lookup is null or jsonb_array_length(coalesce(g -> 'rows', '[]')) = 0 then
      visible := '{}';
    else
      begin
        execute lookup into visible using keys, array(select jsonb_array_elements_text(g -> 'rows')::int);
      exception when others then
        visible := '{}';
      end;
    end if;
    return next;
    n := n + 1;
  end loop;
end
$$;
revoke all on function realtime.visible_rows(regclass, jsonb, jsonb, xid[]) from public;
grant execute on function realtime.visible_rows(regclass, jsonb, jsonb, xid[]) to :"api_role";
revoke all on function realtime.full_xid(xid) from public;
grant execute on function realtime.full_xid(xid) to :"api_role";
