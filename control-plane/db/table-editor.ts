// The table editor's reads of a project's catalogue (schemas, tables, their
// columns, constraints, indexes, row-level security and policies) and the
// rows' statements, built with every identifier quoted (lib/pg-catalog/quote.ts)
// and every value a parameter. Run on a connection as the project's owner.
import type { Queryable } from './queryable.ts'
import { ident, qualified, quoteText } from '../../lib/pg-catalog/quote.ts'

/** The editor's transactions: bounded, so a table locked by someone else answers instead of holding the page. */
export const BEGIN_READ = "begin read only; set local statement_timeout = '30s'; set local lock_timeout = '5s'"
export const BEGIN_WRITE = "begin; set local statement_timeout = '30s'; set local lock_timeout = '5s'"

export interface SchemaRow {
  name: string
  owner: string
}

/** Every schema but PostgreSQL's own; the operation decides which it shows. */
export async function schemas(db: Queryable): Promise<SchemaRow[]> {
  const { rows } = await db.query<SchemaRow>(
    `select n.nspname as name, pg_get_userbyid(n.nspowner) as owner
       from pg_namespace n
      where n.nspname !~ '^pg_' and n.nspname <> 'information_schema'
      order by n.nspname`,
  )
  return rows
}

export interface TableRow {
  oid: number
  schema: string
  name: string
  rls: boolean
  forced: boolean
  estimate: number
}

const TABLE_FIELDS = `c.oid::int8::float8 as oid, n.nspname as schema, c.relname as name, c.relrowsecurity as rls,
  c.relforcerowsecurity as forced, greatest(c.reltuples, 0)::float8 as estimate`

/** The plain and partitioned tables of `schemas` (partitions themselves left out, as their parent shows them). */
export async function tables(db: Queryable, schemaNames: readonly string[]): Promise<TableRow[]> {
  const { rows } = await db.query<TableRow>(
    `select ${TABLE_FIELDS}
       from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = any($1) and c.relkind in ('r', 'p') and not c.relispartition
      order by n.nspname, c.relname`,
    [schemaNames],
  )
  return rows
}

export async function table(db: Queryable, schema: string, name: string): Promise<TableRow | undefined> {
  const { rows } = await db.query<TableRow>(
    `select ${TABLE_FIELDS}
       from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = $1 and c.relname = $2 and c.relkind in ('r', 'p')`,
    [schema, name],
  )
  return rows[0]
}

export interface ColumnRow {
  name: string
  type: string
  /** The type's own name and schema (an enum's), without its modifier. */
  typeName: string
  typeSchema: string
  nullable: boolean
  default: string | null
  /** '' none, 'a' always, 'd' by default. */
  identity: string
  /** '' none, 's' stored. */
  generated: string
}

export async function columns(db: Queryable, oid: number): Promise<ColumnRow[]> {
  const { rows } = await db.query<ColumnRow>(
    `select a.attname as name, format_type(a.atttypid, a.atttypmod) as type, t.typname as "typeName", tn.nspname as "typeSchema",
            not a.attnotnull as nullable, pg_get_expr(d.adbin, d.adrelid) as default, a.attidentity::text as identity,
            a.attgenerated::text as generated
       from pg_attribute a
       join pg_type t on t.oid = a.atttypid
       join pg_namespace tn on tn.oid = t.typnamespace
       left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
      where a.attrelid = $1::oid and a.attnum > 0 and not a.attisdropped
      order by a.attnum`,
    [oid],
  )
  return rows
}

export interface ConstraintRow {
  name: string
  /** p primary key, u unique, f foreign key, c check. */
  kind: string
  columns: string[]
  refSchema: string | null
  refTable: string | null
  refColumns: string[] | null
  onDelete: string | null
  onUpdate: string | null
  definition: string
}

