// SQL text of the data API's pieces, as PostgREST writes them: columns and
// JSON paths qualified by the relation's name (so PostgreSQL's own error
// names it: `column notes.foo does not exist`), filters with their values as
// `$n` parameters that PostgreSQL reads as the column's type, order terms.
// Every identifier goes through lib/pg-catalog/quote.ts; nothing from the
// request reaches the text unquoted except casts (checked: a type name) and
// integers.
import { ident, quoteText } from '../../../lib/pg-catalog/quote.ts'
import { restErrors } from '../errors.ts'
import type { Condition, Logic, OrderTerm } from '../request/filters.ts'
import type { Field, SelectItem } from '../request/select.ts'

/** The statement's parameters, as text (PostgreSQL reads each as the type its place asks for). */
export class Params {
  readonly values: Array<string | null> = []
  add(value: string | null, cast?: string): string {
    this.values.push(value)
    return `$${this.values.length}${cast ? `::${cast}` : ''}`
  }

  /**
   * A row count (`limit`, `offset`) written into the text. As a parameter it
   * would keep PostgreSQL from ever settling on the prepared statement's
   * generic plan (an unknown limit costs the plan a tenth of the table), so
   * every request would be planned again; page sizes are few, so the texts
   * (and prepared statements) they make are few. A count past what a number
   * holds exactly stays a parameter, for PostgreSQL to refuse.
   */
  rowCount(value: number): string {
    return Number.isSafeInteger(value) && value >= 0 ? String(value) : this.add(String(value), 'int8')
  }
}

export function fieldSql(alias: string, field: Field): string {
  let sql = `${ident(alias)}.${ident(field.name)}`
  for (const step of field.path) sql += step.arrow + (/^-?\d+$/.test(step.key) ? step.key : quoteText(step.key))
  return sql
}

/** The key a field has in the answer: the last JSON key, else the column's name. */
export function outputName(field: Field): string {
  return field.path.length > 0 ? field.path[field.path.length - 1]!.key : field.name
}

/**
 * One select list; `star` is what `*` stands for (`"t".*`, or the columns
 * listed); `embed` gives an embed's items (embed.ts). Aggregates are refused
 * by the planner first.
 */
export function selectListSql(
  alias: string,
  items: readonly SelectItem[],
  star: string,
  embed?: (item: SelectItem & { kind: 'embed' }) => string[],
  group?: (expr: string) => void,
): string {
  return items
    .flatMap((item) => {
      if (item.kind === 'star') {
        group?.(star)
        return [star]
      }
      if (item.kind !== 'column') {
        if (embed === undefined) throw new Error('embeds are planned by embed.ts')
        return embed(item)
      }
      if (item.aggregate !== undefined) return [aggregateSql(alias, item)]
      const field = fieldSql(alias, item.field)
      const expr = item.cast ? `(${field})::${item.cast}` : field
      group?.(expr)
      return [`${expr} as ${ident(item.alias ?? outputName(item.field))}`]
    })
    .join(', ')
}

/** `count()`, `col.sum()`, `col::numeric.avg()::int` ...: the key is the aggregate's name unless aliased (PostgREST). */
function aggregateSql(alias: string, item: SelectItem & { kind: 'column' }): string {
  const fn = item.aggregate!
  let expr: string
  if (item.field.name === '*') expr = 'pg_catalog.count(*)'
  else {
    const field = fieldSql(alias, item.field)
    expr = `pg_catalog.${fn}(${item.cast ? `(${field})::${item.cast}` : field})`
  }
  if (item.aggregateCast) expr = `(${expr})::${item.aggregateCast}`
  return `${expr} as ${ident(item.alias ?? fn)}`
}

/** The answer's keys in order (for the CSV header), `starColumns` standing for `*`. */
export function outputNames(items: readonly SelectItem[], starColumns: readonly string[]): string[] {
  return items.flatMap((item) => (item.kind === 'star' ? starColumns : item.kind === 'column' ? [item.alias ?? outputName(item.field)] : []))
}

const COMPARISON: Record<string, string> = {
  eq: '=', neq: '<>', gt: '>', gte: '>=', lt: '<', lte: '<=', like: 'like', ilike: 'ilike', match: '~', imatch: '~*',
  cs: '@>', cd: '<@', ov: '&&', sl: '<<', sr: '>>', nxr: '&<', nxl: '&>', adj: '-|-', isdistinct: 'is distinct from',
}

