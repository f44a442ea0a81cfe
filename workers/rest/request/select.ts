// The `select=` parameter (shared/reference/postgrest.md section 1 "select"),
// parsed into a tree before any SQL: columns, `*`, `alias:col`, `col::type`,
// JSON paths `col->a->>b`, aggregates `col.sum()`, and embeds `rel(...)`,
// `alias:rel!hint!inner(...)`, `...rel(...)`. Embeds are nodes of the tree
// that the planner resolves to relationships (embed.ts). Errors are
// PostgREST's PGRST100 with the parser's position.
import { restErrors } from '../errors.ts'
import { MAX_SELECT_ITEMS, MAX_EMBED_DEPTH } from './limits.ts'

export interface JsonStep {
  arrow: '->' | '->>'
  /** A key, or an array index when it is an integer. */
  key: string
}

/** A column, possibly followed by a JSON path. */
export interface Field {
  name: string
  path: JsonStep[]
}

export type SelectItem =
  | { kind: 'star' }
  | { kind: 'column'; field: Field; alias?: string; cast?: string; aggregate?: string; aggregateCast?: string }
  | { kind: 'embed'; name: string; alias?: string; hints: string[]; inner: boolean; spread: boolean; select: SelectItem[] }

export const AGGREGATES = ['count', 'sum', 'avg', 'min', 'max'] as const

/**
 * A cast's type: a plain type name, optionally an array of it (`int`,
 * `text[]`, `varchar`), or one of PostgreSQL's type names of several words.
 * The text goes into the statement as it is, so nothing else passes: words
 * such as `int from other_table` would change the statement.
 */
const CAST = /^[A-Za-z_][A-Za-z0-9_]*(\[\])?$/
const SPACED_TYPES = new Set(['double precision', 'character varying', 'bit varying', 'timestamp with time zone', 'timestamp without time zone', 'time with time zone', 'time without time zone'])

function isCast(text: string): boolean {
  const words = text.trim().toLowerCase().split(/\s+/).join(' ')
  return CAST.test(words) || SPACED_TYPES.has(words.replace(/\[\]$/, ''))
}

/** Reads PostgREST's grammar over one parameter's text; `what` names it in errors. */
export class Cursor {
  pos = 0
  constructor(readonly text: string, readonly what: string) {}

  get done(): boolean {
    return this.pos >= this.text.length
  }

  peek(s: string): boolean {
    return this.text.startsWith(s, this.pos)
  }

  eat(s: string): boolean {
    if (!this.peek(s)) return false
    this.pos += s.length
    return true
  }

  fail(expecting: string): never {
    const found = this.done ? 'end of input' : `"${this.text[this.pos]}"`
    throw restErrors.parse(this.what, this.text, this.pos, `unexpected ${found} expecting ${expecting}`)
  }

  expect(s: string, expecting = `"${s}"`): void {
    if (!this.eat(s)) this.fail(expecting)
  }

  /** A field name: letters, digits, `_ $` and space, `-` not starting `->`; or a double-quoted name. */
  name(expecting = 'field name (* or [a..z0..9_$])'): string {
    if (this.eat('"')) return this.quoted()
    const start = this.pos
    while (!this.done) {
      const ch = this.text[this.pos]!
      if (/[\p{L}\p{N}_$ ]/u.test(ch) || (ch === '-' && this.text[this.pos + 1] !== '>')) this.pos++
      else break
    }
    if (this.pos === start) this.fail(expecting)
    return this.text.slice(start, this.pos)
  }

  /** The rest of a double-quoted text (the opening quote eaten); `\"` and `\\` escape. */
  quoted(): string {
    let out = ''
    while (!this.done) {
      const ch = this.text[this.pos++]!
      if (ch === '"') return out
      if (ch === '\\' && !this.done) out += this.text[this.pos++]!
      else out += ch
    }
    this.fail('"\\""')
  }

  /** A column name and its JSON path. */
  field(): Field {
    const name = this.name()
    return { name, path: this.jsonPath() }
  }

