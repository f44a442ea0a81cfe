// The table editor (issue 42 item 5): a project's schemas and tables with
// their columns, keys, indexes, row-level security and policies; rows paged,
// sorted, filtered, inserted, edited and deleted; tables created, altered and
// dropped; RLS switched and policies added from Supabase's templates. The
// dashboard's Tables tab and `/platform/v1/projects/{ref}/tables...` call it.
//
// Everything runs on a connection of its own as the project's owner role
// (project-database.ts withProjectLogin), as its developers' psql would: the
// owner's grants decide, owner code (triggers, defaults) never runs as the
// server's superuser, and the owner role owns what is created. Each operation
// is one transaction (a failure writes nothing), reads in a read-only one.
//
// Values travel as text and PostgreSQL reads each as its column's type (as a
// typed value in psql); identifiers are checked (1 to 63 bytes, no control
// characters) and always quoted; types must be one of the editor's list or
// one of the project's enums; defaults are a literal unless they are one of
// the expressions offered (`now()`, `gen_random_uuid()`, ...). A refusal by a
// constraint names the column it concerns (PostgreSQL's `column`, else the
// constraint's columns), so a form draws it beside that field.
import type pg from 'pg'
import { BaseplaneError, Checks, platformErrors } from '../lib/errors.ts'
import type { ProjectRecord } from '../lib/catalogue.ts'
import { scalarText } from '../lib/pg-catalog/quote.ts'
import type { ControlPlane } from './control-plane.ts'
import { getProject } from './projects.ts'
import { withProjectLogin } from './project-database.ts'
import { inTransaction } from '../lib/db/request-transaction.ts'
import * as db from './db/table-editor.ts'

export { FILTER_OPERATORS, type FilterOperator } from './db/table-editor.ts'

/** Schemas never shown: PostgreSQL's and the platform's private ones (Push's, GraphQL's, the extensions', the platform's bookkeeping). */
const HIDDEN_SCHEMAS = new Set(['information_schema', 'graphql', 'graphql_public', 'push', 'extensions'])
const HIDDEN_PREFIXES = ['pg_', 'baseplane']

/** The platform's schemas a developer reads but does not change here, as Supabase's Studio protects them. */
export const READ_ONLY_SCHEMAS = ['auth', 'storage', 'realtime', 'supabase_migrations']

/** The built-in types the editor offers, by the name PostgreSQL's format_type prints too (aliases below). */
export const COLUMN_TYPES = ['int2', 'int4', 'int8', 'numeric', 'float4', 'float8', 'text', 'varchar', 'bool', 'date', 'time', 'timetz', 'timestamp', 'timestamptz', 'interval', 'uuid', 'json', 'jsonb', 'bytea'] as const

const TYPE_ALIASES: Record<string, string> = {
  smallint: 'int2',
  integer: 'int4',
  int: 'int4',
  bigint: 'int8',
  decimal: 'numeric',
  real: 'float4',
  'double precision': 'float8',
  'character varying': 'varchar',
  boolean: 'bool',
  'time without time zone': 'time',
  'time with time zone': 'timetz',
  'timestamp without time zone': 'timestamp',
  'timestamp with time zone': 'timestamptz',
}

const WITH_MODIFIERS = new Set(['varchar', 'numeric'])
const INTEGER_TYPES = new Set(['int2', 'int4', 'int8'])

/** Defaults taken as expressions; any other default is a literal of the column's type. */
export const DEFAULT_EXPRESSIONS = ['now()', 'current_timestamp', 'current_date', 'gen_random_uuid()', 'uuid_generate_v4()', 'auth.uid()', "timezone('utc', now())"] as const

/** The roles a template's policy may name. */
const POLICY_ROLES = ['public', 'anon', 'authenticated', 'service_role']

export interface PolicyTemplate {
  label: string
  command: db.PolicySpec['command']
  roles: string[]
  /** Whether it compares `(select auth.uid())` with a column of the user's id. */
  ownRows: boolean
  using: boolean
  withCheck: boolean
}

/** Supabase's usual policies, by the names its dashboard gives them. */
export const POLICY_TEMPLATES: Record<string, PolicyTemplate> = {
  read_all: { label: 'Enable read access for all users', command: 'select', roles: ['public'], ownRows: false, using: true, withCheck: false },
  insert_authenticated: { label: 'Enable insert for authenticated users only', command: 'insert', roles: ['authenticated'], ownRows: false, using: false, withCheck: true },
  own_select: { label: 'Enable users to view their own data only', command: 'select', roles: ['authenticated'], ownRows: true, using: true, withCheck: false },
  own_insert: { label: 'Enable insert for users based on user_id', command: 'insert', roles: ['authenticated'], ownRows: true, using: false, withCheck: true },
  own_update: { label: 'Enable update for users based on user_id', command: 'update', roles: ['authenticated'], ownRows: true, using: true, withCheck: true },
  own_delete: { label: 'Enable delete for users based on user_id', command: 'delete', roles: ['authenticated'], ownRows: true, using: true, withCheck: false },
}

/** Rows a page shows unless asked, and at most. */
export const DEFAULT_ROWS = 50
export const MAX_ROWS = 1000

// --- views -------------------------------------------------------------

export interface TableSummary {
  name: string
  rls_enabled: boolean
  rls_forced: boolean
  /** PostgreSQL's estimate (0 before the table's first analyse). */
  rows_estimate: number
}

export interface SchemaView {
  name: string
  /** False for the platform's schemas (auth, storage, ...): their structure and rows are read here, not changed. */
  editable: boolean
  tables: TableSummary[]
}

