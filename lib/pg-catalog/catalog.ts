// Reads what an API over a project's database is made of (the GraphQL schema
// and the REST concern's routes), through the caller's own connection and
// under its current role: the schemas on the search path the role may use (or
// those a list names: REST's exposed schemas), their tables, views, columns,
// keys, foreign keys, enums and functions, with the role's privileges on each
// (and, for a list, the base-table keys its views show: view-keys.ts).
// One round trip; run only when the schema cache misses. In lib/ so that both
// concerns read the one catalogue.
import type pg from 'pg'
import { VIEW_KEY_CTES, VIEW_KEY_FIELDS, type CatalogViewForeignKey, type CatalogViewKey } from './view-keys.ts'

export type { CatalogViewForeignKey, CatalogViewKey }

/** Schemas never served, even when on the search path (platform and system schemas). */
export const HIDDEN_SCHEMAS = ['pg_catalog', 'information_schema', 'graphql', 'graphql_public', 'auth', 'extensions', 'push', 'baseplane', 'pg_toast']

export interface CatalogType {
  oid: number
  /** b base, e enum, d domain, c composite, p pseudo, r range, m multirange */
  typtype: string
  category: string
  /** Element type of an array type, or 0. */
  elem: number
  elemTyptype: string | null
}

export interface CatalogColumn extends CatalogType {
  num: number
  name: string
  typeName: string
  /** For char/varchar(n): n. */
  maxChars: number | null
  notNull: boolean
  hasDefault: boolean
  /** The default's expression as PostgreSQL prints it (`now()`, `'draft'::text`), or null. */
  defaultExpr: string | null
  serial: boolean
  generated: boolean
  comment: string | null
  canSelect: boolean
  canInsert: boolean
  canUpdate: boolean
}

export interface CatalogForeignKey {
  oid: number
  name: string
  comment: string | null
  columns: string[]
  refTable: number
  refColumns: string[]
}

export interface CatalogTable {
  oid: number
  schema: string
  schemaOid: number
  name: string
  /** r table, p partitioned table, v view, m materialized view, f foreign table */
  kind: string
  reltype: number
  comment: string | null
  rls: boolean
  canSelect: boolean
  canInsert: boolean
  canUpdate: boolean
  canDelete: boolean
  columns: CatalogColumn[]
  primaryKey: string[] | null
  /** Column sets of unique, non-partial, plain-column indexes (primary key included). */
  uniques: string[][]
  /**
   * Primary key and unique constraints that can arbitrate `on conflict on
   * constraint` (not deferrable), by name: upsert's conflict targets. Unique
   * indexes that are no constraint (partial, on expressions) cannot be named there.
   */
  uniqueConstraints: { name: string; columns: string[] }[]
  foreignKeys: CatalogForeignKey[]
}

export interface CatalogFunctionArg extends CatalogType {
  name: string | null
  mode: string
  typeName: string
}

export interface CatalogFunction {
  oid: number
  schema: string
  schemaOid: number
  name: string
  comment: string | null
  volatility: string
  returnsSet: boolean
  rows: number
  returnType: CatalogType & { typeName: string; relid: number }
  args: CatalogFunctionArg[]
  nDefaults: number
  defaults: string | null
  canExecute: boolean
  variadic: boolean
}

export interface CatalogEnum {
  oid: number
  schemaOid: number
  schema: string
  name: string
  comment: string | null
  labels: string[]
}

export interface CatalogDomain {
  oid: number
  /** The type the domain is over (itself a domain for a domain over a domain), typmod included in typeName. */
  base: CatalogType & { typeName: string; maxChars: number | null }
}

export interface CatalogCompositeAttribute extends CatalogType {
  name: string
  typeName: string
  maxChars: number | null
  comment: string | null
}

export interface CatalogComposite {
  oid: number
  schemaOid: number
  schema: string
  name: string
  comment: string | null
  attributes: CatalogCompositeAttribute[]
}

export interface CatalogGeoType {
  oid: number
  name: 'geometry' | 'geography'
  /** The extension's schema: its functions are called qualified, whatever the search path. */
  schema: string
}

export interface CatalogSchema {
  oid: number
  name: string
  comment: string | null
  /**
   * Whether the role has USAGE on it. Always true for the schemas of the
   * search path (the others are not read); a listed schema is read without it,
   * so a request on it fails as PostgreSQL refuses it (42501), as PostgREST's.
   */
  usable: boolean
}

