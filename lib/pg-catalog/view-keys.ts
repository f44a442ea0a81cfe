// Which base-table keys a view shows, as PostgREST 13's schema cache finds
// them (shared/reference/postgrest.md section 7): a view column that is a base
// table's column as it is (PostgreSQL's `resorigtbl`/`resorigcol` of the
// view's top-level target list, followed through views it reads) carries that
// column, and a view showing every column of a primary key or of either side
// of a foreign key carries that key. Part of the catalogue query for listed
// schemas (REST's, catalog.ts); GraphQL's does not read it.
//
// The target list is in `pg_rewrite.ev_action`, a node tree as text with
// nested queries (subqueries, CTEs, sublinks) inside it. Rather than parse
// it, each step deletes every `{...}` node holding at most one level of
// nodes, so nested queries vanish whole; the top-level query's target entries
// are first rewritten to `<TARGETENTRY ...>` (their last field, `resjunk`,
// marks the end) so that they survive, and its own braces are cut off. What
// is left when no brace remains is the top-level target list. Plain
// `replace` and one brace-only pattern read 400 views of 14 KB trees in about
// 0.3 s, on a schema cache miss only (a pattern with captures took seconds).

/** A key of a base table that a view shows whole. */
export interface CatalogViewKey {
  view: number
  /** `p` the table's primary key, `f` a foreign key of the table, `r` a foreign key referencing the table. */
  kind: 'p' | 'f' | 'r'
  /** The constraint's oid (a foreign key's: CatalogViewForeignKey). */
  constraint: number
  /** In the key's order: the table's column and the view's columns showing it (one or more). */
  columns: Array<[string, string[]]>
}

/** A foreign key some view shows a side of, whichever schema its tables are in. */
export interface CatalogViewForeignKey {
  oid: number
  name: string
  table: number
  refTable: number
  columns: string[]
  refColumns: string[]
  /** The key's columns are the referencing table's primary key or a unique key (non-partial, plain columns). */
  oneToOne: boolean
}

/** Column names of a constraint's attribute numbers, in the constraint's order. */
const names = (rel: string, keys: string) =>
  `(select pg_catalog.array_agg(a.attname::text order by k.ord) from unnest(${keys}) with ordinality k(attnum, ord)
     join pg_catalog.pg_attribute a on a.attrelid = ${rel} and a.attnum = k.attnum)`

/**
 * CTEs (after `served`, in a `with recursive`): the served schemas' views and
 * materialized views with their columns' origins, and the keys they show.
 * Views in `public` are read too, as the views in between (PostgREST's
 * `db-extra-search-path`, which is `public` here).
 */