export interface TablesView {
  ref: string
  schemas: SchemaView[]
  /** What a column's type may be: the editor's built-in types and the project's enums. */
  types: string[]
}

export interface ColumnView {
  name: string
  type: string
  nullable: boolean
  default: string | null
  identity: 'always' | 'by default' | null
  generated: boolean
  primary_key: boolean
}

export interface ForeignKeyView {
  name: string
  columns: string[]
  references: { schema: string; table: string; columns: string[] }
  on_delete: string
  on_update: string
}

export interface TableView {
  ref: string
  schema: string
  name: string
  editable: boolean
  columns: ColumnView[]
  primary_key: string[]
  foreign_keys: ForeignKeyView[]
  unique_constraints: Array<{ name: string; columns: string[] }>
  check_constraints: Array<{ name: string; columns: string[]; definition: string }>
  indexes: Array<{ name: string; definition: string; unique: boolean; primary: boolean }>
  rls: { enabled: boolean; forced: boolean }
  policies: Array<{ name: string; command: string; permissive: boolean; roles: string[]; using: string | null; with_check: string | null }>
}

const ACTIONS: Record<string, string> = { a: 'no action', r: 'restrict', c: 'cascade', n: 'set null', d: 'set default' }

// --- connections -------------------------------------------------------

type Work<T> = (client: pg.Client, project: ProjectRecord) => Promise<T>

async function asOwner<T>(controlPlane: ControlPlane, ref: string, work: Work<T>): Promise<T> {
  const project = await getProject(controlPlane, ref)
  // A suspended or paused project's owner role may not log in (suspension.ts): say so rather than fail to connect.
  if (project.state !== 'active') {
    throw new BaseplaneError('project_not_active', `Project ${ref} is ${project.state}: its database takes no connections until it is resumed`, 409)
  }
  return withProjectLogin(await controlPlane.serverUrl(project.dbServer), project, 'owner', (client) => work(client, project))
}

function reading<T>(controlPlane: ControlPlane, ref: string, work: Work<T>): Promise<T> {
  return asOwner(controlPlane, ref, (client, project) => inTransaction(client, (c) => work(c, project), db.BEGIN_READ))
}

// --- checks ------------------------------------------------------------

function isHidden(schema: string): boolean {
  return HIDDEN_SCHEMAS.has(schema) || HIDDEN_PREFIXES.some((prefix) => schema.startsWith(prefix))
}

/** An identifier as PostgreSQL keeps it: 1 to 63 bytes, no control characters (quoted wherever it is used). */
export function identifier(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.length === 0) throw platformErrors.invalidArgument(`${field} is required: a name of 1 to 63 bytes`, field)
  if (Buffer.byteLength(value) > 63) throw platformErrors.invalidArgument(`${field} "${value.slice(0, 70)}" is longer than PostgreSQL's 63 bytes`, field)
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(value)) throw platformErrors.invalidArgument(`${field} must not hold control characters`, field)
  if (value.trim() !== value) throw platformErrors.invalidArgument(`${field} "${value}" must not start or end with spaces`, field)
  return value
}

function tableNotFound(schema: string, name: string): BaseplaneError {
  return new BaseplaneError('table_not_found', `No table "${name}" in schema "${schema}"`, 404)
}

interface Located {
  table: db.TableRow
  columns: db.ColumnRow[]
  editable: boolean
}

async function schemaEditable(client: pg.ClientBase, project: ProjectRecord, schema: string): Promise<boolean | undefined> {
  const row = (await db.schemas(client)).find((s) => s.name === schema)
  if (!row || isHidden(schema)) return undefined
  return !READ_ONLY_SCHEMAS.includes(schema) && row.owner === project.dbOwnerRole
}

async function locate(client: pg.ClientBase, project: ProjectRecord, schema: string, name: string): Promise<Located> {
  const editable = await schemaEditable(client, project, schema)
  const table = editable === undefined ? undefined : await db.table(client, schema, name)
  if (!table) throw tableNotFound(schema, name)
  return { table, columns: await db.columns(client, table.oid), editable: editable! }
}

function mustEdit(located: Located): void {
  if (!located.editable) {
    throw new BaseplaneError('read_only_schema', `Schema "${located.table.schema}" is the platform's: its tables are read here, not changed`, 403)
  }
}

function columnOf(located: Located, name: unknown, field: string): db.ColumnRow {
  const column = located.columns.find((c) => c.name === name)
  if (!column) throw platformErrors.invalidArgument(`Table "${located.table.name}" has no column "${String(name).slice(0, 70)}"`, field)
  return column
}