const KEY_COLUMNS = (keys: string, relation: string) =>
  `array(select a.attname::text from unnest(${keys}) with ordinality k(num, i) join pg_attribute a on a.attrelid = ${relation} and a.attnum = k.num order by k.i)`

export async function constraints(db: Queryable, oid: number): Promise<ConstraintRow[]> {
  const { rows } = await db.query<ConstraintRow>(
    `select con.conname as name, con.contype::text as kind, ${KEY_COLUMNS('con.conkey', 'con.conrelid')} as columns,
            fn.nspname as "refSchema", fc.relname as "refTable",
            case when con.contype = 'f' then ${KEY_COLUMNS('con.confkey', 'con.confrelid')} end as "refColumns",
            case when con.contype = 'f' then con.confdeltype::text end as "onDelete",
            case when con.contype = 'f' then con.confupdtype::text end as "onUpdate",
            pg_get_constraintdef(con.oid) as definition
       from pg_constraint con
       left join pg_class fc on fc.oid = con.confrelid
       left join pg_namespace fn on fn.oid = fc.relnamespace
      where con.conrelid = $1::oid and con.contype in ('p', 'u', 'f', 'c')
      order by con.contype, con.conname`,
    [oid],
  )
  return rows
}

export interface IndexRow {
  name: string
  definition: string
  unique: boolean
  primary: boolean
}

export async function indexes(db: Queryable, oid: number): Promise<IndexRow[]> {
  const { rows } = await db.query<IndexRow>(
    `select i.relname as name, pg_get_indexdef(x.indexrelid) as definition, x.indisunique as unique, x.indisprimary as primary
       from pg_index x join pg_class i on i.oid = x.indexrelid
      where x.indrelid = $1::oid
      order by i.relname`,
    [oid],
  )
  return rows
}

export interface PolicyRow {
  name: string
  command: string
  permissive: string
  roles: string[]
  using: string | null
  withCheck: string | null
}

export async function policies(db: Queryable, schema: string, name: string): Promise<PolicyRow[]> {
  const { rows } = await db.query<PolicyRow>(
    `select policyname::text as name, cmd as command, permissive, roles::text[] as roles, qual as using, with_check as "withCheck"
       from pg_policies where schemaname = $1 and tablename = $2 order by policyname`,
    [schema, name],
  )
  return rows
}

export interface EnumRow {
  schema: string
  name: string
}

export async function enums(db: Queryable, schemaNames: readonly string[]): Promise<EnumRow[]> {
  const { rows } = await db.query<EnumRow>(
    `select n.nspname as schema, t.typname as name from pg_type t join pg_namespace n on n.oid = t.typnamespace
      where t.typtype = 'e' and n.nspname = any($1) order by n.nspname, t.typname`,
    [schemaNames],
  )
  return rows
}

/**
 * The columns of a table's constraint, or of a unique index that is no
 * constraint (PostgreSQL names the index in a unique violation either way).
 */
export async function constraintColumns(db: Queryable, oid: number, name: string): Promise<string[]> {
  const { rows } = await db.query<{ columns: string[] }>(
    `select ${KEY_COLUMNS('con.conkey', 'con.conrelid')} as columns from pg_constraint con where con.conrelid = $1::oid and con.conname = $2
     union all
     select ${KEY_COLUMNS('x.indkey::int2[]', 'x.indrelid')} from pg_index x join pg_class i on i.oid = x.indexrelid
      where x.indrelid = $1::oid and i.relname = $2`,
    [oid, name],
  )
  return rows[0]?.columns ?? []
}

/** Whether `text` reads as a value of `type` (a type as format_type prints it, already checked to exist). */
export async function readsAs(db: Queryable, text: string, type: string): Promise<boolean> {
  try {
    await db.query(`select $1::text::${type}`, [text])
    return true
  } catch {
    return false
  }
}

export type FilterOperator = 'eq' | 'neq' | 'lt' | 'lte' | 'gt' | 'gte' | 'like' | 'ilike' | 'is_null' | 'not_null'

