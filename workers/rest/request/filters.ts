// Filters, logic trees and order (shared/reference/postgrest.md section 1
// "Filters" and "order"), parsed into plain trees before any SQL:
// `col=[not.]op[(any|all)][(config)].value`, `or=(a.eq.1,and(b.gt.0,c.lt.9))`,
// `order=a.desc.nullslast,b`. Values stay text: PostgreSQL reads them as the
// column's type (sql.ts binds them as parameters). Errors are PGRST100.
import { restErrors } from '../errors.ts'
import { MAX_CONDITIONS, MAX_LIST_VALUES, MAX_LOGIC_DEPTH, MAX_ORDER_TERMS } from './limits.ts'
import { Cursor, type Field } from './select.ts'

export const OPERATORS = [
  'eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'like', 'ilike', 'match', 'imatch', 'in', 'is', 'isdistinct',
  'fts', 'plfts', 'phfts', 'wfts', 'cs', 'cd', 'ov', 'sl', 'sr', 'nxr', 'nxl', 'adj',
] as const
export type Operator = (typeof OPERATORS)[number]

/** Operators that take `(any)` / `(all)` with an array operand. */
const QUANTIFIABLE: ReadonlySet<string> = new Set(['eq', 'gt', 'gte', 'lt', 'lte', 'like', 'ilike', 'match', 'imatch'])
const FTS: ReadonlySet<string> = new Set(['fts', 'plfts', 'phfts', 'wfts'])
export const IS_VALUES = ['null', 'not_null', 'true', 'false', 'unknown'] as const

export type FilterValue =
  | { kind: 'text'; text: string }
  | { kind: 'list'; values: string[] }
  | { kind: 'is'; value: (typeof IS_VALUES)[number] }

export interface Condition {
  kind: 'condition'
  field: Field
  negated: boolean
  op: Operator
  quantifier?: 'any' | 'all'
  /** A text search configuration: `fts(english)`. */
  config?: string
  value: FilterValue
}

export interface Logic {
  kind: 'logic'
  op: 'and' | 'or'
  negated: boolean
  terms: Array<Condition | Logic>
}

export interface OrderTerm {
  /** A related order (`order=rel(col)`): the to-one embed's name or alias. */
  relation?: string
  field: Field
  direction?: 'asc' | 'desc'
  nulls?: 'first' | 'last'
}

const OPERATOR_LIST = `operator (${OPERATORS.join(', ')})`

/** Counts conditions across a request, to refuse thousands of them before any SQL. */
export class ConditionBudget {
  count = 0
  spend(): void {
    this.count += 1
    if (this.count > MAX_CONDITIONS) throw restErrors.tooLarge('the filters', this.count, MAX_CONDITIONS)
  }
}

/** `[not.]op[(any|all)|(config)].` then the value, read by `value(op)`. */
function operatorOf(cursor: Cursor): { negated: boolean; op: Operator; quantifier?: 'any' | 'all'; config?: string } {
  const negated = cursor.eat('not.')
  const start = cursor.pos
  while (!cursor.done && /[a-z]/.test(cursor.text[cursor.pos]!)) cursor.pos++
  const op = cursor.text.slice(start, cursor.pos) as Operator
  if (!(OPERATORS as readonly string[]).includes(op)) {
    cursor.pos = start
    cursor.fail(negated ? OPERATOR_LIST : `"not" or ${OPERATOR_LIST}`)
  }
  let quantifier: 'any' | 'all' | undefined
  let config: string | undefined
  if (cursor.eat('(')) {
    if (QUANTIFIABLE.has(op) && (cursor.peek('any)') || cursor.peek('all)'))) {
      quantifier = cursor.text.slice(cursor.pos, cursor.pos + 3) as 'any' | 'all'
      cursor.pos += 3
    } else if (FTS.has(op)) {
      const from = cursor.pos
      while (!cursor.done && /[A-Za-z0-9_.]/.test(cursor.text[cursor.pos]!)) cursor.pos++
      config = cursor.text.slice(from, cursor.pos)
      if (config === '') cursor.fail('text search configuration')
    } else cursor.fail(QUANTIFIABLE.has(op) ? '"any" or "all"' : '"."')
    cursor.expect(')')
  }
  cursor.expect('.')
  return { negated, op, quantifier, config }
}

/** `(a,"b,c")`: an `in` list; quoted elements may hold `,()`, with `\"` and `\\` escapes. */
function inList(cursor: Cursor): string[] {
  cursor.expect('(')
  const values: string[] = []
  if (cursor.eat(')')) return values
  do {
    if (values.length >= MAX_LIST_VALUES) throw restErrors.tooLarge('an in list', values.length + 1, MAX_LIST_VALUES)
    if (cursor.eat('"')) values.push(cursor.quoted())
    else {
      const start = cursor.pos
      while (!cursor.done && !',)'.includes(cursor.text[cursor.pos]!)) cursor.pos++
      values.push(cursor.text.slice(start, cursor.pos))
    }
  } while (cursor.eat(','))
  cursor.expect(')', '"," or ")"')
  return values
}

function isValue(cursor: Cursor, text: string): FilterValue {
  const value = text.toLowerCase()
  if (!(IS_VALUES as readonly string[]).includes(value)) cursor.fail('null, not_null, true, false or unknown')
  return { kind: 'is', value: value as (typeof IS_VALUES)[number] }
}