/** A type named as the editor offers it: `int8`, `varchar(40)`, `numeric(10,2)`, `text[]`, an enum (`mood`, `app.mood`). */
export function columnType(text: unknown, field: string, enums: readonly db.EnumRow[]): db.ColumnType {
  const value = typeof text === 'string' ? text.trim() : ''
  const match = /^(.+?)\s*(?:\(\s*(\d{1,4})\s*(?:,\s*(\d{1,4})\s*)?\))?\s*(\[\])?$/.exec(value)
  const refuse = () =>
    platformErrors.invalidArgument(`${field}: "${value.slice(0, 70)}" is not a type the editor offers (${COLUMN_TYPES.join(', ')}, or one of the project's enums)`, field)
  if (!match) throw refuse()
  const [, rawName, first, second, array] = match
  const lower = rawName!.toLowerCase()
  const modifiers = [first, second].filter((m): m is string => m !== undefined).map(Number)
  const builtin = (COLUMN_TYPES as readonly string[]).includes(lower) ? lower : TYPE_ALIASES[lower]
  if (builtin !== undefined) {
    if (modifiers.length > 0 && !WITH_MODIFIERS.has(builtin)) throw platformErrors.invalidArgument(`${field}: ${builtin} takes no (...) modifier`, field)
    if (builtin === 'varchar' && modifiers.length > 1) throw platformErrors.invalidArgument(`${field}: varchar takes one length, varchar(n)`, field)
    if (modifiers.some((m) => m === 0)) throw platformErrors.invalidArgument(`${field}: a length or precision must be at least 1`, field)
    return { builtin, modifiers, array: array !== undefined }
  }
  const dot = rawName!.indexOf('.')
  const [schema, name] = dot < 0 ? [undefined, rawName!] : [rawName!.slice(0, dot), rawName!.slice(dot + 1)]
  const found = enums.find((e) => e.name === name.replace(/^"|"$/g, '') && (schema === undefined ? e.schema === 'public' : e.schema === schema.replace(/^"|"$/g, '')))
  if (!found || modifiers.length > 0) throw refuse()
  return { enum: found, modifiers: [], array: array !== undefined }
}

function defaultOf(value: unknown, field: string): db.ColumnDefault | undefined {
  if (value === undefined || value === null || value === '') return undefined
  if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') throw platformErrors.invalidArgument(`${field} must be text, a number or true/false`, field)
  const text = String(value).trim()
  const expression = (DEFAULT_EXPRESSIONS as readonly string[]).find((e) => e.toLowerCase() === text.toLowerCase())
  return expression === undefined ? { literal: text } : { expression }
}

function booleanOf(value: unknown, field: string, absent: boolean): boolean {
  if (value === undefined || value === null) return absent
  if (typeof value !== 'boolean') throw platformErrors.invalidArgument(`${field} must be true or false`, field)
  return value
}

function objectOf(value: unknown, field: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw platformErrors.invalidArgument(`${field} must be an object`, field)
  return value as Record<string, unknown>
}

function arrayOf(value: unknown, field: string): unknown[] {
  if (!Array.isArray(value)) throw platformErrors.invalidArgument(`${field} must be a list`, field)
  return value
}

function actionOf(value: unknown, field: string): db.ReferentialAction {
  if (value === undefined || value === null || value === '') return 'no action'
  const text = typeof value === 'string' ? value.toLowerCase().replace(/_/g, ' ') : ''
  if (!Object.values(ACTIONS).includes(text)) throw platformErrors.invalidArgument(`${field} must be one of ${Object.values(ACTIONS).join(', ')}`, field)
  return text as db.ReferentialAction
}

/** The text PostgreSQL reads a row's value from; null stays null. */
function valueText(value: unknown): string | null {
  return value === null ? null : scalarText(value)
}

// --- errors ------------------------------------------------------------

interface PgError {
  code?: string
  message: string
  detail?: string
  hint?: string
  column?: string
  constraint?: string
}

const isPgError = (error: unknown): error is PgError => typeof error === 'object' && error !== null && typeof (error as PgError).code === 'string' && /^[0-9A-Z]{5}$/.test((error as PgError).code!)

function sentence(error: PgError): string {
  return error.detail ? `${error.message} (${error.detail})` : error.message
}

/** PostgreSQL's refusal of a definition, as the admin API's: what it said, with its code. */
function definitionRefusal(error: PgError, field?: string, otherwise = 'invalid_definition'): BaseplaneError {
  const code = error.code!
  const known: Record<string, [string, number]> = {
    '42P07': ['already_exists', 409],
    '42701': ['already_exists', 409],
    '42710': ['already_exists', 409],
    '2BP01': ['has_dependents', 409],
    '42501': ['permission_denied', 403],
    '42704': ['not_found', 404],
    '55P03': ['locked', 409],
    '57014': ['statement_timeout', 409],
  }
  const [name, status] = known[code] ?? [otherwise, 400]
  const refusal = new BaseplaneError(name, `PostgreSQL refused it: ${sentence(error)}`, status, error.hint)
  return refusal.concerning(error.column ?? field)
}

/** Runs a change as the owner in one transaction; PostgreSQL's refusal becomes the admin API's, beside `field` when it names none. */
async function changing<T>(controlPlane: ControlPlane, ref: string, work: Work<T>, field?: string): Promise<T> {
  return asOwner(controlPlane, ref, async (client, project) => {
    try {
      return await inTransaction(client, (c) => work(c, project), db.BEGIN_WRITE)
    } catch (error) {
      if (isPgError(error) && !/^(08|53|57P|58)/.test(error.code!)) throw definitionRefusal(error, field)
      throw error
    }
  })
}

/**
 * A row refused by PostgreSQL, beside the column it concerns: its `column`
 * (not null), else the constraint's first column (unique, foreign key,
 * check); a value that does not read as its type is found by reading each
 * sent value again, after the rollback.
 */
