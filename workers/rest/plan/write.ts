// The data-modifying statements of POST, PATCH, DELETE and PUT
// (shared/reference/postgrest.md sections 1 and 3), each the CTE
// `pgrst_source` the answer row reads (plan.ts). The payload is one `$n`
// JSON parameter read by json_populate_recordset, so PostgreSQL converts
// each value to its column's type; only the columns named (`columns=`, or
// the payload's keys) are written, the others take their defaults. CSV and
// form bodies arrive decoded into the same rows (bodies.ts), their values
// text for PostgreSQL to read as each column's type.
import type { CatalogTable } from '../../../lib/pg-catalog/catalog.ts'
import { ident, qualified, quoteText } from '../../../lib/pg-catalog/quote.ts'
import { restErrors } from '../errors.ts'
import type { Condition } from '../request/filters.ts'
import type { RestCall } from './plan.ts'
import { Params, whereSql } from './sql.ts'

export interface WriteParts {
  table: CatalogTable
  call: RestCall
  params: Params
}

export interface WriteCte {
  sql: string
  /** pgrst_source has `pgrst_inserted` (an upsert whose answer says inserted or updated). */
  upsertFlag: boolean
  /**
   * The one data-modifying statement, returning nothing: where the answer
   * needs only how many rows it wrote, PostgreSQL's command tag says that,
   * and the CTE, its rows and the count over them are PostgreSQL's work for nothing.
   */
  bare?: string
}

type Row = Record<string, unknown>

function isRow(value: unknown): value is Row {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** The body's rows: a CSV or form body as decoded (bodies.ts), else the JSON, an object or an array of objects (PGRST102 otherwise). */
function payload(call: RestCall): Row[] | Row {
  if (call.payload !== undefined) return call.payload
  const body = call.body
  let value: unknown
  try {
    value = body.trim() === '' ? {} : JSON.parse(body)
  } catch {
    throw restErrors.invalidBody('Empty or invalid json')
  }
  if (isRow(value)) return value
  if (Array.isArray(value) && value.every(isRow)) return value
  throw restErrors.invalidBody('Empty or invalid json')
}

function sameKeys(a: Row, b: Row): boolean {
  const ka = Object.keys(a)
  const kb = Object.keys(b)
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k))
}

/** The columns written: `columns=`, else the payload's keys (all rows alike, unless `columns=` says which). */
function columnsOf(parts: WriteParts, rows: Row[]): string[] {
  const { table, call } = parts
  let columns = call.query.columns
  if (columns === undefined) {
    const first = rows[0] ?? {}
    if (!rows.every((row) => sameKeys(row, first))) throw restErrors.invalidBody('All object keys must match')
    columns = Object.keys(first)
  }
  const known = new Set(table.columns.map((c) => c.name))
  for (const column of columns) if (!known.has(column)) throw restErrors.noColumn(column, table.name)
  return [...new Set(columns)]
}

function returning(parts: WriteParts, upsertFlag: boolean): string {
  const ret = parts.call.prefs.return
  const rows = ret === 'representation' || ret === 'headers-only' ? `${ident(parts.table.name)}.*` : '1'
  return upsertFlag ? `${rows}, (${ident(parts.table.name)}.xmax::text = '0') as pgrst_inserted` : rows
}

/** The INSERT of `rows` (one `json` parameter, added once) `returning ret`, and the same returning nothing. */
function insertInto(parts: WriteParts, columns: string[], rows: Row[], conflict: string, ret: string): { sql: string; bare: string } {
  const target = qualified(parts.table.schema, parts.table.name)
  const json = parts.params.add(JSON.stringify(rows), 'json')
  const list = columns.map(ident).join(', ')
  const values = columns.map((c) => `pgrst_body.${ident(c)}`).join(', ')
  const bare = `insert into ${target}${columns.length > 0 ? ` (${list})` : ''} select ${values} from pg_catalog.json_populate_recordset(null::${target}, ${json}) as pgrst_body${conflict}`
  return { sql: `${bare} returning ${ret}`, bare }
}

function conflictClause(parts: WriteParts, columns: string[], resolution: string | undefined, target: readonly string[] | undefined): string {
  if (resolution === undefined || target === undefined || target.length === 0) return ''
  const on = ` on conflict (${target.map(ident).join(', ')})`
  if (resolution === 'ignore-duplicates' || columns.length === 0) return `${on} do nothing`
  return `${on} do update set ${columns.map((c) => `${ident(c)} = excluded.${ident(c)}`).join(', ')}`
}

const isTable = (table: CatalogTable) => table.kind === 'r' || table.kind === 'p'

/** POST: insert one or many rows; an upsert with `resolution` (on the primary key, or `on_conflict=`). */
export function insertSql(parts: WriteParts): WriteCte | undefined {
  const body = payload(parts.call)
  const rows = Array.isArray(body) ? body : [body]
  const columns = columnsOf(parts, rows)
  if (rows.length === 0) return undefined
  const { prefs, query } = parts.call
  const target = query.onConflict ?? parts.table.primaryKey ?? undefined
  const conflict = conflictClause(parts, columns, prefs.resolution, target)
  // Whether each row was inserted or updated (its xmax), so a merge that only updated answers 200, whatever it returns:
  // ON CONFLICT DO UPDATE needs SELECT on the table already, so reading xmax asks no more of the caller.
  const upsertFlag = prefs.resolution === 'merge-duplicates' && conflict !== '' && isTable(parts.table)
  const ret = returning(parts, upsertFlag)
  if (prefs.missing !== 'default' || query.columns === undefined) {
    const insert = insertInto(parts, columns, rows, conflict, ret)
    return { sql: `with pgrst_source as (${insert.sql})`, upsertFlag, bare: insert.bare }
  }
  // missing=default with columns=: as PostgREST's `fromJsonBodyF`, each row is every listed column's DEFAULT (evaluated
  // for that row: a sequence advances once per row, whatever it carries) overlaid by the row, in one insert, so the rows
  // keep their order and an upsert sets every listed column from the incoming row.
  const insert = insertWithDefaults(parts, columns, rows, conflict, ret)
  return { sql: `with pgrst_source as (${insert.sql})`, upsertFlag, bare: insert.bare }
}

