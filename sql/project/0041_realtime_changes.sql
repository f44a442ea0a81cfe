-- Postgres Changes' visibility check (data-plane/realtime/changes/visibility.ts):
-- which of a batch of changed rows each group of subscribers (one role and one
-- set of claims) may select under RLS, and which of the table's columns that
-- role may select. One statement for a batch of changes and every group of a
-- node's subscribers, never one per subscriber per change: each group's role
-- and claims are set as the REST API sets them (set_config, local to the
-- statement's own transaction, which ends with it), then the rows are looked
-- up by primary key as that role. A group whose lookup fails (no privilege on
-- a key column, a policy that raises) sees none of them.
--
-- `keys`: a JSON array of objects, each the primary key of one changed row
-- (column name to its text value). `groups`: a JSON array of {role, claims}.
-- Answers one row per group, in order: its index (from 0), the 1-based
-- positions in `keys` of the rows it may see, and the columns it may select.
create or replace function realtime.visible_rows(entity regclass, keys jsonb, groups jsonb)
returns table (grp int, visible int[], selectable text[])
language plpgsql volatile security invoker as $$
declare
  g jsonb;
  n int := 0;
  key_match text;
begin
  select string_agg(format('t.%I = (k.v ->> %L)::%s', a.attname, a.attname, format_type(a.atttypid, a.atttypmod)), ' and ')
    into key_match
    from pg_index x
    cross join lateral unnest(x.indkey) as c(attnum)
    join pg_attribute a on a.attrelid = x.indrelid and a.attnum = c.attnum
   where x.indrelid = entity and x.indisprimary;
  for g in select value from jsonb_array_elements(groups) loop
    perform set_config('role', g ->> 'role', true);
    perform set_config('request.jwt.claims', coalesce(g -> 'claims', '{}')::text, true);
    perform set_config('request.jwt.claim.sub', coalesce(g -> 'claims' ->> 'sub', ''), true);
    perform set_config('request.jwt.claim.role', coalesce(g -> 'claims' ->> 'role', g ->> 'role'), true);
    perform set_config('request.jwt.claim.email', coalesce(g -> 'claims' ->> 'email', ''), true);
    grp := n;
    selectable := array(
      select a.attname::text from pg_attribute a
       where a.attrelid = entity and a.attnum > 0 and not a.attisdropped
         and has_column_privilege(entity, a.attnum, 'SELECT')
       order by a.attnum);
    if key_match is null then
      visible := '{}';
    else
      begin
        execute format(
          'select coalesce(array_agg(k.i::int order by k.i), ''{}'') from jsonb_array_elements($1) with ordinality as k(v, i) where exists (select 1 from %s t where %s)',
          entity, key_match)
          into visible using keys;
      exception when others then
        visible := '{}';
      end;
    end if;
    return next;
    n := n + 1;
  end loop;
end
$$;
revoke all on function realtime.visible_rows(regclass, jsonb, jsonb) from public;
grant execute on function realtime.visible_rows(regclass, jsonb, jsonb) to :"api_role";
