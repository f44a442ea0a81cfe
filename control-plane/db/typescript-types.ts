// What the generated TypeScript types need beyond lib/pg-catalog's catalogue
// (control-plane/typescript-types.ts): which columns are identity columns
// and of which kind (GENERATED ALWAYS takes no value on insert), which are
// generated, and which views, and which of their columns, can be written.
// Read in the project's database as the server's admin role; catalogue
// reads only, no owner code runs.
import type { Queryable } from './queryable.ts'

export interface ColumnWriteFacts {
  relid: number
  num: number
  /** pg_attribute.attidentity: `a` always, `d` by default, '' none. */
  identity: string
  /** pg_attribute.attgenerated: `s` stored, '' none. */
  generated: string
  /** Whether an insert or update may set it (pg_column_is_updatable; always true of a plain table's columns). */
  updatable: boolean
}

export interface RelationWriteFacts {
  relid: number
  /** A view PostgreSQL can update and delete through (postgres-meta's `is_updatable`). */
  updatable: boolean
}

/** The write facts of the relations (tables, views) of `schemas`. */
export async function writeFacts(db: Queryable, schemas: readonly string[]): Promise<{ relations: RelationWriteFacts[]; columns: ColumnWriteFacts[] }> {
  const relations = await db.query<RelationWriteFacts>(
    `select c.oid::int8 as relid, (pg_catalog.pg_relation_is_updatable(c.oid, false) & 20) = 20 as updatable
       from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      where n.nspname = any($1::text[]) and c.relkind in ('r', 'p', 'v', 'm', 'f')`,
    [schemas],
  )
  const columns = await db.query<ColumnWriteFacts>(
    `select a.attrelid::int8 as relid, a.attnum as num, a.attidentity::text as identity, a.attgenerated::text as generated,
            pg_catalog.pg_column_is_updatable(a.attrelid, a.attnum, false) as updatable
       from pg_catalog.pg_attribute a
       join pg_catalog.pg_class c on c.oid = a.attrelid
       join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      where n.nspname = any($1::text[]) and c.relkind in ('r', 'p', 'v', 'm', 'f') and a.attnum > 0 and not a.attisdropped`,
    [schemas],
  )
  return {
    relations: relations.rows.map((row) => ({ ...row, relid: Number(row.relid) })),
    columns: columns.rows.map((row) => ({ ...row, relid: Number(row.relid) })),
  }
}
