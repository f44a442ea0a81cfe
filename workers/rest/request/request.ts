// A data API request as PostgREST reads it (shared/reference/postgrest.md
// sections 1 and 2): the query string split into `select`, filters, logic
// trees, `order`, `limit`/`offset`, `columns`, `on_conflict`; the headers
// `Prefer`, `Accept`, `Range` and the profiles. Everything here is checked
// before a connection is taken; what needs the schema (which keys are a
// function's arguments, which columns exist) is left to plan.ts.
import { restErrors } from '../errors.ts'
import { ConditionBudget, parseColumns, parseFilter, parseFilterKey, parseLogic, parseOrder, type Condition, type Logic, type OrderTerm } from './filters.ts'
import { parseSelect, type SelectItem } from './select.ts'
import { planMediaOf, type PlanMedia } from './plan-media.ts'

export interface Preferences {
  return?: 'minimal' | 'headers-only' | 'representation'
  count?: 'exact' | 'planned' | 'estimated'
  resolution?: 'merge-duplicates' | 'ignore-duplicates'
  missing?: 'default' | 'null'
  handling?: 'lenient' | 'strict'
  maxAffected?: number
  params?: 'single-object'
  /** The zone asked for, as written; once checked against the server's zones (timezones.ts), the zone honoured or undefined. */
  timezone?: string
  /** How the transaction should end; kept only where the project allows the override (lib/rest-tx-end.ts), and then echoed. */
  tx?: 'commit' | 'rollback'
  /** Preferences not understood, for handling=strict. */
  invalid: string[]
}

export type Media = 'json' | 'object' | 'csv'

export interface ParsedQuery {
  select: SelectItem[]
  /** Filters and logic trees, ANDed. */
  filters: Array<Condition | Logic>
  /** Filter parameters kept as text: on an RPC GET, the function's arguments are among them. */
  rawFilters: Array<[string, string]>
  order: OrderTerm[]
  limit?: number
  offset?: number
  columns?: string[]
  onConflict?: string[]
  /** Parameters of embedded resources (`rel.col=`, `rel.or=`, `rel.order=`, `rel.limit=`, `rel.offset=`), by their path of embed names: PGRST108 unless embedded. */
  embedParams: EmbedParam[]
  budget: ConditionBudget
}

export type EmbedParam = { path: string[] } & (
  | { kind: 'filter'; filter: Condition | Logic }
  | { kind: 'order'; terms: OrderTerm[] }
  | { kind: 'limit' | 'offset'; value: number }
)

const RESERVED_LAST = new Set(['order', 'limit', 'offset', 'or', 'and'])

function integer(name: string, text: string): number {
  if (!/^-?\d+$/.test(text)) throw restErrors.parse(`${name} parameter`, text, 0, 'unexpected input expecting an integer')
  const value = Number(text)
  if (value < 0) throw restErrors.range(name === 'limit' ? 'Limit should be greater than or equal to zero.' : 'Offset should be greater than or equal to zero.')
  return value
}

/** The query string, decoded as URLSearchParams does (what postgrest-js encodes with). */
export function parseQuery(query: string): ParsedQuery {
  const parsed: ParsedQuery = { select: [{ kind: 'star' }], filters: [], rawFilters: [], order: [], embedParams: [], budget: new ConditionBudget() }
  let select: string | undefined
  for (const [key, value] of new URLSearchParams(query)) {
    if (key.includes('\0') || value.includes('\0')) throw restErrors.nulByte()
    if (key === 'select') select = value
    else if (key === 'columns') parsed.columns = parseColumns(value)
    else if (key === 'on_conflict') parsed.onConflict = parseColumns(value)
    else if (key === 'apikey') continue
    else {
      const dot = key.lastIndexOf('.')
      const last = dot === -1 ? key : key.slice(dot + 1)
      const head = dot === -1 ? '' : key.slice(0, dot)
      if (RESERVED_LAST.has(last) && !key.includes('->')) {
        const path = head === '' ? [] : head.split('.')
        const negated = (last === 'or' || last === 'and') && path[path.length - 1] === 'not'
        if (negated) path.pop()
        if (last === 'or' || last === 'and') {
          const tree = parseLogic(last, negated, value, parsed.budget)
          if (path.length > 0) parsed.embedParams.push({ path, kind: 'filter', filter: tree })
          else parsed.filters.push(tree)
        } else if (last === 'order') {
          const terms = parseOrder(value)
          if (path.length > 0) parsed.embedParams.push({ path, kind: 'order', terms })
          else parsed.order.push(...terms)
        } else {
          const n = integer(last, value)
          if (path.length > 0) parsed.embedParams.push({ path, kind: last as 'limit' | 'offset', value: n })
          else if (last === 'limit') parsed.limit = n
          else parsed.offset = n
        }
      } else parsed.rawFilters.push([key, value])
    }
  }
  parsed.select = parseSelect(select)
  return parsed
}