const OPERATORS: Record<FilterOperator, (column: string, param: string) => string> = {
  eq: (c, p) => `${c} = ${p}`,
  neq: (c, p) => `${c} <> ${p}`,
  lt: (c, p) => `${c} < ${p}`,
  lte: (c, p) => `${c} <= ${p}`,
  gt: (c, p) => `${c} > ${p}`,
  gte: (c, p) => `${c} >= ${p}`,
  like: (c, p) => `${c}::text like ${p}`,
  ilike: (c, p) => `${c}::text ilike ${p}`,
  is_null: (c) => `${c} is null`,
  not_null: (c) => `${c} is not null`,
}

export const FILTER_OPERATORS = Object.keys(OPERATORS) as FilterOperator[]

export interface RowFilter {
  column: string
  operator: FilterOperator
  value: string
}

/** `where ...` of the filters (values appended to `params`), '' without any. */
function whereOf(filters: readonly RowFilter[], params: unknown[]): string {
  if (filters.length === 0) return ''
  const terms = filters.map((filter) => {
    if (filter.operator === 'is_null' || filter.operator === 'not_null') return OPERATORS[filter.operator](ident(filter.column), '')
    params.push(filter.value)
    return OPERATORS[filter.operator](ident(filter.column), `$${params.length}`)
  })
  return `where ${terms.join(' and ')}`
}

/** Each column as its text, the way psql shows it (NULL stays null). */
const textColumns = (names: readonly string[]) => names.map((name) => `${ident(name)}::text as ${ident(name)}`).join(', ')

export type TextRow = Record<string, string | null>

export interface RowsQuery {
  schema: string
  table: string
  columns: readonly string[]
  filters: readonly RowFilter[]
  order: ReadonlyArray<{ column: string; descending: boolean }>
  limit: number
  offset: number
}

export async function selectRows(db: Queryable, query: RowsQuery): Promise<TextRow[]> {
  const params: unknown[] = []
  const where = whereOf(query.filters, params)
  const order = query.order.length === 0 ? '' : `order by ${query.order.map((o) => `${ident(o.column)} ${o.descending ? 'desc' : 'asc'} nulls last`).join(', ')}`
  params.push(query.limit, query.offset)
  const { rows } = await db.query<TextRow>(
    `select ${textColumns(query.columns)} from ${qualified(query.schema, query.table)} ${where} ${order} limit $${params.length - 1} offset $${params.length}`,
    params,
  )
  return rows
}

export async function countRows(db: Queryable, schema: string, name: string, filters: readonly RowFilter[]): Promise<number> {
  const params: unknown[] = []
  const where = whereOf(filters, params)
  const { rows } = await db.query<{ count: string }>(`select count(*) as count from ${qualified(schema, name)} ${where}`, params)
  return Number(rows[0]!.count)
}

/**
 * One row inserted from text values (each read as its column's type by
 * PostgreSQL, as psql's would be); columns left out take their defaults.
 */
export async function insertRow(db: Queryable, schema: string, name: string, values: Record<string, string | null>, returned: readonly string[]): Promise<TextRow> {
  const names = Object.keys(values)
  const text =
    names.length === 0
      ? `insert into ${qualified(schema, name)} default values returning ${textColumns(returned)}`
      : `insert into ${qualified(schema, name)} (${names.map(ident).join(', ')}) values (${names.map((_, i) => `$${i + 1}`).join(', ')}) returning ${textColumns(returned)}`
  const { rows } = await db.query<TextRow>(text, names.map((n) => values[n]))
  return rows[0]!
}

function keyWhere(key: Record<string, string>, params: unknown[]): string {
  return Object.keys(key)
    .map((column) => {
      params.push(key[column])
      return `${ident(column)} = $${params.length}`
    })
    .join(' and ')
}