async function rowRefusal(client: pg.ClientBase, located: Located, values: Record<string, string | null>, error: PgError): Promise<BaseplaneError | undefined> {
  const byConstraint = async () => (error.constraint ? (await db.constraintColumns(client, located.table.oid, error.constraint))[0] : undefined)
  const kinds: Record<string, [string, number]> = {
    '23505': ['unique_violation', 409],
    '23503': ['foreign_key_violation', 409],
    '23502': ['not_null_violation', 400],
    '23514': ['check_violation', 400],
  }
  const kind = kinds[error.code!]
  if (kind) {
    const column = error.column ?? (await byConstraint())
    return new BaseplaneError(kind[0], sentence(error), kind[1], error.hint).concerning(column)
  }
  if (error.code!.startsWith('22')) {
    let column: string | undefined
    for (const [name, text] of Object.entries(values)) {
      const type = located.columns.find((c) => c.name === name)?.type
      if (text !== null && type !== undefined && !(await db.readsAs(client, text, type))) {
        column = name
        break
      }
    }
    return new BaseplaneError('invalid_value', column ? `${column}: ${error.message}` : error.message, 400, error.hint).concerning(column)
  }
  if (error.code === '42501') return new BaseplaneError('permission_denied', sentence(error), 403, error.hint)
  return undefined
}

// --- reads -------------------------------------------------------------

/** The schemas a developer sees (theirs, public, and the platform's read-only ones) with their tables, and the types a column may take. */
export async function listTables(controlPlane: ControlPlane, ref: string): Promise<TablesView> {
  return reading(controlPlane, ref, async (client, project) => {
    const shown = (await db.schemas(client)).filter((s) => !isHidden(s.name))
    const tables = await db.tables(client, shown.map((s) => s.name))
    const editable = shown.filter((s) => !READ_ONLY_SCHEMAS.includes(s.name) && s.owner === project.dbOwnerRole).map((s) => s.name)
    const enums = await db.enums(client, editable)
    return {
      ref,
      schemas: shown
        .filter((s) => editable.includes(s.name) || READ_ONLY_SCHEMAS.includes(s.name))
        .map((s) => ({
          name: s.name,
          editable: editable.includes(s.name),
          tables: tables.filter((t) => t.schema === s.name).map((t) => ({ name: t.name, rls_enabled: t.rls, rls_forced: t.forced, rows_estimate: t.estimate })),
        })),
      types: [...COLUMN_TYPES, ...enums.map(enumName)],
    }
  })
}

function enumName(e: db.EnumRow): string {
  return e.schema === 'public' ? e.name : `${e.schema}.${e.name}`
}

async function tableView(client: pg.ClientBase, ref: string, located: Located): Promise<TableView> {
  const { table } = located
  const [constraints, indexes, policies] = [await db.constraints(client, table.oid), await db.indexes(client, table.oid), await db.policies(client, table.schema, table.name)]
  const primaryKey = constraints.find((c) => c.kind === 'p')?.columns ?? []
  return {
    ref,
    schema: table.schema,
    name: table.name,
    editable: located.editable,
    columns: located.columns.map((c) => ({
      name: c.name,
      type: c.type,
      nullable: c.nullable,
      default: c.generated === 's' ? null : c.default,
      identity: c.identity === 'a' ? 'always' : c.identity === 'd' ? 'by default' : null,
      generated: c.generated === 's',
      primary_key: primaryKey.includes(c.name),
    })),
    primary_key: primaryKey,
    foreign_keys: constraints
      .filter((c) => c.kind === 'f')
      .map((c) => ({
        name: c.name,
        columns: c.columns,
        references: { schema: c.refSchema!, table: c.refTable!, columns: c.refColumns! },
        on_delete: ACTIONS[c.onDelete!] ?? 'no action',
        on_update: ACTIONS[c.onUpdate!] ?? 'no action',
      })),
    unique_constraints: constraints.filter((c) => c.kind === 'u').map((c) => ({ name: c.name, columns: c.columns })),
    check_constraints: constraints.filter((c) => c.kind === 'c').map((c) => ({ name: c.name, columns: c.columns, definition: c.definition })),
    indexes,
    rls: { enabled: table.rls, forced: table.forced },
    policies: policies.map((p) => ({ name: p.name, command: p.command, permissive: p.permissive === 'PERMISSIVE', roles: p.roles, using: p.using, with_check: p.withCheck })),
  }
}

/** One table's structure: columns, keys, constraints, indexes, row-level security and policies. */
export async function describeTable(controlPlane: ControlPlane, ref: string, schema: string, name: string): Promise<TableView> {
  return reading(controlPlane, ref, async (client, project) => tableView(client, ref, await locate(client, project, schema, name)))
}

export interface RowsRequest {
  limit?: number
  offset?: number
  /** A column to sort by; the primary key when absent, so pages do not overlap. */
  sort?: string
  descending?: boolean
  filters?: Array<{ column: string; operator: string; value?: string }>
}

export interface RowsView {
  ref: string
  schema: string
  table: string
  columns: Array<{ name: string; type: string }>
  primary_key: string[]
  /** Each value as PostgreSQL's text of it (psql's), null as null. */
  rows: db.TextRow[]
  /** The rows the filters match, every page together. */
  total: number
  limit: number
  offset: number
}