const TSQUERY: Record<string, string> = { fts: 'to_tsquery', plfts: 'plainto_tsquery', phfts: 'phraseto_tsquery', wfts: 'websearch_to_tsquery' }

const IS_SQL: Record<string, string> = { null: 'is null', not_null: 'is not null', true: 'is true', false: 'is false', unknown: 'is unknown' }

/** `*` in like patterns is `%` (PostgREST's, so URLs need no percent signs). */
const likePattern = (text: string) => text.replaceAll('*', '%')

/** A PostgreSQL array literal of texts (`in` lists). */
export function arrayLiteral(values: readonly string[]): string {
  return `{${values.map((v) => `"${v.replace(/[\\"]/g, (ch) => `\\${ch}`)}"`).join(',')}}`
}

export interface FilterContext {
  alias: string
  params: Params
  /** The column's type name when known (full-text search wraps other types in to_tsvector, as PostgREST 13). */
  columnType: (name: string) => string | undefined
  /** An embed of the select named by a filter (`rel=not.is.null`): what is null when it found no rows, and its name. */
  embed?: (name: string) => { marker: string; name: string } | undefined
}

export function conditionSql(c: Condition, ctx: FilterContext): string {
  const embed = c.field.path.length === 0 ? ctx.embed?.(c.field.name) : undefined
  if (embed !== undefined) {
    // Only `is.null` (an anti-join) and `not.is.null` filter parents by an embed.
    const value = c.value.kind === 'is' ? c.value.value : undefined
    if (value !== 'null' && value !== 'not_null') throw restErrors.embedFilter(embed.name)
    return `${embed.marker} ${(value === 'null') === c.negated ? 'is not null' : 'is null'}`
  }
  const lhs = fieldSql(ctx.alias, c.field)
  let sql: string
  const value = c.value
  if (value.kind === 'is') sql = `${lhs} ${IS_SQL[value.value]}`
  else if (value.kind === 'list') sql = `${lhs} = any(${ctx.params.add(arrayLiteral(value.values))})`
  else if (c.op in TSQUERY) {
    const config = c.config !== undefined ? `${ctx.params.add(c.config, 'regconfig')}, ` : ''
    const isVector = c.field.path.length === 0 && ctx.columnType(c.field.name) === 'tsvector'
    const vector = isVector ? lhs : `pg_catalog.to_tsvector(${config}${c.field.path.length > 0 ? lhs : `${lhs}::text`})`
    sql = `${vector} @@ pg_catalog.${TSQUERY[c.op]}(${config}${ctx.params.add(value.text, 'text')})`
  } else {
    const operator = COMPARISON[c.op]!
    const like = c.op === 'like' || c.op === 'ilike'
    if (c.quantifier) {
      const text = like ? likePattern(value.text) : value.text
      sql = `${lhs} ${operator} ${c.quantifier}(${ctx.params.add(text)})`
    } else sql = `${lhs} ${operator} ${ctx.params.add(like ? likePattern(value.text) : value.text)}`
  }
  return c.negated ? `not (${sql})` : sql
}

export function logicSql(tree: Logic, ctx: FilterContext): string {
  const terms = tree.terms.map((term) => (term.kind === 'logic' ? logicSql(term, ctx) : conditionSql(term, ctx)))
  const sql = `(${terms.map((t) => `(${t})`).join(tree.op === 'and' ? ' and ' : ' or ')})`
  return tree.negated ? `not ${sql}` : sql
}

export function whereSql(filters: ReadonlyArray<Condition | Logic>, ctx: FilterContext): string {
  if (filters.length === 0) return 'true'
  return filters.map((f) => (f.kind === 'logic' ? logicSql(f, ctx) : `(${conditionSql(f, ctx)})`)).join(' and ')
}

/** One order term over `expr`: its direction and nulls. */
export function orderTermSql(expr: string, term: OrderTerm): string {
  let sql = expr
  if (term.direction) sql += ` ${term.direction}`
  if (term.nulls) sql += ` nulls ${term.nulls}`
  return sql
}

export function orderSql(alias: string, order: readonly OrderTerm[]): string {
  if (order.length === 0) return ''
  return ` order by ${order.map((term) => orderTermSql(fieldSql(alias, term.field), term)).join(', ')}`
}