/** The row whose primary key is `key`, changed; none when no row has it. */
export async function updateRow(db: Queryable, schema: string, name: string, key: Record<string, string>, values: Record<string, string | null>, returned: readonly string[]): Promise<TextRow | undefined> {
  const params: unknown[] = []
  const sets = Object.keys(values).map((column) => {
    params.push(values[column])
    return `${ident(column)} = $${params.length}`
  })
  const { rows } = await db.query<TextRow>(`update ${qualified(schema, name)} set ${sets.join(', ')} where ${keyWhere(key, params)} returning ${textColumns(returned)}`, params)
  return rows[0]
}

export async function deleteRow(db: Queryable, schema: string, name: string, key: Record<string, string>): Promise<number> {
  const params: unknown[] = []
  const result = await db.query(`delete from ${qualified(schema, name)} where ${keyWhere(key, params)}`, params)
  return result.rowCount ?? 0
}

// DDL. Types come checked (table-editor.ts columnType): a built-in name from
// the editor's list with its numeric modifiers, or an enum named by schema
// and name (quoted here); defaults come as a known expression or a literal.

export interface ColumnType {
  /** A built-in type's name from the editor's list (`int8`, `timestamptz`), or an enum. */
  builtin?: string
  enum?: { schema: string; name: string }
  /** varchar(n), numeric(p, s). */
  modifiers: number[]
  array: boolean
}

export function typeSql(type: ColumnType): string {
  const base = type.enum ? qualified(type.enum.schema, type.enum.name) : type.builtin!
  const modifiers = type.modifiers.length > 0 ? `(${type.modifiers.map((m) => String(Math.trunc(m))).join(', ')})` : ''
  return `${base}${modifiers}${type.array ? '[]' : ''}`
}

/** A default: an expression from the editor's list (`now()`), else a literal read as the column's type. */
export type ColumnDefault = { expression: string } | { literal: string }

function defaultSql(value: ColumnDefault): string {
  return 'expression' in value ? value.expression : quoteText(value.literal)
}

export interface ForeignKeySpec {
  name?: string
  columns: string[]
  refSchema: string
  refTable: string
  refColumns: string[]
  onDelete: ReferentialAction
  onUpdate: ReferentialAction
}

export type ReferentialAction = 'no action' | 'restrict' | 'cascade' | 'set null' | 'set default'

export interface ColumnSpec {
  name: string
  type: ColumnType
  nullable: boolean
  default?: ColumnDefault
  identity: boolean
  unique: boolean
}

function columnSql(column: ColumnSpec): string {
  const parts = [ident(column.name), typeSql(column.type)]
  if (column.identity) parts.push('generated by default as identity')
  if (column.default !== undefined) parts.push(`default ${defaultSql(column.default)}`)
  if (!column.nullable) parts.push('not null')
  if (column.unique) parts.push('unique')
  return parts.join(' ')
}

function foreignKeySql(fk: ForeignKeySpec): string {
  const named = fk.name === undefined ? '' : `constraint ${ident(fk.name)} `
  return `${named}foreign key (${fk.columns.map(ident).join(', ')}) references ${qualified(fk.refSchema, fk.refTable)} (${fk.refColumns.map(ident).join(', ')}) on delete ${fk.onDelete} on update ${fk.onUpdate}`
}

export interface TableSpec {
  schema: string
  name: string
  columns: ColumnSpec[]
  primaryKey: string[]
  foreignKeys: ForeignKeySpec[]
  rls: boolean
}

export async function createTable(db: Queryable, spec: TableSpec): Promise<void> {
  const items = spec.columns.map(columnSql)
  if (spec.primaryKey.length > 0) items.push(`primary key (${spec.primaryKey.map(ident).join(', ')})`)
  for (const fk of spec.foreignKeys) items.push(foreignKeySql(fk))
  await db.query(`create table ${qualified(spec.schema, spec.name)} (${items.join(', ')})`)
  if (spec.rls) await db.query(`alter table ${qualified(spec.schema, spec.name)} enable row level security`)
}

