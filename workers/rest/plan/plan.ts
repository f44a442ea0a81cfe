// A data API request made into one SQL statement (its JSON built by
// PostgreSQL, as GraphQL's is) and what its answer needs: the statement of a
// read (table, view or set-returning function) or a write (one
// data-modifying CTE, `pgrst_source` as in PostgREST) with the count, the
// page and the body in the same row. Needs the schema (model.ts) only for
// what PostgREST's schema cache decides: which table or function, primary
// keys, payload columns, argument types.
import type { CatalogFunction, CatalogTable } from '../../../lib/pg-catalog/catalog.ts'
import { ident, qualified } from '../../../lib/pg-catalog/quote.ts'
import type { BodyMedia, BodyRow } from '../request/bodies.ts'
import { restErrors } from '../errors.ts'
import type { Condition, Logic } from '../request/filters.ts'
import { closest } from '../schema/closest.ts'
import { tableByType, type RestModel } from '../schema/model.ts'
import { parseFilters, type Media, type ParsedQuery, type Preferences } from '../request/request.ts'
import { resolveFunction, type FunctionCall } from './rpc.ts'
import { outputNamesOf, relationSql } from './embed.ts'
import { RESPONSE_COLUMNS } from '../answer/response-settings.ts'
import { Params } from './sql.ts'
import type { ResultRow } from '../answer/respond.ts'
import { insertSql, updateSql, deleteSql, putSql, type WriteCte, type WriteParts } from './write.ts'

export interface RestCall {
  method: string
  /** 'relation' or 'rpc' */
  target: 'relation' | 'rpc'
  name: string
  schema: string
  query: ParsedQuery
  prefs: Preferences
  media: Media
  stripNulls: boolean
  /** A Range header's window (GET only). */
  range?: { offset: number; limit?: number }
  /** The body as sent, for writes and RPC POST: JSON text, or a function's one unnamed argument (text, xml, bytes). */
  body: string
  /** What the body is, by its Content-Type (bodies.ts); JSON when there is none. */
  bodyMedia: BodyMedia
  /** A CSV or form body decoded into the rows a JSON body would give (values as text), planned as JSON is. */
  payload?: BodyRow[] | BodyRow
  maxRows: number
  /** Aggregates in `select=` are allowed (BASEPLANE_REST_AGGREGATES; else PGRST123). */
  aggregates: boolean
  /** The schema the reply names in `Content-Profile`, when it names one (profiles.ts). */
  contentProfile?: string
}

export type AnswerKind = 'read' | 'insert' | 'update' | 'delete' | 'put' | 'rpc'

export interface Planned {
  /**
   * The statement; `meta` goes first in its last select list (empty, or the
   * schema key's columns and a comma). A read's and a function's end with
   * the response settings (response-settings.ts); a write's do not.
   */
  sql: (meta: string) => string
  params: Array<string | null>
  /** A write (or a volatile function): an explicit transaction, committed once the answer is checked. */
  write: boolean
  kind: AnswerKind
  /** The count statement to EXPLAIN for `count=planned` (and `estimated` past max rows). */
  countSql?: { sql: string; params: Array<string | null> }
  offset: number
  /** RPC: a bare JSON value, no result at all, or one object (a composite, not a set). */
  result?: 'scalar' | 'void' | 'object'
  csvHeader: string[]
  /** headers-only: the table (for Location) and its primary key. */
  location?: { table: string; pk: string[] }
  /** No statement to run: an empty write answers at once. */
  empty?: boolean
  /**
   * A write whose answer is only how many rows it wrote (no representation,
   * no Location, no upsert flag): the statement alone, to run where no
   * schema key is read with it (`meta` empty), its answer row made from the
   * command's row count.
   */
  bare?: { sql: string; row: (affected: number) => ResultRow }
}

const ROW = 'pgrst_t'