export const VIEW_KEY_CTES = `
pgrst_view_trees as (
  select c.oid as view,
    pg_catalog.replace(pg_catalog.replace(pg_catalog.replace(pg_catalog.substr(e.tree, 3, pg_catalog.length(e.tree) - 4),
      '{TARGETENTRY ', '<TARGETENTRY '), ':resjunk false}', ':resjunk false>'), ':resjunk true}', ':resjunk true>') as tree
  from pg_catalog.pg_class c
  join pg_catalog.pg_namespace n on n.oid = c.relnamespace
  join pg_catalog.pg_rewrite r on r.ev_class = c.oid and r.rulename = '_RETURN'
  cross join lateral (select r.ev_action::text as raw offset 0) a
  -- Escaped characters (a name's brace or space) are dropped: only the structure is read.
  cross join lateral (select case when pg_catalog.strpos(a.raw, pg_catalog.chr(92)) > 0
                                  then pg_catalog.regexp_replace(a.raw, '\\\\.', '', 'g') else a.raw end as tree) e
  where c.relkind in ('v', 'm') and (n.oid in (select oid from served) or n.nspname = 'public')
),
pgrst_view_collapsed(view, tree, done, depth) as (
  select view, tree, false, 0 from pgrst_view_trees
  union all
  select p.view, t.tree, pg_catalog.strpos(t.tree, '{') = 0, p.depth + 1
  from pgrst_view_collapsed p
  cross join lateral (select pg_catalog.regexp_replace(p.tree, '\\{(?:[^{}]|\\{[^{}]*\\})*\\}', '', 'g') as tree offset 0) t
  where not p.done and p.depth < 64
),
pgrst_view_columns as (
  select v.view, pg_catalog.split_part(pg_catalog.split_part(s.te, ':resno ', 2), ' ', 1)::int2 as col,
    pg_catalog.split_part(pg_catalog.split_part(s.te, ':resorigtbl ', 2), ' ', 1)::oid as tbl,
    pg_catalog.split_part(pg_catalog.split_part(s.te, ':resorigcol ', 2), ' ', 1)::int2 as tblcol
  from pgrst_view_collapsed v
  cross join lateral unnest(pg_catalog.string_to_array(v.tree, '<TARGETENTRY ')) with ordinality s(te, n)
  where v.done and s.n > 1 and pg_catalog.strpos(s.te, ':resjunk false>') > 0
),
pgrst_view_origins(view, col, tbl, tblcol, depth) as (
  select vc.view, vc.col, vc.tbl, vc.tblcol, 0
  from pgrst_view_columns vc
  join pg_catalog.pg_class c on c.oid = vc.view
  where vc.tbl <> 0 and c.relnamespace in (select oid from served)
  union all
  select o.view, o.col, vc.tbl, vc.tblcol, o.depth + 1
  from pgrst_view_origins o
  join pgrst_view_columns vc on vc.view = o.tbl and vc.col = o.tblcol
  where vc.tbl <> 0 and o.depth < 16
),
pgrst_view_key_columns as (
  select o.view, k.oid as con, k.kind, k.ord, k.n, ta.attname::text as name,
    pg_catalog.array_agg(va.attname::text order by va.attnum) as view_columns
  from pgrst_view_origins o
  join (
    select f.oid, f.contype::text as kind, f.conrelid as tbl, u.col, u.ord, pg_catalog.array_length(f.conkey, 1) as n
    from pg_catalog.pg_constraint f cross join lateral unnest(f.conkey) with ordinality u(col, ord)
    where f.contype in ('p', 'f') and f.conparentid = 0 and f.conrelid in (select tbl from pgrst_view_origins)
    union all
    select f.oid, 'r', f.confrelid, u.col, u.ord, pg_catalog.array_length(f.confkey, 1)
    from pg_catalog.pg_constraint f cross join lateral unnest(f.confkey) with ordinality u(col, ord)
    where f.contype = 'f' and f.conparentid = 0 and f.confrelid in (select tbl from pgrst_view_origins)
  ) k on k.tbl = o.tbl and k.col = o.tblcol
  join pg_catalog.pg_attribute va on va.attrelid = o.view and va.attnum = o.col
  join pg_catalog.pg_attribute ta on ta.attrelid = k.tbl and ta.attnum = k.col
  group by o.view, k.oid, k.kind, k.ord, k.n, ta.attname
),
pgrst_view_keys as (
  select view, con, kind, pg_catalog.json_agg(pg_catalog.json_build_array(name, view_columns) order by ord) as columns
  from pgrst_view_key_columns
  group by view, con, kind, n
  having pg_catalog.count(*) = n
)`

/** The catalogue's `viewKeys` and `viewForeignKeys` entries (json_build_object arguments). */
export const VIEW_KEY_FIELDS = `
  'viewKeys', (
    select coalesce(json_agg(json_build_object('view', k.view::int8, 'kind', k.kind, 'constraint', k.con::int8, 'columns', k.columns)
                             order by k.view, k.kind, k.con), '[]')
    from pgrst_view_keys k
  ),
  'viewForeignKeys', (
    select coalesce(json_agg(json_build_object(
      'oid', f.oid::int8, 'name', f.conname, 'table', f.conrelid::int8, 'refTable', f.confrelid::int8,
      'columns', ${names('f.conrelid', 'f.conkey')}, 'refColumns', ${names('f.confrelid', 'f.confkey')},
      'oneToOne', exists (
        select from pg_catalog.pg_index i
        where i.indrelid = f.conrelid and i.indisunique and i.indpred is null and i.indexprs is null
          and (select pg_catalog.array_agg(x order by x) from unnest(i.indkey::int2[]) x) = (select pg_catalog.array_agg(x order by x) from unnest(f.conkey) x)
      )
    ) order by f.conname, f.oid), '[]')
    from pg_catalog.pg_constraint f
    where f.contype = 'f' and f.oid in (select con from pgrst_view_keys where kind <> 'p')
  )`