export type AlterAction =
  | { action: 'add_column'; column: ColumnSpec }
  | { action: 'drop_column'; name: string }
  | { action: 'rename_column'; name: string; to: string }
  | { action: 'set_type'; name: string; type: ColumnType }
  | { action: 'set_default'; name: string; default: ColumnDefault | null }
  | { action: 'set_nullable'; name: string; nullable: boolean }
  | { action: 'add_foreign_key'; foreignKey: ForeignKeySpec }
  | { action: 'drop_constraint'; name: string }
  | { action: 'rename_table'; to: string }

function alterSql(action: AlterAction): string {
  switch (action.action) {
    case 'add_column':
      return `add column ${columnSql(action.column)}`
    case 'drop_column':
      return `drop column ${ident(action.name)}`
    case 'rename_column':
      return `rename column ${ident(action.name)} to ${ident(action.to)}`
    case 'set_type':
      // The column's text read as the new type, as Supabase's editor converts: a value that does not read refuses the change.
      return `alter column ${ident(action.name)} type ${typeSql(action.type)} using ${ident(action.name)}::text::${typeSql(action.type)}`
    case 'set_default':
      return action.default === null ? `alter column ${ident(action.name)} drop default` : `alter column ${ident(action.name)} set default ${defaultSql(action.default)}`
    case 'set_nullable':
      return `alter column ${ident(action.name)} ${action.nullable ? 'drop' : 'set'} not null`
    case 'add_foreign_key':
      return `add ${foreignKeySql(action.foreignKey)}`
    case 'drop_constraint':
      return `drop constraint ${ident(action.name)}`
    case 'rename_table':
      return `rename to ${ident(action.to)}`
  }
}

/** Each action its own statement (PostgreSQL takes a rename alone), all in the caller's transaction. */
export async function alterTable(db: Queryable, schema: string, name: string, actions: readonly AlterAction[]): Promise<void> {
  let current = name
  for (const action of actions) {
    await db.query(`alter table ${qualified(schema, current)} ${alterSql(action)}`)
    if (action.action === 'rename_table') current = action.to
  }
}

export async function dropTable(db: Queryable, schema: string, name: string): Promise<void> {
  await db.query(`drop table ${qualified(schema, name)}`)
}

export async function setRowLevelSecurity(db: Queryable, schema: string, name: string, enabled: boolean, forced: boolean): Promise<void> {
  await db.query(`alter table ${qualified(schema, name)} ${enabled ? 'enable' : 'disable'} row level security`)
  await db.query(`alter table ${qualified(schema, name)} ${forced ? 'force' : 'no force'} row level security`)
}

export interface PolicySpec {
  name: string
  command: 'select' | 'insert' | 'update' | 'delete' | 'all'
  roles: string[]
  /** A template's expression (table-editor.ts POLICY_TEMPLATES), its column quoted by the caller. */
  using?: string
  withCheck?: string
}

export async function createPolicy(db: Queryable, schema: string, name: string, policy: PolicySpec): Promise<void> {
  const using = policy.using === undefined ? '' : ` using (${policy.using})`
  const check = policy.withCheck === undefined ? '' : ` with check (${policy.withCheck})`
  // `public` is PostgreSQL's word for every role, not a role's name: quoted it would name a role "public".
  const roles = policy.roles.map((role) => (role === 'public' ? 'public' : ident(role))).join(', ')
  await db.query(`create policy ${ident(policy.name)} on ${qualified(schema, name)} as permissive for ${policy.command} to ${roles}${using}${check}`)
}

export async function dropPolicy(db: Queryable, schema: string, name: string, policy: string): Promise<void> {
  await db.query(`drop policy ${ident(policy)} on ${qualified(schema, name)}`)
}

/** A quoted column for a template's expression. */
export const quotedColumn = ident