export interface Catalog {
  schemas: CatalogSchema[]
  tables: CatalogTable[]
  enums: CatalogEnum[]
  functions: CatalogFunction[]
  /** Every domain of the database (a column may use one from any schema): its base type, one step down. */
  domains: CatalogDomain[]
  /** The stand-alone composite types (`create type ... as (...)`) of the served schemas. */
  composites: CatalogComposite[]
  /** PostGIS's `geometry` and `geography` types, where the extension is installed (else empty). */
  postgis?: CatalogGeoType[]
  /** The base-table keys the served views show (view-keys.ts): read for listed schemas only (REST's embedding). */
  viewKeys?: CatalogViewKey[]
  /** The foreign keys `viewKeys` names (kinds f and r), whichever schema their tables are in. */
  viewForeignKeys?: CatalogViewForeignKey[]
}

const typeFields = (alias: string, elemAlias: string) =>
  `'oid', ${alias}.oid::int8, 'typtype', ${alias}.typtype, 'category', ${alias}.typcategory, 'elem', ${alias}.typelem::int8, 'elemTyptype', ${elemAlias}.typtype`

/**
 * The served schemas: those on the role's search path it may use (GraphQL's,
 * `listed` false), or those of the list in `$1`, in its order (REST's exposed
 * schemas: lib/pg-catalog/exposed-schemas.ts). The platform's and system
 * schemas are never served either way.
 */
const servedSql = (listed: boolean) => `
  select n.oid, n.nspname, pg_catalog.obj_description(n.oid, 'pg_namespace') as comment, s.pos,
    pg_catalog.has_schema_privilege(n.oid, 'USAGE') as usable
  from unnest(${listed ? '$1::text[]' : 'pg_catalog.current_schemas(false)'}) with ordinality s(name, pos)
  join pg_catalog.pg_namespace n on n.nspname = s.name
  where n.nspname <> all (array[${HIDDEN_SCHEMAS.map((s) => `'${s}'`).join(', ')}])
    and n.nspname not like ${listed ? "'pg\\_%'" : "'pg\\_temp%' and pg_catalog.has_schema_privilege(n.oid, 'USAGE')"}`