/** Parses the filter parameters left in `rawFilters` (all of them, or those that are not a function's arguments). */
export function parseFilters(parsed: ParsedQuery, keep: (key: string) => boolean = () => true): void {
  for (const [key, value] of parsed.rawFilters) {
    if (!keep(key)) continue
    const { path, field } = parseFilterKey(key)
    const filter = parseFilter(field, value, parsed.budget)
    if (path.length > 0) parsed.embedParams.push({ path, kind: 'filter', filter })
    else parsed.filters.push(filter)
  }
}

const PREFERENCE = /^([a-z-]+)=(.*)$/

/** `Prefer`, a comma list; several headers merge; the first value of each kind wins. */
export function parsePrefer(header: string | undefined): Preferences {
  const prefs: Preferences = { invalid: [] }
  if (!header) return prefs
  for (const raw of header.split(',')) {
    const item = raw.trim()
    if (item === '') continue
    const match = PREFERENCE.exec(item)
    const [name, value] = match ? [match[1]!, match[2]!] : [item, '']
    switch (name) {
      case 'return':
        if (value === 'minimal' || value === 'headers-only' || value === 'representation') prefs.return ??= value
        else prefs.invalid.push(item)
        break
      case 'count':
        if (value === 'exact' || value === 'planned' || value === 'estimated') prefs.count ??= value
        else prefs.invalid.push(item)
        break
      case 'resolution':
        if (value === 'merge-duplicates' || value === 'ignore-duplicates') prefs.resolution ??= value
        else prefs.invalid.push(item)
        break
      case 'missing':
        if (value === 'default' || value === 'null') prefs.missing ??= value
        else prefs.invalid.push(item)
        break
      case 'handling':
        if (value === 'lenient' || value === 'strict') prefs.handling ??= value
        else prefs.invalid.push(item)
        break
      case 'max-affected':
        if (/^\d+$/.test(value)) prefs.maxAffected ??= Number(value)
        else prefs.invalid.push(item)
        break
      case 'params':
        if (value === 'single-object') prefs.params ??= value
        else prefs.invalid.push(item)
        break
      case 'timezone':
        // Whether PostgreSQL knows the zone is decided on the connection (timezones.ts).
        if (value !== '') prefs.timezone ??= value
        else prefs.invalid.push(item)
        break
      case 'tx':
        // Never invalid, even where the project allows no override (PostgREST's acceptedPrefs): then only ignored.
        if (value === 'commit' || value === 'rollback') prefs.tx ??= value
        else prefs.invalid.push(item)
        break
      default:
        prefs.invalid.push(item)
    }
  }
  if (prefs.handling === 'strict' && prefs.invalid.length > 0) throw restErrors.strictPreferences(prefs.invalid)
  return prefs
}

/**
 * The first acceptable type of `Accept` (PostgREST 13: 406 PGRST107 when none
 * is); a plan of the statement (plan-media.ts) only where `plans` allows it.
 */
export function parseAccept(header: string | undefined, plans = false): { media: Media; stripNulls: boolean; plan?: PlanMedia } {
  if (!header || header.trim() === '') return { media: 'json', stripNulls: false }
  for (const raw of header.split(',')) {
    const [type, ...params] = raw.split(';').map((part) => part.trim().toLowerCase())
    const stripNulls = params.includes('nulls=stripped')
    const plan = plans ? planMediaOf(type!, params) : undefined
    if (plan !== undefined) return { media: plan.for, stripNulls: false, plan }
    switch (type) {
      case 'application/json':
      case 'application/*':
      case '*/*':
        return { media: 'json', stripNulls: false }
      case 'application/vnd.pgrst.array+json':
      case 'application/vnd.pgrst.array':
        return { media: 'json', stripNulls }
      case 'application/vnd.pgrst.object+json':
      case 'application/vnd.pgrst.object':
        return { media: 'object', stripNulls }
      case 'text/csv':
      case 'text/*':
        return { media: 'csv', stripNulls: false }
    }
  }
  throw restErrors.mediaType(header)
}

/** A `Range: first-[last]` header (GET only), as an offset and a limit. */
export function parseRange(header: string | undefined): { offset: number; limit?: number } | undefined {
  if (!header) return undefined
  const match = /^(?:items=)?\s*(\d+)-(\d*)\s*$/.exec(header)
  if (!match) return undefined
  const first = Number(match[1])
  if (match[2] === '') return { offset: first }
  const last = Number(match[2])
  if (last < first) throw restErrors.range('The lower boundary must be lower than or equal to the upper boundary in the Range header.')
  return { offset: first, limit: last - first + 1 }
}