/** A page of a table's rows, sorted and filtered; each refusal names its input (`limit`, `sort`, `filters.0.column`, ...). */
export async function listRows(controlPlane: ControlPlane, ref: string, schema: string, name: string, request: RowsRequest = {}): Promise<RowsView> {
  const limit = request.limit ?? DEFAULT_ROWS
  const offset = request.offset ?? 0
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_ROWS) throw platformErrors.invalidArgument(`limit must be a whole number from 1 to ${MAX_ROWS}`, 'limit')
  if (!Number.isInteger(offset) || offset < 0) throw platformErrors.invalidArgument('offset must be a whole number, 0 or more', 'offset')
  return reading(controlPlane, ref, async (client, project) => {
    const located = await locate(client, project, schema, name)
    const primaryKey = (await db.constraints(client, located.table.oid)).find((c) => c.kind === 'p')?.columns ?? []
    const checks = new Checks()
    const filters: db.RowFilter[] = []
    ;(request.filters ?? []).forEach((filter, i) => {
      checks.check(() => {
        const column = columnOf(located, filter.column, `filters.${i}.column`)
        if (!(db.FILTER_OPERATORS as readonly string[]).includes(filter.operator)) {
          throw platformErrors.invalidArgument(`filters.${i}.operator must be one of ${db.FILTER_OPERATORS.join(', ')}`, `filters.${i}.operator`)
        }
        filters.push({ column: column.name, operator: filter.operator as db.FilterOperator, value: filter.value ?? '' })
      })
    })
    let order: RowsQuery['order'] = primaryKey.map((column) => ({ column, descending: request.descending === true }))
    if (request.sort !== undefined && request.sort !== '') {
      const sort = checks.check(() => columnOf(located, request.sort, 'sort'))
      if (sort && (sort.typeName === 'json' || sort.typeName === 'xml')) checks.refuse(platformErrors.invalidArgument(`sort: a ${sort.typeName} column has no order`, 'sort'))
      if (sort) order = [{ column: sort.name, descending: request.descending === true }]
    }
    checks.settle()
    const names = located.columns.map((c) => c.name)
    try {
      const rows = await db.selectRows(client, { schema, table: name, columns: names, filters, order, limit, offset })
      const total = await db.countRows(client, schema, name, filters)
      return { ref, schema, table: name, columns: located.columns.map((c) => ({ name: c.name, type: c.type })), primary_key: primaryKey, rows, total, limit, offset }
    } catch (error) {
      // A filter's value that does not read as its column's type, or an operator the type lacks (json has no <).
      if (isPgError(error) && (error.code!.startsWith('22') || error.code === '42883')) {
        throw platformErrors.invalidArgument(`A filter PostgreSQL cannot apply: ${error.message}`, filters.length === 1 ? 'filters.0.value' : undefined)
      }
      if (isPgError(error) && error.code === '42501') throw new BaseplaneError('permission_denied', error.message, 403)
      throw error
    }
  })
}

type RowsQuery = db.RowsQuery

// --- rows --------------------------------------------------------------

/** The sent values by column, each checked to be a column that takes writes. */
function rowValues(located: Located, values: unknown, field: string): Record<string, string | null> {
  const object = objectOf(values ?? {}, field)
  const checks = new Checks()
  const out: Record<string, string | null> = {}
  for (const [name, value] of Object.entries(object)) {
    checks.check(() => {
      const column = columnOf(located, name, name)
      if (column.generated === 's') throw platformErrors.invalidArgument(`${name} is generated: PostgreSQL computes it`, name)
      if (column.identity === 'a') throw platformErrors.invalidArgument(`${name} is an identity generated always: PostgreSQL numbers it`, name)
      out[name] = valueText(value)
    })
  }
  checks.settle()
  return out
}

async function primaryKeyOf(client: pg.ClientBase, located: Located, key: unknown): Promise<Record<string, string>> {
  const primaryKey = (await db.constraints(client, located.table.oid)).find((c) => c.kind === 'p')?.columns ?? []
  if (primaryKey.length === 0) {
    throw new BaseplaneError('no_primary_key', `Table "${located.table.name}" has no primary key: rows are edited and deleted by it, so add one first`, 400)
  }
  const object = objectOf(key, 'key')
  const sent = Object.keys(object).sort()
  if (sent.join('\u0000') !== [...primaryKey].sort().join('\u0000') || Object.values(object).some((v) => v === null || v === undefined)) {
    throw platformErrors.invalidArgument(`key must give the primary key's columns, each a value: ${primaryKey.join(', ')}`, 'key')
  }
  return Object.fromEntries(primaryKey.map((column) => [column, scalarText(object[column])]))
}

/**
 * A row write as the owner: its own transaction, and PostgreSQL's refusal
 * beside the column it concerns.
 */
async function writingRow<T>(controlPlane: ControlPlane, ref: string, schema: string, name: string, work: (client: pg.ClientBase, located: Located) => Promise<{ values: Record<string, string | null>; run: () => Promise<T> }>): Promise<T> {
  return asOwner(controlPlane, ref, async (client, project) => {
    let prepared: { located: Located; values: Record<string, string | null> } | undefined
    try {
      return await inTransaction(
        client,
        async (c) => {
          const located = await locate(c, project, schema, name)
          mustEdit(located)
          const step = await work(c, located)
          prepared = { located, values: step.values }
          return await step.run()
        },
        db.BEGIN_WRITE,
      )
    } catch (error) {
      if (!isPgError(error) || prepared === undefined) throw error
      const refusal = await rowRefusal(client, prepared.located, prepared.values, error)
      if (refusal) throw refusal
      // Whatever else the owner's schema refuses with (a trigger's raise, an exclusion constraint): its words, as the row's refusal.
      if (!/^(08|53|57P|58)/.test(error.code!)) throw definitionRefusal(error, undefined, 'row_refused')
      throw error
    }
  })
}

export interface RowView {
  ref: string
  schema: string
  table: string
  row: db.TextRow
}

/** One row inserted; columns not given take their defaults. */
export async function insertRow(controlPlane: ControlPlane, ref: string, schema: string, name: string, values: unknown): Promise<RowView> {
  const row = await writingRow(controlPlane, ref, schema, name, async (client, located) => {
    const sent = rowValues(located, values, 'values')
    return { values: sent, run: () => db.insertRow(client, schema, name, sent, located.columns.map((c) => c.name)) }
  })
  return { ref, schema, table: name, row }
}