/** An answer with no rows to embed in (a scalar or void function): an embed or an embed's parameter is a relationship the cache does not have. */
function refuseEmbeds(call: RestCall, origin: string): void {
  for (const item of call.query.select) {
    if (item.kind === 'embed') throw restErrors.noRelationship(origin, item.name, call.schema, item.hints[0] ?? null, null)
    if (item.kind === 'column' && item.aggregate !== undefined && !call.aggregates) throw restErrors.aggregates()
  }
  const first = call.query.embedParams[0]
  if (first !== undefined) throw restErrors.notEmbedded(first.path[0]!)
  const related = call.query.order.find((term) => term.relation !== undefined)
  if (related !== undefined) throw restErrors.notEmbedded(related.relation!)
}

export function findTable(model: RestModel, schema: string, name: string): CatalogTable {
  const table = model.tables.get(`${schema}\0${name}`)
  if (table) return table
  const names = [...model.tables.values()].filter((t) => t.schema === schema).map((t) => t.name)
  const near = closest(name, names)
  throw restErrors.noTable(`${schema}.${name}`, near ? `Perhaps you meant the table '${schema}.${near}'` : null)
}

function bodyExpression(call: RestCall, row: string): string {
  if (call.media === 'csv') return `coalesce(pg_catalog.string_agg(pg_catalog.substr(${row}::text, 2, pg_catalog.length(${row}::text) - 2), chr(10)), '')`
  const agg = `pg_catalog.json_agg(${row})`
  return call.stripNulls ? `coalesce(pg_catalog.json_strip_nulls(${agg}), '[]')::text` : `coalesce(${agg}, '[]')::text`
}

/** limit and offset: `limit=`, a Range header (GET), and max rows, intersected. */
function window(call: RestCall): { limit: number; offset: number } {
  let offset = call.query.offset ?? 0
  let limit = call.query.limit ?? Infinity
  if (call.range) {
    offset += call.range.offset
    if (call.range.limit !== undefined) limit = Math.min(limit, call.range.limit)
  }
  return { limit: Math.min(limit, call.maxRows), offset }
}

interface ReadSource {
  /** FROM items, the relation named `alias`. */
  from: string
  alias: string
  /** The table of its rows (for embedding), and its name in errors. */
  table: CatalogTable | undefined
  origin: string
  columns: string[]
  columnType: (name: string) => string | undefined
  /** Rows of a function returning a scalar set (`pgrst_scalar`). */
  scalarSet?: boolean
}

function readStatement(model: RestModel, call: RestCall, source: ReadSource, params: Params, kind: AnswerKind, write: boolean): Planned {
  const query = call.query
  if (source.scalarSet) refuseEmbeds(call, source.origin)
  const rel = relationSql({
    model,
    schema: call.schema,
    origin: { name: source.origin, table: source.table },
    alias: source.alias,
    items: query.select,
    star: `${ident(source.alias)}.*`,
    filters: query.filters,
    order: query.order,
    embedParams: query.embedParams,
    params,
    columnType: source.columnType,
    aggregates: call.aggregates,
  })
  const { where, whereParams } = rel
  const { limit, offset } = window(call)
  const list = source.scalarSet ? `${ident(source.alias)}.pgrst_scalar` : rel.list
  const limitSql = Number.isFinite(limit) ? ` limit ${params.rowCount(limit)}` : ''
  const offsetSql = offset > 0 ? ` offset ${params.rowCount(offset)}` : ''
  const page = `select ${list} from ${source.from}${rel.joins} where ${where}${rel.groupBy}${rel.order}${limitSql}${offsetSql}`
  // Counts join only the embeds that filter the parents (`!inner`, `rel=not.is.null`).
  const counted = `${source.from}${rel.filteringJoins}`
  const count = call.prefs.count
  let total = 'null::int8'
  let countSql: Planned['countSql']
  if (count === 'exact') total = `(select pg_catalog.count(*) from ${counted} where ${where})`
  else if (count === 'estimated') total = `(select pg_catalog.count(*) from (select 1 from ${counted} where ${where} limit ${call.maxRows + 1}) pgrst_c)`
  if (count === 'planned' || count === 'estimated') countSql = { sql: `select 1 from ${counted} where ${where}`, params: params.values.slice(0, whereParams) }
  const body = source.scalarSet ? `coalesce(pg_catalog.json_agg(${ROW}.pgrst_scalar), '[]')::text` : bodyExpression(call, ROW)
  const values = params.values
  return {
    sql: (meta) => `select ${meta}pg_catalog.count(*)::int8 as rows, ${body} as body, ${total} as total, ${RESPONSE_COLUMNS} from (${page}) ${ROW}`,
    params: values,
    write,
    kind,
    countSql,
    offset,
    csvHeader: outputNamesOf(query.select, source.columns),
  }
}

