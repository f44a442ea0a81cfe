// A postgres_changes binding's `filter`, as realtime-js's filter builder
// writes it (RealtimePostgresFilterBuilder): `column=op.value`, with a `not.`
// before the operator to negate it, and conditions joined by commas, all of
// which must hold. Values are PostgREST's: a value holding `,()"\` or
// surrounding spaces is double-quoted (backslash escapes inside), and `in`
// takes a parenthesized list. Matched against a change's record here, with
// SQL's three-valued logic: a comparison with NULL (or with a column the
// record does not carry) never holds, negated or not.
export const FILTER_OPERATORS = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'in', 'like', 'ilike', 'match', 'imatch', 'is', 'isdistinct'] as const
export type FilterOperator = (typeof FILTER_OPERATORS)[number]

export interface Condition {
  column: string
  operator: FilterOperator
  negated: boolean
  /** The operand; for `in`, every item of the list. */
  values: string[]
}

/** A filter that does not parse: Supabase Realtime's "Error parsing `filter` params". */
export class FilterError extends Error {
  readonly code = 'InvalidFilter'
  constructor(filter: string, why: string) {
    super(`Error parsing \`filter\` params: ${why} in ${JSON.stringify(filter)}`)
    this.name = 'FilterError'
  }
}

/** `text` cut at the commas outside quotes and parentheses. */
function splitTop(text: string): string[] {
  const parts: string[] = []
  let depth = 0
  let quoted = false
  let start = 0
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (quoted) {
      if (c === '\\') i++
      else if (c === '"') quoted = false
    } else if (c === '"') quoted = true
    else if (c === '(') depth++
    else if (c === ')') depth--
    else if (c === ',' && depth === 0) {
      parts.push(text.slice(start, i))
      start = i + 1
    }
  }
  parts.push(text.slice(start))
  return parts
}

function unquote(value: string, filter: string): string {
  if (!value.startsWith('"')) return value
  if (value.length < 2 || !value.endsWith('"')) throw new FilterError(filter, `unterminated quote in ${value}`)
  return value.slice(1, -1).replace(/\\(.)/g, '$1')
}

export function parseFilter(filter: string | undefined): Condition[] {
  if (filter === undefined || filter.trim() === '') return []
  return splitTop(filter).map((part) => {
    const eq = part.indexOf('=')
    if (eq <= 0) throw new FilterError(filter, `no column=operator.value in ${JSON.stringify(part)}`)
    const column = part.slice(0, eq).trim()
    let rest = part.slice(eq + 1)
    const negated = rest.startsWith('not.')
    if (negated) rest = rest.slice(4)
    const dot = rest.indexOf('.')
    const operator = (dot === -1 ? rest : rest.slice(0, dot)) as FilterOperator
    if (!FILTER_OPERATORS.includes(operator)) throw new FilterError(filter, `unknown operator ${JSON.stringify(operator)}`)
    if (dot === -1) throw new FilterError(filter, `no value for ${operator}`)
    const operand = rest.slice(dot + 1)
    if (operator !== 'in') return { column, operator, negated, values: [unquote(operand, filter)] }
    if (!operand.startsWith('(') || !operand.endsWith(')')) throw new FilterError(filter, 'in takes a parenthesized list')
    const items = splitTop(operand.slice(1, -1)).map((item) => unquote(item.trim(), filter))
    if (items.length === 0 || (items.length === 1 && items[0] === '')) throw new FilterError(filter, 'in takes at least one value')
    return { column, operator, negated, values: items }
  })
}

/** A LIKE pattern as a regular expression: % (or PostgREST's *) any run, _ one character. */
function likePattern(pattern: string, insensitive: boolean): RegExp {
  let source = ''
  for (const c of pattern) source += c === '%' || c === '*' ? '.*' : c === '_' ? '.' : c.replace(/[.+?^${}()|[\]\\]/g, '\\$&')
  return new RegExp(`^${source}$`, insensitive ? 'si' : 's')
}

/** A record's value as SQL text compares it: numbers as numbers, the rest as their text. */
function compare(value: unknown, operand: string): number | undefined {
  if (typeof value === 'number') {
    const n = Number(operand)
    return Number.isNaN(n) ? undefined : value - n
  }
  if (typeof value === 'boolean') {
    const b = /^(t|true|y|yes|on|1)$/i.test(operand) ? true : /^(f|false|n|no|off|0)$/i.test(operand) ? false : undefined
    return b === undefined ? undefined : Number(value) - Number(b)
  }
  const text = typeof value === 'string' ? value : JSON.stringify(value)
  return text < operand ? -1 : text > operand ? 1 : 0
}

/** True, false, or undefined for SQL's NULL. */
function holds(condition: Condition, value: unknown): boolean | undefined {
  const [operand = ''] = condition.values
  switch (condition.operator) {
    case 'is': {
      const asked = operand.toLowerCase()
      if (asked === 'null') return value === null || value === undefined
      if (asked === 'unknown') return value === null || value === undefined
      if (asked === 'true') return value === true
      if (asked === 'false') return value === false
      return undefined
    }
    case 'isdistinct': {
      const absent = value === null || value === undefined
      if (operand.toLowerCase() === 'null') return !absent
      return absent ? true : compare(value, operand) !== 0
    }
  }
  if (value === null || value === undefined) return undefined
  const text = typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value)
  const order = (wanted: (c: number) => boolean) => {
    const c = compare(value, operand)
    return c === undefined ? undefined : wanted(c)
  }
  switch (condition.operator) {
    case 'eq':
      return order((c) => c === 0)
    case 'neq':
      return order((c) => c !== 0)
    case 'gt':
      return order((c) => c > 0)
    case 'gte':
      return order((c) => c >= 0)
    case 'lt':
      return order((c) => c < 0)
    case 'lte':
      return order((c) => c <= 0)
    case 'in':
      return condition.values.some((item) => compare(value, item) === 0)
    case 'like':
      return likePattern(operand, false).test(text)
    case 'ilike':
      return likePattern(operand, true).test(text)
    case 'match':
    case 'imatch':
      try {
        return new RegExp(operand, condition.operator === 'imatch' ? 'i' : '').test(text)
      } catch {
        return undefined
      }
  }
  return undefined
}

/** Whether every condition holds for `record` (a column it lacks holds none). */
export function matches(conditions: readonly Condition[], record: Record<string, unknown> | undefined): boolean {
  if (conditions.length === 0) return true
  if (record === undefined) return false
  return conditions.every((condition) => {
    if (!Object.hasOwn(record, condition.column)) return false
    const result = holds(condition, record[condition.column])
    if (result === undefined) return false
    return condition.negated ? !result : result
  })
}