/** The row with primary key `key` changed to `values`; 404 when no row has it. */
export async function updateRow(controlPlane: ControlPlane, ref: string, schema: string, name: string, key: unknown, values: unknown): Promise<RowView> {
  const row = await writingRow(controlPlane, ref, schema, name, async (client, located) => {
    const where = await primaryKeyOf(client, located, key)
    const sent = rowValues(located, values, 'values')
    if (Object.keys(sent).length === 0) throw platformErrors.invalidArgument('values must change at least one column', 'values')
    return {
      values: { ...sent },
      run: async () => {
        const changed = await db.updateRow(client, schema, name, where, sent, located.columns.map((c) => c.name))
        if (!changed) throw new BaseplaneError('row_not_found', `No row of "${name}" has that primary key`, 404)
        return changed
      },
    }
  })
  return { ref, schema, table: name, row }
}

/** The row with primary key `key` deleted; 404 when no row has it. */
export async function deleteRow(controlPlane: ControlPlane, ref: string, schema: string, name: string, key: unknown): Promise<{ ref: string; schema: string; table: string; deleted: number }> {
  await writingRow(controlPlane, ref, schema, name, async (client, located) => {
    const where = await primaryKeyOf(client, located, key)
    return {
      values: {},
      run: async () => {
        if ((await db.deleteRow(client, schema, name, where)) === 0) throw new BaseplaneError('row_not_found', `No row of "${name}" has that primary key`, 404)
      },
    }
  })
  return { ref, schema, table: name, deleted: 1 }
}

// --- definitions -------------------------------------------------------

async function enumsOf(client: pg.ClientBase, project: ProjectRecord): Promise<db.EnumRow[]> {
  const editable = (await db.schemas(client)).filter((s) => !isHidden(s.name) && !READ_ONLY_SCHEMAS.includes(s.name) && s.owner === project.dbOwnerRole)
  return db.enums(client, editable.map((s) => s.name))
}

interface ReferenceInput {
  schema?: unknown
  table?: unknown
  column?: unknown
  on_delete?: unknown
  on_update?: unknown
}

function columnSpec(value: unknown, field: string, enums: readonly db.EnumRow[], checks: Checks): { column: db.ColumnSpec; primaryKey: boolean; references?: ReferenceInput } | undefined {
  return checks.check(() => {
    const input = objectOf(value, field)
    const name = checks.check(() => identifier(input.name, `${field}.name`))
    const type = checks.check(() => columnType(input.type, `${field}.type`, enums))
    const identity = checks.check(() => booleanOf(input.identity, `${field}.identity`, false)) ?? false
    if (identity && type && (!type.builtin || !INTEGER_TYPES.has(type.builtin) || type.array)) {
      checks.refuse(platformErrors.invalidArgument(`${field}.identity: only int2, int4 and int8 columns may be an identity`, `${field}.identity`))
    }
    const primaryKey = checks.check(() => booleanOf(input.primary_key, `${field}.primary_key`, false)) ?? false
    const nullable = checks.check(() => booleanOf(input.nullable, `${field}.nullable`, !primaryKey)) ?? true
    const unique = checks.check(() => booleanOf(input.unique, `${field}.unique`, false)) ?? false
    const dflt = checks.check(() => defaultOf(input.default, `${field}.default`))
    if (identity && dflt !== undefined) checks.refuse(platformErrors.invalidArgument(`${field}.default: an identity column numbers itself and takes no default`, `${field}.default`))
    const references = input.references === undefined || input.references === null || input.references === '' ? undefined : (checks.check(() => objectOf(input.references, `${field}.references`)) as ReferenceInput | undefined)
    if (name === undefined || type === undefined) return undefined
    return { column: { name, type, nullable, default: dflt, identity, unique }, primaryKey, references }
  })
}

async function foreignKeySpec(client: pg.ClientBase, project: ProjectRecord, columns: string[], references: ReferenceInput & { columns?: unknown }, field: string, name?: string): Promise<db.ForeignKeySpec> {
  const schema = references.schema === undefined || references.schema === '' ? 'public' : identifier(references.schema, `${field}.schema`)
  const table = identifier(references.table, `${field}.table`)
  const refColumns = references.columns !== undefined ? arrayOf(references.columns, `${field}.columns`).map((c, i) => identifier(c, `${field}.columns.${i}`)) : [identifier(references.column, `${field}.column`)]
  if (refColumns.length !== columns.length) throw platformErrors.invalidArgument(`${field} must name as many columns as the key has (${columns.length})`, field)
  if ((await schemaEditable(client, project, schema)) === undefined || !(await db.table(client, schema, table))) {
    throw platformErrors.invalidArgument(`${field}: no table "${table}" in schema "${schema}" to reference`, field)
  }
  return { name, columns, refSchema: schema, refTable: table, refColumns, onDelete: actionOf(references.on_delete, `${field}.on_delete`), onUpdate: actionOf(references.on_update, `${field}.on_update`) }
}

export interface CreateTableInput {
  schema?: unknown
  name?: unknown
  columns?: unknown
  /** Row-level security on the new table: on unless false, as Supabase's dashboard makes tables. */
  rls?: unknown
}