function tableSource(table: CatalogTable): ReadSource {
  const types = new Map(table.columns.map((c) => [c.name, c.typeName]))
  return { from: qualified(table.schema, table.name), alias: table.name, table, origin: table.name, columns: table.columns.map((c) => c.name), columnType: (n) => types.get(n) }
}

export function plan(model: RestModel, call: RestCall): Planned {
  if (call.target === 'rpc') return planRpc(model, call)
  const table = findTable(model, call.schema, call.name)
  const params = new Params()
  if (call.method === 'GET' || call.method === 'HEAD') {
    parseFilters(call.query)
    return readStatement(model, call, tableSource(table), params, 'read', false)
  }
  parseFilters(call.query)
  const parts: WriteParts = { table, call, params }
  switch (call.method) {
    case 'POST':
      return writeStatement(model, call, table, insertSql(parts), params, 'insert')
    case 'PATCH':
      return writeStatement(model, call, table, updateSql(parts), params, 'update')
    case 'DELETE':
      return writeStatement(model, call, table, deleteSql(parts), params, 'delete')
    case 'PUT':
      return writeStatement(model, call, table, putSql(parts), params, 'put')
    default:
      throw restErrors.method(call.method)
  }
}

/** Wraps a data-modifying statement: its rows are `pgrst_source`; the answer row counts, shapes and locates them. */
function writeStatement(model: RestModel, call: RestCall, table: CatalogTable, cte: WriteCte | undefined, params: Params, kind: AnswerKind): Planned {
  const columns = table.columns.map((c) => c.name)
  const base: Omit<Planned, 'sql'> = { params: params.values, write: true, kind, offset: 0, csvHeader: outputNamesOf(call.query.select, columns) }
  // `*` of pgrst_source would include the upsert flag: the table's columns instead.
  const star = columns.map((c) => `pgrst_source.${ident(c)}`).join(', ')
  // The representation's embeds (resolved even when there is none, so a wrong one is refused alike).
  const rel = relationSql({
    model, schema: call.schema, origin: { name: table.name, table }, alias: 'pgrst_source', items: call.query.select, star,
    filters: [], order: [], embedParams: call.query.embedParams, params, columnType: () => undefined, aggregates: call.aggregates,
  })
  if (cte === undefined) return { ...base, sql: () => '', empty: true }
  const representation = call.prefs.return === 'representation'
  const body = representation ? `(select ${bodyExpression(call, ROW)} from (select ${rel.list} from pgrst_source${rel.joins}) ${ROW})` : 'null::text'
  const pk = table.primaryKey ?? []
  const locates = call.prefs.return === 'headers-only' && pk.length > 0
  const location = locates
    ? `(select pg_catalog.json_build_object(${pk.map((c) => `${quoteName(c)}, pgrst_source.${ident(c)}`).join(', ')})::text from pgrst_source limit 1)`
    : 'null::text'
  const inserted = cte.upsertFlag ? `pg_catalog.count(*) filter (where pgrst_source.pgrst_inserted)` : 'null::int8'
  const counted = call.prefs.count === 'exact' || call.prefs.count === 'estimated' || call.prefs.count === 'planned'
  const countOnly = cte.bare !== undefined && !representation && !locates && !cte.upsertFlag
  return {
    ...base,
    sql: (meta) =>
      `${cte.sql} select ${meta}pg_catalog.count(*)::int8 as rows, ${body} as body, ${counted ? 'pg_catalog.count(*)::int8' : 'null::int8'} as total, ${location} as location, ${inserted}::int8 as inserted from pgrst_source`,
    location: pk.length > 0 ? { table: table.name, pk } : undefined,
    bare: countOnly ? { sql: cte.bare!, row: (affected) => ({ rows: affected, body: null, total: counted ? affected : null, location: null, inserted: null }) } : undefined,
  }
}