/** A column's DEFAULT as an expression: its own, or an identity column's next value; none for a generated column. */
function defaultOf(table: CatalogTable, column: CatalogTable['columns'][number]): string | undefined {
  if (column.generated) return undefined
  if (column.defaultExpr !== null) return column.defaultExpr
  if (!column.serial) return undefined
  return `pg_catalog.nextval(pg_catalog.pg_get_serial_sequence(${quoteText(qualified(table.schema, table.name))}, ${quoteText(column.name)}))`
}

/** The INSERT of `rows`, each read from `jsonb_build_object(<listed columns' defaults>) || row`. */
function insertWithDefaults(parts: WriteParts, columns: string[], rows: Row[], conflict: string, ret: string): { sql: string; bare: string } {
  const table = parts.table
  const target = qualified(table.schema, table.name)
  const byName = new Map(table.columns.map((c) => [c.name, c]))
  const defaults = columns.flatMap((name) => {
    const expr = defaultOf(table, byName.get(name)!)
    return expr === undefined ? [] : [`${quoteText(name)}, ${expr}`]
  })
  const json = parts.params.add(JSON.stringify(rows), 'jsonb')
  const list = columns.map(ident).join(', ')
  const values = columns.map((c) => `pgrst_body.${ident(c)}`).join(', ')
  const bare =
    `insert into ${target}${columns.length > 0 ? ` (${list})` : ''} select ${values} from pg_catalog.jsonb_array_elements(${json}) with ordinality as pgrst_row(value, n)` +
    ` cross join lateral pg_catalog.jsonb_populate_record(null::${target}, pg_catalog.jsonb_build_object(${defaults.join(', ')}) || pgrst_row.value) as pgrst_body` +
    ` order by pgrst_row.n${conflict}`
  return { sql: `${bare} returning ${ret}`, bare }
}

function whereOf(parts: WriteParts): string {
  const table = parts.table
  const types = new Map(table.columns.map((c) => [c.name, c.typeName]))
  return whereSql(parts.call.query.filters, { alias: table.name, params: parts.params, columnType: (n) => types.get(n) })
}

/** PATCH: the payload's columns set on every row the filters keep; `{}` changes nothing. */
export function updateSql(parts: WriteParts): WriteCte | undefined {
  const decoded = payload(parts.call)
  // A CSV body is rows: PATCH sets its first, as PostgREST's update reads one row of the payload (none: no change).
  if (Array.isArray(decoded) && parts.call.bodyMedia !== 'csv') throw restErrors.invalidBody('Empty or invalid json')
  const body: Row = Array.isArray(decoded) ? decoded[0] ?? {} : decoded
  const columns = columnsOf(parts, [body])
  if (columns.length === 0) return undefined
  const target = qualified(parts.table.schema, parts.table.name)
  const json = parts.params.add(JSON.stringify(body), 'json')
  const missingDefault = parts.call.prefs.missing === 'default'
  const set = columns.map((c) => `${ident(c)} = ${missingDefault && !Object.hasOwn(body, c) ? 'default' : `pgrst_body.${ident(c)}`}`).join(', ')
  const where = whereOf(parts)
  const bare = `update ${target} set ${set} from pg_catalog.json_populate_record(null::${target}, ${json}) as pgrst_body where ${where}`
  return { sql: `with pgrst_source as (${bare} returning ${returning(parts, false)})`, upsertFlag: false, bare }
}

/** DELETE: every row the filters keep. */
export function deleteSql(parts: WriteParts): WriteCte {
  const target = qualified(parts.table.schema, parts.table.name)
  const bare = `delete from ${target} where ${whereOf(parts)}`
  return { sql: `with pgrst_source as (${bare} returning ${returning(parts, false)})`, upsertFlag: false, bare }
}

/** PUT: one row, named by `eq` on every primary key column, inserted or replaced. */
export function putSql(parts: WriteParts): WriteCte {
  const { table, call } = parts
  if (call.query.limit !== undefined || call.query.offset !== undefined) throw restErrors.putLimit()
  const pk = table.primaryKey ?? []
  const filters = call.query.filters
  const eqs = filters.filter((f): f is Condition => f.kind === 'condition' && f.op === 'eq' && !f.negated && f.field.path.length === 0 && f.quantifier === undefined && f.value.kind === 'text')
  const named = new Map(eqs.map((f) => [f.field.name, (f.value as { text: string }).text]))
  if (pk.length === 0 || eqs.length !== filters.length || named.size !== pk.length || !pk.every((c) => named.has(c))) throw restErrors.putFilters()
  const body = payload(call)
  const row = Array.isArray(body) ? body[0] ?? {} : body
  for (const column of pk) {
    const value = row[column]
    if (value === undefined || value === null || String(value) !== named.get(column)) throw restErrors.putMismatch()
  }
  const columns = columnsOf(parts, [row])
  const upsertFlag = call.prefs.return === 'representation' && isTable(table)
  const conflict = ` on conflict (${pk.map(ident).join(', ')}) do update set ${columns.map((c) => `${ident(c)} = excluded.${ident(c)}`).join(', ')}`
  const insert = insertInto(parts, columns, [row], conflict, returning(parts, upsertFlag))
  return { sql: `with pgrst_source as (${insert.sql})`, upsertFlag, bare: insert.bare }
}