/** A table made in one transaction: its columns, primary key, foreign keys and row-level security; every refusal names its field. */
export async function createTable(controlPlane: ControlPlane, ref: string, input: CreateTableInput): Promise<TableView> {
  return changing(controlPlane, ref, async (client, project) => {
    const checks = new Checks()
    const schema = checks.check(() => identifier(input.schema ?? 'public', 'schema'))
    const name = checks.check(() => identifier(input.name, 'name'))
    const rls = checks.check(() => booleanOf(input.rls, 'rls', true)) ?? true
    const editable = schema === undefined ? undefined : await schemaEditable(client, project, schema)
    if (schema !== undefined && editable !== true) {
      checks.refuse(platformErrors.invalidArgument(editable === false ? `Schema "${schema}" is the platform's: tables are made in public or a schema of the project's own` : `No schema "${schema}"`, 'schema'))
    }
    const enums = await enumsOf(client, project)
    const list = checks.check(() => arrayOf(input.columns, 'columns')) ?? []
    if (input.columns !== undefined && list.length === 0) checks.refuse(platformErrors.invalidArgument('columns: a table needs at least one column', 'columns'))
    const specs = list.map((value, i) => columnSpec(value, `columns.${i}`, enums, checks))
    const seen = new Set<string>()
    specs.forEach((spec, i) => {
      if (spec && seen.has(spec.column.name)) checks.refuse(platformErrors.invalidArgument(`columns.${i}.name: "${spec.column.name}" is named twice`, `columns.${i}.name`))
      if (spec) seen.add(spec.column.name)
    })
    checks.settle()
    const foreignKeys: db.ForeignKeySpec[] = []
    for (const [i, spec] of specs.entries()) {
      if (spec?.references) {
        const fk = await foreignKeySpec(client, project, [spec.column.name], spec.references, `columns.${i}.references`).catch((error: unknown) => {
          checks.refuse(error as BaseplaneError)
          return undefined
        })
        if (fk) foreignKeys.push(fk)
      }
    }
    checks.settle()
    const columns = specs.map((s) => s!.column)
    await db.createTable(client, { schema: schema!, name: name!, columns, primaryKey: specs.filter((s) => s!.primaryKey).map((s) => s!.column.name), foreignKeys, rls })
    return tableView(client, ref, await locate(client, project, schema!, name!))
  })
}

export interface AlterTableInput {
  actions?: unknown
}

/**
 * A table changed by a list of actions, all in one transaction (every one or
 * none): `add_column {column}`, `drop_column {name}`, `rename_column {name,
 * to}`, `set_type {name, type}`, `set_default {name, default}` (null drops
 * it), `set_nullable {name, nullable}`, `add_foreign_key {columns,
 * references: {schema, table, columns, on_delete}, name?}`,
 * `drop_constraint {name}` (a foreign key, unique or check), `rename_table {to}`.
 */
export async function alterTable(controlPlane: ControlPlane, ref: string, schema: string, name: string, input: AlterTableInput): Promise<TableView> {
  return changing(controlPlane, ref, async (client, project) => {
    const located = await locate(client, project, schema, name)
    mustEdit(located)
    const enums = await enumsOf(client, project)
    const list = arrayOf(input.actions, 'actions')
    if (list.length === 0) throw platformErrors.invalidArgument('actions: nothing to change', 'actions')
    const checks = new Checks()
    const actions: db.AlterAction[] = []
    // Later actions name columns as the earlier ones left them (a column renamed, then retyped).
    const columns = [...located.columns]
    const becomes = { ...located, columns }
    for (const [i, value] of list.entries()) {
      const field = `actions.${i}`
      const action = checks.check(() => objectOf(value, field))
      if (!action) continue
      const existing = (key: string) => checks.check(() => columnOf(becomes, action[key], `${field}.${key}`).name)
      switch (action.action) {
        case 'add_column': {
          const spec = columnSpec(action.column, `${field}.column`, enums, checks)
          if (spec?.primaryKey) checks.refuse(platformErrors.invalidArgument(`${field}.column.primary_key: a primary key is set when the table is made`, `${field}.column.primary_key`))
          if (spec) actions.push({ action: 'add_column', column: spec.column })
          if (spec) columns.push({ name: spec.column.name, type: '', typeName: '', typeSchema: '', nullable: true, default: null, identity: '', generated: '' })
          if (spec?.references) {
            const fk = await foreignKeySpec(client, project, [spec.column.name], spec.references, `${field}.column.references`).catch((error: unknown) => void checks.refuse(error as BaseplaneError))
            if (fk) actions.push({ action: 'add_foreign_key', foreignKey: fk })
          }
          break
        }
        case 'drop_column': {
          const column = existing('name')
          if (column !== undefined) actions.push({ action: 'drop_column', name: column })
          if (column !== undefined) columns.splice(columns.findIndex((c) => c.name === column), 1)
          break
        }
        case 'rename_column': {
          const column = existing('name')
          const to = checks.check(() => identifier(action.to, `${field}.to`))
          if (column !== undefined && to !== undefined) {
            actions.push({ action: 'rename_column', name: column, to })
            const at = columns.findIndex((c) => c.name === column)
            columns[at] = { ...columns[at]!, name: to }
          }
          break
        }
        case 'set_type': {
          const column = existing('name')
          const type = checks.check(() => columnType(action.type, `${field}.type`, enums))
          if (column !== undefined && type !== undefined) actions.push({ action: 'set_type', name: column, type })
          break
        }
        case 'set_default': {
          const column = existing('name')
          const dflt = checks.check(() => defaultOf(action.default, `${field}.default`))
          if (column !== undefined) actions.push({ action: 'set_default', name: column, default: dflt ?? null })
          break
        }
        case 'set_nullable': {
          const column = existing('name')
          const nullable = checks.check(() => booleanOf(action.nullable, `${field}.nullable`, true))
          if (column !== undefined && nullable !== undefined) actions.push({ action: 'set_nullable', name: column, nullable })
          break
        }
        case 'add_foreign_key': {
          const keyColumns = checks.check(() => arrayOf(action.columns, `${field}.columns`).map((c, j) => columnOf(becomes, c, `${field}.columns.${j}`).name))
          const fkName = action.name === undefined || action.name === '' ? undefined : checks.check(() => identifier(action.name, `${field}.name`))
          const references = checks.check(() => objectOf(action.references, `${field}.references`))
          if (keyColumns && references) {
            const fk = await foreignKeySpec(client, project, keyColumns, references, `${field}.references`, fkName).catch((error: unknown) => void checks.refuse(error as BaseplaneError))
            if (fk) actions.push({ action: 'add_foreign_key', foreignKey: fk })
          }
          break
        }
        case 'drop_constraint': {
          const constraint = checks.check(() => identifier(action.name, `${field}.name`))
          if (constraint !== undefined) actions.push({ action: 'drop_constraint', name: constraint })
          break
        }
        case 'rename_table': {
          const to = checks.check(() => identifier(action.to, `${field}.to`))
          if (to !== undefined) actions.push({ action: 'rename_table', to })
          break
        }
        default:
          checks.refuse(platformErrors.invalidArgument(`${field}.action must be one of add_column, drop_column, rename_column, set_type, set_default, set_nullable, add_foreign_key, drop_constraint, rename_table`, `${field}.action`))
      }
    }
    checks.settle()
    await db.alterTable(client, schema, name, actions)
    const renamed = [...actions].reverse().find((a) => a.action === 'rename_table')
    return tableView(client, ref, await locate(client, project, schema, renamed?.action === 'rename_table' ? renamed.to : name))
  })
}