function quoteName(name: string): string {
  return `'${name.replaceAll("'", "''")}'`
}

function planRpc(model: RestModel, call: RestCall): Planned {
  const params = new Params()
  const found: FunctionCall = resolveFunction(model, call, params)
  const fn: CatalogFunction = found.fn
  // A GET runs read-only (PostgREST: a writing function fails with 25006); a POST of a volatile function writes.
  const write = call.method === 'POST' && fn.volatility === 'v'
  const returnType = fn.returnType
  const alias = fn.name
  if (returnType.typeName === 'void') {
    refuseEmbeds(call, alias)
    return {
      // The count reads the result, so the call is never planned away.
      sql: (meta) => `select ${meta}pg_catalog.count(pgrst_call.pgrst_scalar)::int8 as rows, null::text as body, null::int8 as total, ${RESPONSE_COLUMNS} from (select ${found.call} as pgrst_scalar ${found.from}) pgrst_call`,
      params: params.values,
      write,
      kind: 'rpc',
      offset: 0,
      result: 'void',
      csvHeader: [],
    }
  }
  const composite = returnType.relid !== 0 || (returnType.typeName === 'record' && fn.args.some((a) => a.mode === 'o' || a.mode === 't' || a.mode === 'b'))
  if (!composite && !fn.returnsSet) {
    refuseEmbeds(call, alias)
    return {
      // One value is one row: counted, its total is 1 (PostgREST's `Content-Range: 0-0/1`).
      sql: (meta) => `select ${meta}1::int8 as rows, pg_catalog.to_json(pgrst_call.pgrst_scalar)::text as body, ${call.prefs.count === undefined ? 'null' : '1'}::int8 as total, ${RESPONSE_COLUMNS} from (select ${found.call} as pgrst_scalar ${found.from}) pgrst_call`,
      params: params.values,
      write,
      kind: 'rpc',
      offset: 0,
      result: 'scalar',
      csvHeader: [],
    }
  }
  const from = found.from === '' ? '' : `${found.from.replace(/^from /, '')} cross join lateral `
  if (!composite) {
    // A set of scalars: an array of values.
    const source: ReadSource = { from: `${from}${found.call} as ${ident(alias)}(pgrst_scalar)`, alias, table: undefined, origin: alias, columns: [], columnType: () => undefined, scalarSet: true }
    parseFilters(call.query, (key) => !found.argKeys.has(key))
    return readStatement(model, call, source, params, 'rpc', write)
  }
  const table = returnType.relid !== 0 ? tableByType(model, returnType.oid) : undefined
  const outs = fn.args.filter((a) => a.mode === 'o' || a.mode === 't' || a.mode === 'b').map((a) => a.name ?? '')
  const columns = table ? table.columns.map((c) => c.name) : outs
  const types = new Map(table ? table.columns.map((c) => [c.name, c.typeName]) : fn.args.map((a) => [a.name ?? '', a.typeName]))
  const source: ReadSource = { from: `${from}${found.call} as ${ident(alias)}`, alias, table, origin: table?.name ?? alias, columns, columnType: (n) => types.get(n) }
  parseFilters(call.query, (key) => !found.argKeys.has(key))
  const planned = readStatement(model, call, source, params, 'rpc', write)
  if (!fn.returnsSet) planned.result = 'object'
  return planned
}

export type { Condition, Logic }