const catalogSql = (listed: boolean) => `
with ${listed ? 'recursive ' : ''}served as (${servedSql(listed)}
)${listed ? `,${VIEW_KEY_CTES}` : ''}
select pg_catalog.json_build_object(${listed ? `${VIEW_KEY_FIELDS},` : ''}
  'schemas', (select coalesce(json_agg(json_build_object('oid', s.oid::int8, 'name', s.nspname, 'comment', s.comment, 'usable', s.usable) order by s.pos), '[]') from served s),
  'tables', (
    select coalesce(json_agg(json_build_object(
      'oid', c.oid::int8, 'schema', s.nspname, 'schemaOid', s.oid::int8, 'name', c.relname, 'kind', c.relkind, 'reltype', c.reltype::int8,
      'comment', pg_catalog.obj_description(c.oid, 'pg_class'), 'rls', c.relrowsecurity,
      'canSelect', pg_catalog.has_table_privilege(c.oid, 'SELECT'),
      'canInsert', pg_catalog.has_table_privilege(c.oid, 'INSERT'),
      'canUpdate', pg_catalog.has_table_privilege(c.oid, 'UPDATE'),
      'canDelete', pg_catalog.has_table_privilege(c.oid, 'DELETE'),
      'columns', (
        select coalesce(json_agg(json_build_object(
          'num', a.attnum, 'name', a.attname, ${typeFields('t', 'et')},
          'typeName', pg_catalog.format_type(a.atttypid, a.atttypmod),
          'maxChars', case when a.atttypid in (1042, 1043) and a.atttypmod > 4 then a.atttypmod - 4 end,
          'notNull', a.attnotnull, 'hasDefault', a.atthasdef, 'defaultExpr', pg_catalog.pg_get_expr(d.adbin, d.adrelid),
          'serial', a.attidentity <> '' or coalesce(pg_catalog.pg_get_expr(d.adbin, d.adrelid) like 'nextval(%', false),
          'generated', a.attgenerated <> '',
          'comment', pg_catalog.col_description(c.oid, a.attnum),
          'canSelect', pg_catalog.has_column_privilege(c.oid, a.attnum, 'SELECT'),
          'canInsert', pg_catalog.has_column_privilege(c.oid, a.attnum, 'INSERT'),
          'canUpdate', pg_catalog.has_column_privilege(c.oid, a.attnum, 'UPDATE')
        ) order by a.attnum), '[]')
        from pg_catalog.pg_attribute a
        join pg_catalog.pg_type t on t.oid = a.atttypid
        left join pg_catalog.pg_type et on et.oid = t.typelem and t.typcategory = 'A'
        left join pg_catalog.pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
        where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
      ),
      'primaryKey', (
        select array_agg(a.attname order by k.ord)
        from pg_catalog.pg_index i
        cross join unnest(i.indkey) with ordinality k(attnum, ord)
        join pg_catalog.pg_attribute a on a.attrelid = i.indrelid and a.attnum = k.attnum
        where i.indrelid = c.oid and i.indisprimary
      ),
      'uniques', (
        select coalesce(json_agg(cols), '[]') from (
          select array_agg(a.attname order by k.ord) as cols
          from pg_catalog.pg_index i
          cross join unnest(i.indkey) with ordinality k(attnum, ord)
          join pg_catalog.pg_attribute a on a.attrelid = i.indrelid and a.attnum = k.attnum
          where i.indrelid = c.oid and i.indisunique and i.indpred is null and i.indexprs is null
          group by i.indexrelid
        ) u
      ),
      'uniqueConstraints', (
        select coalesce(json_agg(json_build_object(
          'name', u.conname,
          'columns', (select array_agg(a.attname order by k.ord) from unnest(u.conkey) with ordinality k(attnum, ord)
                      join pg_catalog.pg_attribute a on a.attrelid = u.conrelid and a.attnum = k.attnum)
        ) order by u.conname), '[]')
        from pg_catalog.pg_constraint u
        where u.conrelid = c.oid and u.contype in ('p', 'u') and not u.condeferrable
      ),
      'foreignKeys', (
        select coalesce(json_agg(json_build_object(
          'oid', f.oid::int8, 'name', f.conname, 'comment', pg_catalog.obj_description(f.oid, 'pg_constraint'),
          'refTable', f.confrelid::int8,
          'columns', (select array_agg(a.attname order by k.ord) from unnest(f.conkey) with ordinality k(attnum, ord)
                      join pg_catalog.pg_attribute a on a.attrelid = f.conrelid and a.attnum = k.attnum),
          'refColumns', (select array_agg(a.attname order by k.ord) from unnest(f.confkey) with ordinality k(attnum, ord)
                         join pg_catalog.pg_attribute a on a.attrelid = f.confrelid and a.attnum = k.attnum)
        ) order by f.conname), '[]')
        from pg_catalog.pg_constraint f
        where f.conrelid = c.oid and f.contype = 'f'
      )
    ) order by s.pos, c.relname), '[]')
    from pg_catalog.pg_class c
    join served s on s.oid = c.relnamespace
    where c.relkind in ('r', 'p', 'v', 'm', 'f') and not c.relispartition
  ),
  'enums', (
    select coalesce(json_agg(json_build_object(
      'oid', t.oid::int8, 'schemaOid', s.oid::int8, 'schema', s.nspname, 'name', t.typname,
      'comment', pg_catalog.obj_description(t.oid, 'pg_type'),
      'labels', (select array_agg(e.enumlabel order by e.enumsortorder) from pg_catalog.pg_enum e where e.enumtypid = t.oid)
    ) order by s.pos, t.typname), '[]')
    from pg_catalog.pg_type t
    join served s on s.oid = t.typnamespace
    where t.typtype = 'e' and pg_catalog.has_type_privilege(t.oid, 'USAGE')
  ),
  'domains', (
    select coalesce(json_agg(json_build_object(
      'oid', d.oid::int8,
      'base', json_build_object(${typeFields('t', 'et')}, 'typeName', pg_catalog.format_type(d.typbasetype, d.typtypmod),
                                'maxChars', case when d.typbasetype in (1042, 1043) and d.typtypmod > 4 then d.typtypmod - 4 end)
    ) order by d.oid), '[]')
    from pg_catalog.pg_type d
    join pg_catalog.pg_type t on t.oid = d.typbasetype
    left join pg_catalog.pg_type et on et.oid = t.typelem and t.typcategory = 'A'
    where d.typtype = 'd'
  ),
  'composites', (
    select coalesce(json_agg(json_build_object(
      'oid', t.oid::int8, 'schemaOid', s.oid::int8, 'schema', s.nspname, 'name', t.typname,
      'comment', pg_catalog.obj_description(t.oid, 'pg_type'),
      'attributes', (
        select coalesce(json_agg(json_build_object(
          'name', a.attname, ${typeFields('ty', 'ety')},
          'typeName', pg_catalog.format_type(a.atttypid, a.atttypmod),
          'maxChars', case when a.atttypid in (1042, 1043) and a.atttypmod > 4 then a.atttypmod - 4 end,
          'comment', pg_catalog.col_description(t.typrelid, a.attnum)
        ) order by a.attnum), '[]')
        from pg_catalog.pg_attribute a
        join pg_catalog.pg_type ty on ty.oid = a.atttypid
        left join pg_catalog.pg_type ety on ety.oid = ty.typelem and ty.typcategory = 'A'
        where a.attrelid = t.typrelid and a.attnum > 0 and not a.attisdropped
      )
    ) order by s.pos, t.typname), '[]')
    from pg_catalog.pg_type t
    join served s on s.oid = t.typnamespace
    join pg_catalog.pg_class c on c.oid = t.typrelid and c.relkind = 'c'
    where t.typtype = 'c' and pg_catalog.has_type_privilege(t.oid, 'USAGE')
  ),
  'postgis', (
    select coalesce(json_agg(json_build_object('oid', t.oid::int8, 'name', t.typname, 'schema', n.nspname)), '[]')
    from pg_catalog.pg_extension x
    join pg_catalog.pg_namespace n on n.oid = x.extnamespace
    join pg_catalog.pg_type t on t.typnamespace = x.extnamespace and t.typname in ('geometry', 'geography')
    where x.extname = 'postgis'
  ),
  'functions', (
    select coalesce(json_agg(json_build_object(
      'oid', p.oid::int8, 'schema', s.nspname, 'schemaOid', s.oid::int8, 'name', p.proname,
      'comment', pg_catalog.obj_description(p.oid, 'pg_proc'),
      'volatility', p.provolatile, 'returnsSet', p.proretset, 'rows', p.prorows,
      'returnType', (select json_build_object(${typeFields('t', 'et')}, 'typeName', pg_catalog.format_type(t.oid, null), 'relid', t.typrelid::int8)
                     from pg_catalog.pg_type t left join pg_catalog.pg_type et on et.oid = t.typelem and t.typcategory = 'A'
                     where t.oid = p.prorettype),
      'args', (
        select coalesce(json_agg(json_build_object(
          'name', nullif(coalesce(p.proargnames[k.ord], ''), ''),
          'mode', coalesce(p.proargmodes[k.ord]::text, 'i'),
          ${typeFields('t', 'et')}, 'typeName', pg_catalog.format_type(t.oid, null)
        ) order by k.ord), '[]')
        from unnest(coalesce(p.proallargtypes, p.proargtypes::oid[])) with ordinality k(typ, ord)
        join pg_catalog.pg_type t on t.oid = k.typ
        left join pg_catalog.pg_type et on et.oid = t.typelem and t.typcategory = 'A'
      ),
      'nDefaults', p.pronargdefaults,
      'defaults', pg_catalog.pg_get_expr(p.proargdefaults, 0),
      'canExecute', pg_catalog.has_function_privilege(p.oid, 'EXECUTE'),
      'variadic', p.provariadic <> 0
    ) order by s.pos, p.proname, p.oid), '[]')
    from pg_catalog.pg_proc p
    join served s on s.oid = p.pronamespace
    where p.prokind = 'f'
      and not exists (select from pg_catalog.pg_depend dep where dep.objid = p.oid and dep.classid = 'pg_catalog.pg_proc'::regclass and dep.deptype = 'e')
  )
) as catalog`

/** The catalogue query over the role's search path (GraphQL's). */
export const CATALOG_SQL = catalogSql(false)
const LISTED_CATALOG_SQL = catalogSql(true)

/**
 * The catalogue as the connection's current role sees it: of the schemas on
 * its search path, or of `schemas` when given (in that order; a name that is
 * no schema yet is left out).
 */
export async function readCatalog(client: pg.ClientBase, schemas?: readonly string[]): Promise<Catalog> {
  const { rows } =
    schemas === undefined
      ? await client.query<{ catalog: Catalog }>(CATALOG_SQL)
      : await client.query<{ catalog: Catalog }>(LISTED_CATALOG_SQL, [schemas])
  return rows[0]!.catalog
}