/** A filter parameter's value, taken literally after the operator (quotes included), as PostgREST does at the top level. */
export function parseFilter(field: Field, text: string, budget: ConditionBudget): Condition {
  budget.spend()
  const cursor = new Cursor(text, 'filter')
  const head = operatorOf(cursor)
  let value: FilterValue
  if (head.op === 'in') {
    value = { kind: 'list', values: inList(cursor) }
    if (!cursor.done) cursor.fail('end of input')
  } else if (head.op === 'is') value = isValue(cursor, text.slice(cursor.pos))
  else value = { kind: 'text', text: text.slice(cursor.pos) }
  return { kind: 'condition', field, ...head, value }
}

/** A logic tree parameter (`or=(...)`, `not.and=(...)`): `negated` and `op` come from its key. */
export function parseLogic(op: 'and' | 'or', negated: boolean, text: string, budget: ConditionBudget): Logic {
  const cursor = new Cursor(text, 'logic tree')
  const tree = logicBody(cursor, op, negated, budget, 1)
  if (!cursor.done) cursor.fail('end of input')
  return tree
}

function logicBody(cursor: Cursor, op: 'and' | 'or', negated: boolean, budget: ConditionBudget, depth: number): Logic {
  if (depth > MAX_LOGIC_DEPTH) throw restErrors.tooDeep(MAX_LOGIC_DEPTH)
  cursor.expect('(')
  const terms: Array<Condition | Logic> = []
  do terms.push(logicTerm(cursor, budget, depth))
  while (cursor.eat(','))
  cursor.expect(')', '"," or ")"')
  return { kind: 'logic', op, negated, terms }
}

function logicTerm(cursor: Cursor, budget: ConditionBudget, depth: number): Condition | Logic {
  for (const [prefix, op, negated] of [['not.and(', 'and', true], ['not.or(', 'or', true], ['and(', 'and', false], ['or(', 'or', false]] as const) {
    if (cursor.peek(prefix)) {
      cursor.pos += prefix.length - 1
      return logicBody(cursor, op, negated, budget, depth + 1)
    }
  }
  budget.spend()
  const field = cursor.field()
  cursor.expect('.', '"." or "->"')
  const head = operatorOf(cursor)
  let value: FilterValue
  if (head.op === 'in') value = { kind: 'list', values: inList(cursor) }
  else {
    const text = treeValue(cursor)
    value = head.op === 'is' ? isValue(cursor, text) : { kind: 'text', text }
  }
  return { kind: 'condition', field, ...head, value }
}

/** A value inside a logic tree: up to `,` or `)`, or a quoted text; `{..}` and `(..)` may hold commas. */
function treeValue(cursor: Cursor): string {
  if (cursor.eat('"')) return cursor.quoted()
  const start = cursor.pos
  let depth = 0
  while (!cursor.done) {
    const ch = cursor.text[cursor.pos]!
    if (ch === '{' || ch === '(') depth++
    else if (ch === '}' || (ch === ')' && depth > 0)) depth--
    else if (depth === 0 && (ch === ',' || ch === ')')) break
    cursor.pos++
  }
  return cursor.text.slice(start, cursor.pos)
}

/** `order=`: terms of a field (or of a to-one embed's field, `rel(col)`), `.asc`/`.desc` and `.nullsfirst`/`.nullslast`. */
export function parseOrder(text: string): OrderTerm[] {
  const cursor = new Cursor(text, 'order')
  const terms: OrderTerm[] = []
  do {
    if (terms.length >= MAX_ORDER_TERMS) throw restErrors.tooLarge('order', terms.length + 1, MAX_ORDER_TERMS)
    let field = cursor.field()
    const term: OrderTerm = { field }
    if (field.path.length === 0 && cursor.eat('(')) {
      term.relation = field.name
      field = cursor.field()
      cursor.expect(')', '"->", "->>" or ")"')
      term.field = field
    }
    if (cursor.eat('.asc')) term.direction = 'asc'
    else if (cursor.eat('.desc')) term.direction = 'desc'
    if (cursor.eat('.nullsfirst')) term.nulls = 'first'
    else if (cursor.eat('.nullslast')) term.nulls = 'last'
    terms.push(term)
  } while (cursor.eat(','))
  if (!cursor.done) cursor.fail('",", ".asc", ".desc", ".nullsfirst" or ".nullslast"')
  return terms
}

/** `columns=a,"b c"` (postgrest-js quotes each name). */
export function parseColumns(text: string): string[] {
  const cursor = new Cursor(text, 'columns parameter')
  const names: string[] = []
  do names.push(cursor.name())
  while (cursor.eat(','))
  if (!cursor.done) cursor.fail('"," or end of input')
  return names
}

/** A filter key: a field and its path, after the embeds it is in (`rel.col`, `a.b.col->k`; empty for the request's own table). */
export function parseFilterKey(key: string): { path: string[]; field: Field } {
  const cursor = new Cursor(key, 'filter')
  const path: string[] = []
  let field = cursor.field()
  while (field.path.length === 0 && cursor.eat('.')) {
    path.push(field.name)
    field = cursor.field()
  }
  if (!cursor.done) cursor.fail('"->", "->>" or "="')
  return { path, field }
}