  /** `->a->>b->0` after a column name (an index may be negative: `->-1`). */
  jsonPath(): JsonStep[] {
    const path: JsonStep[] = []
    for (;;) {
      const arrow = this.eat('->>') ? '->>' : this.eat('->') ? '->' : undefined
      if (arrow === undefined) return path
      const negative = this.eat('-') ? '-' : ''
      path.push({ arrow, key: negative + this.name('json key') })
    }
  }
}

/** Parses `select=`; an absent parameter is `*`. */
export function parseSelect(text: string | undefined): SelectItem[] {
  if (text === undefined) return [{ kind: 'star' }]
  const cursor = new Cursor(text, 'select parameter')
  const counter = { items: 0 }
  const items = text === '' ? [] : list(cursor, 0, counter)
  if (!cursor.done) cursor.fail('"," or end of input')
  return items
}

function list(cursor: Cursor, depth: number, counter: { items: number }): SelectItem[] {
  if (depth > MAX_EMBED_DEPTH) throw restErrors.tooDeepEmbed(MAX_EMBED_DEPTH)
  const items: SelectItem[] = []
  do {
    counter.items += 1
    if (counter.items > MAX_SELECT_ITEMS) throw restErrors.tooLarge('select', counter.items, MAX_SELECT_ITEMS)
    items.push(item(cursor, depth, counter))
  } while (cursor.eat(','))
  return items
}

function item(cursor: Cursor, depth: number, counter: { items: number }): SelectItem {
  if (cursor.eat('*')) return { kind: 'star' }
  if (cursor.eat('...')) return embed(cursor, cursor.name(), undefined, true, depth, counter)
  let alias: string | undefined
  let name = cursor.name()
  if (cursor.peek(':') && !cursor.peek('::')) {
    cursor.pos += 1
    alias = name
    if (cursor.eat('...')) cursor.fail('field name (* or [a..z0..9_$])')
    name = cursor.name()
  }
  if (cursor.peek('!') || cursor.peek('(')) {
    // `count()` alone is the aggregate, not an embed of a table named count.
    if (name === 'count' && cursor.peek('()')) {
      cursor.pos += 2
      return { kind: 'column', field: { name: '*', path: [] }, alias, aggregate: 'count', ...castOf(cursor) }
    }
    return embed(cursor, name, alias, false, depth, counter)
  }
  const path = cursor.jsonPath()
  const column: SelectItem & { kind: 'column' } = { kind: 'column', field: { name, path }, alias }
  const cast = castOf(cursor)
  if (cast.cast) column.cast = cast.cast
  if (cursor.eat('.')) {
    const aggregate = AGGREGATES.find((a) => cursor.peek(`${a}()`))
    if (aggregate === undefined) cursor.fail('aggregate function (count(), sum(), avg(), min() or max())')
    cursor.pos += aggregate.length + 2
    column.aggregate = aggregate
    const after = castOf(cursor)
    if (after.cast) column.aggregateCast = after.cast
  }
  return column
}

function castOf(cursor: Cursor): { cast?: string } {
  if (!cursor.eat('::')) return {}
  const start = cursor.pos
  while (!cursor.done && /[A-Za-z0-9_ [\]]/.test(cursor.text[cursor.pos]!)) cursor.pos++
  const cast = cursor.text.slice(start, cursor.pos).trim()
  if (!isCast(cast)) {
    cursor.pos = start
    cursor.fail('type name')
  }
  return { cast }
}

function embed(cursor: Cursor, name: string, alias: string | undefined, spread: boolean, depth: number, counter: { items: number }): SelectItem {
  const hints: string[] = []
  let inner = false
  while (cursor.eat('!')) {
    const hint = cursor.name('embed hint')
    if (hint === 'inner') inner = true
    else if (hint !== 'left') hints.push(hint)
  }
  cursor.expect('(')
  const select = cursor.peek(')') ? [] : list(cursor, depth + 1, counter)
  cursor.expect(')', '"," or ")"')
  return { kind: 'embed', name, alias, hints, inner, spread, select }
}