/** A table dropped; `confirm` must repeat its name (a dependent view or foreign key refuses it, 409 has_dependents). */
export async function dropTable(controlPlane: ControlPlane, ref: string, schema: string, name: string, confirm: unknown): Promise<{ ref: string; schema: string; table: string; dropped: true }> {
  if (confirm !== name) throw new BaseplaneError('confirmation_required', `Type the table's name, "${name}", to drop it and every row in it`, 409).concerning('confirm')
  await changing(controlPlane, ref, async (client, project) => {
    mustEdit(await locate(client, project, schema, name))
    await db.dropTable(client, schema, name)
  })
  return { ref, schema, table: name, dropped: true }
}

/** Row-level security on or off (and forced on the owner too, or not). */
export async function setRowLevelSecurity(controlPlane: ControlPlane, ref: string, schema: string, name: string, input: { enabled?: unknown; forced?: unknown }): Promise<TableView> {
  const enabled = booleanOf(input.enabled, 'enabled', true)
  const forced = booleanOf(input.forced, 'forced', false)
  return changing(controlPlane, ref, async (client, project) => {
    const located = await locate(client, project, schema, name)
    mustEdit(located)
    await db.setRowLevelSecurity(client, schema, name, enabled, forced)
    return tableView(client, ref, await locate(client, project, schema, name))
  })
}

export interface PolicyInput {
  template?: unknown
  /** The column holding the user's id, for the templates of a user's own rows. */
  column?: unknown
  /** The policy's name; the template's label when absent. */
  name?: unknown
}

/** A policy from one of POLICY_TEMPLATES; the own-rows ones compare `(select auth.uid())` with a uuid column. */
export async function addPolicy(controlPlane: ControlPlane, ref: string, schema: string, name: string, input: PolicyInput): Promise<TableView> {
  const template = typeof input.template === 'string' ? POLICY_TEMPLATES[input.template] : undefined
  if (!template) throw platformErrors.invalidArgument(`template must be one of ${Object.keys(POLICY_TEMPLATES).join(', ')}`, 'template')
  const policyName = input.name === undefined || input.name === '' ? template.label : identifier(input.name, 'name')
  return changing(
    controlPlane,
    ref,
    async (client, project) => {
      const located = await locate(client, project, schema, name)
      mustEdit(located)
      let expression = 'true'
      if (template.ownRows) {
        const column = columnOf(located, input.column, 'column')
        if (column.typeName !== 'uuid') throw platformErrors.invalidArgument(`column: "${column.name}" is ${column.type}; the user's id (auth.uid()) is a uuid`, 'column')
        expression = `(select auth.uid()) = ${db.quotedColumn(column.name)}`
      }
      const roles = template.roles.filter((role) => POLICY_ROLES.includes(role))
      await db.createPolicy(client, schema, name, { name: policyName, command: template.command, roles, using: template.using ? expression : undefined, withCheck: template.withCheck ? expression : undefined })
      return tableView(client, ref, await locate(client, project, schema, name))
    },
    'name',
  )
}

export async function dropPolicy(controlPlane: ControlPlane, ref: string, schema: string, name: string, policy: string): Promise<TableView> {
  return changing(controlPlane, ref, async (client, project) => {
    const located = await locate(client, project, schema, name)
    mustEdit(located)
    if (!(await db.policies(client, schema, name)).some((p) => p.name === policy)) throw new BaseplaneError('policy_not_found', `Table "${name}" has no policy "${policy}"`, 404)
    await db.dropPolicy(client, schema, name, policy)
    return tableView(client, ref, await locate(client, project, schema, name))
  })
}
