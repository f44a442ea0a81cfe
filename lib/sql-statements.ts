// A SQL file as its statements, as Supabase's CLI splits a migration before
// it runs and records it (supabase_migrations.schema_migrations.statements):
// at each `;` outside quotes ('...', E'...', "..."), dollar quotes ($$...$$,
// $tag$...$tag$), comments (-- and nested /* */) and a `begin atomic ... end`
// body. Also the form two texts are compared in (whether an applied migration
// changed): without comments, whitespace and the `;` between statements.
// In lib/ because the CLI splits a folder's files to send them and the
// control plane splits what it applies.

export interface SqlStatement {
  /** The statement's text, trimmed, without its `;`. */
  text: string
  /** Where it starts in the source (0-based offset), to name a line in an error. */
  offset: number
}

interface Scan {
  /** Offsets of the top-level `;` in the source. */
  ends: number[]
  /** The source with each comment replaced by one space. */
  uncommented: string
}

const WORD = /[A-Za-z0-9_]/
const IDENTIFIER_CHAR = /[A-Za-z0-9_$]/

/** Where the quoted text (string, quoted identifier, dollar quote) starting at `i` ends (exclusive), or undefined when none starts there. */
function quoteEnd(sql: string, i: number): number | undefined {
  const c = sql[i]!
  const before = sql[i - 1] ?? ''
  if (c === '$') {
    if (IDENTIFIER_CHAR.test(before)) return undefined
    const tag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(i, i + 66))
    if (!tag) return undefined
    const close = sql.indexOf(tag[0], i + tag[0].length)
    return close === -1 ? sql.length : close + tag[0].length
  }
  if (c !== "'" && c !== '"') return undefined
  // E'...' strings take backslash escapes; the others only doubled quotes.
  const escapes = c === "'" && (before === 'e' || before === 'E') && !IDENTIFIER_CHAR.test(sql[i - 2] ?? '')
  let j = i + 1
  while (j < sql.length) {
    if (escapes && sql[j] === '\\') j += 2
    else if (sql[j] === c && sql[j + 1] === c) j += 2
    else if (sql[j] === c) return j + 1
    else j++
  }
  return sql.length
}

/** Where the comment starting at `i` ends (exclusive), or undefined when none starts there. */
function commentEnd(sql: string, i: number): number | undefined {
  if (sql[i] === '-' && sql[i + 1] === '-') {
    const end = sql.indexOf('\n', i)
    return end === -1 ? sql.length : end
  }
  if (sql[i] === '/' && sql[i + 1] === '*') {
    let depth = 1
    let j = i + 2
    while (j < sql.length && depth > 0) {
      if (sql[j] === '/' && sql[j + 1] === '*') {
        depth++
        j += 2
      } else if (sql[j] === '*' && sql[j + 1] === '/') {
        depth--
        j += 2
      } else j++
    }
    return j
  }
  return undefined
}

function scan(sql: string): Scan {
  const ends: number[] = []
  let uncommented = ''
  // `begin atomic` bodies (SQL-standard function bodies) hold `;` until their `end` (a `case` inside has its own).
  let atomic = 0
  let cases = 0
  let word = ''
  let previous = ''
  const endWord = () => {
    if (word === '') return
    const lower = word.toLowerCase()
    if (previous === 'begin' && lower === 'atomic') atomic++
    else if (atomic > 0 && lower === 'case') cases++
    else if (atomic > 0 && lower === 'end') {
      if (cases > 0) cases--
      else atomic--
    }
    previous = lower
    word = ''
  }
  let i = 0
  while (i < sql.length) {
    const comment = commentEnd(sql, i)
    if (comment !== undefined) {
      endWord()
      uncommented += ' '
      i = comment
      continue
    }
    const quote = quoteEnd(sql, i)
    if (quote !== undefined) {
      endWord()
      uncommented += sql.slice(i, quote)
      i = quote
      continue
    }
    const c = sql[i]!
    if (WORD.test(c)) word += c
    else endWord()
    if (c === ';' && atomic === 0) ends.push(i)
    uncommented += c
    i++
  }
  endWord()
  return { ends, uncommented }
}

/** The statements of `sql`, in order; a file of comments only has none. */
export function splitStatements(sql: string): SqlStatement[] {
  const statements: SqlStatement[] = []
  let start = 0
  for (const end of [...scan(sql).ends, sql.length]) {
    const raw = sql.slice(start, end)
    const body = raw.trim()
    // A chunk of comments only is no statement.
    if (body !== '' && scan(body).uncommented.trim() !== '') statements.push({ text: body, offset: start + raw.indexOf(body[0]!) })
    start = end + 1
  }
  return statements
}

/**
 * The form in which two migrations' SQL is compared: the statements'
 * text without comments, whitespace or `;`, so a file re-indented or
 * re-commented is the same migration, and one with a changed statement is not.
 */
export function comparableSql(statements: readonly string[]): string {
  return statements.map((statement) => scan(statement).uncommented.replace(/\s+/g, '').replaceAll(';', '')).join('')
}

/** The 1-based line and column of `offset` in `text`. */
export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset)
  const line = before.split('\n').length
  return { line, column: offset - before.lastIndexOf('\n') }
}
