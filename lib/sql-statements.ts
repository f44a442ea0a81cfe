// A SQL text cut into its statements, as psql cuts what it sends: at each
// semicolon outside quotes ('...', E'...', "..."), dollar quotes ($$...$$,
// $tag$...$tag$) and comments (-- and nested /* */), and outside the body of
// a CREATE FUNCTION or PROCEDURE written with BEGIN ATOMIC ... END (where
// psql counts BEGIN and CASE against END the same way). The SQL editor runs
// each statement on its own through the extended protocol, which refuses
// two statements in one text ("cannot insert multiple commands into a
// prepared statement"), so a cut this misses fails loudly, never silently.
// The migrations (control-plane/migrations.ts) cut their files the same way,
// as Supabase's CLI records them, and compare two migrations' statements in
// the form comparableSql gives.

export interface SqlStatement {
  /** The statement as written, from the end of the previous one (its leading blanks and comments kept), without its semicolon. */
  text: string
  /** Where `text` starts in the whole text (a UTF-16 index). */
  start: number
  /** Its first words (up to four), lower-case, outside comments: what kind of statement it is. */
  words: string[]
}

const WORD_START = /[A-Za-z_\u0080-\uffff]/
const WORD_PART = /[A-Za-z0-9_$\u0080-\uffff]/

/** The statements of `sql`, in order; stretches of only blanks and comments are none. */
export function splitStatements(sql: string): SqlStatement[] {
  return scan(sql).statements
}

/** The statements of `sql` and where its comments are ([start, end) UTF-16 ranges). */
function scan(sql: string): { statements: SqlStatement[]; comments: [number, number][] } {
  const statements: SqlStatement[] = []
  const comments: [number, number][] = []
  let start = 0
  let words: string[] = []
  let wordCount = 0
  let depth = 0
  let meaningful = false
  let i = 0
  const finish = (end: number) => {
    if (meaningful) statements.push({ text: sql.slice(start, end), start, words })
    start = end + 1
    words = []
    wordCount = 0
    depth = 0
    meaningful = false
  }
  while (i < sql.length) {
    const c = sql[i]!
    const next = sql[i + 1]
    if (c === '-' && next === '-') {
      const eol = sql.indexOf('\n', i)
      comments.push([i, eol === -1 ? sql.length : eol])
      i = eol === -1 ? sql.length : eol + 1
      continue
    }
    if (c === '/' && next === '*') {
      const opened = i
      let nesting = 1
      i += 2
      while (i < sql.length && nesting > 0) {
        if (sql[i] === '/' && sql[i + 1] === '*') {
          nesting++
          i += 2
        } else if (sql[i] === '*' && sql[i + 1] === '/') {
          nesting--
          i += 2
        } else i++
      }
      comments.push([opened, i])
      continue
    }
    if (c === ';') {
      if (depth > 0) {
        i++
        continue
      }
      finish(i)
      i++
      continue
    }
    if (/\s/.test(c)) {
      i++
      continue
    }
    meaningful = true
    if (c === "'") {
      // E'...' (the E was read as a word just before) takes backslash escapes; a plain string does not (standard_conforming_strings).
      const escapes = i > 0 && /[eE]/.test(sql[i - 1]!) && (i < 2 || !WORD_PART.test(sql[i - 2]!))
      i = quoted(sql, i, "'", escapes)
      continue
    }
    if (c === '"') {
      i = quoted(sql, i, '"', false)
      continue
    }
    if (c === '$') {
      const tag = /^\$([A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$/.exec(sql.slice(i, i + 200))
      if (tag !== null) {
        const close = sql.indexOf(tag[0], i + tag[0].length)
        i = close === -1 ? sql.length : close + tag[0].length
        continue
      }
      i++
      continue
    }
    if (WORD_START.test(c) && (i === 0 || !WORD_PART.test(sql[i - 1]!))) {
      let end = i + 1
      while (end < sql.length && WORD_PART.test(sql[end]!)) end++
      const word = sql.slice(i, end).toLowerCase()
      wordCount++
      if (words.length < 4) words.push(word)
      if ((word === 'begin' || word === 'case') && wordCount > 1 && routineBody(words)) depth++
      else if (word === 'end' && depth > 0) depth--
      i = end
      continue
    }
    i++
  }
  finish(sql.length)
  return { statements, comments }
}

/**
 * The form in which two migrations' SQL is compared: the statements' text
 * without comments, whitespace or `;`, so a file re-indented or re-commented
 * is the same migration, and one with a changed statement is not.
 */
export function comparableSql(statements: readonly string[]): string {
  return statements
    .map((statement) => {
      let kept = ''
      let from = 0
      for (const [start, end] of scan(statement).comments) {
        kept += `${statement.slice(from, start)} `
        from = end
      }
      return `${kept}${statement.slice(from)}`.replace(/\s+/g, '').replaceAll(';', '')
    })
    .join('')
}

/** `create function`, `create procedure`, or either with `or replace`: the statements whose bodies may hold semicolons outside quotes. */
function routineBody(words: string[]): boolean {
  if (words[0] !== 'create') return false
  const kind = words[1] === 'or' && words[2] === 'replace' ? words[3] : words[1]
  return kind === 'function' || kind === 'procedure'
}

/** The index just past the quoted text opening at `open`. */
function quoted(sql: string, open: number, quote: string, escapes: boolean): number {
  let i = open + 1
  while (i < sql.length) {
    const c = sql[i]
    if (escapes && c === '\\') {
      i += 2
      continue
    }
    if (c === quote) {
      if (sql[i + 1] === quote) {
        i += 2
        continue
      }
      return i + 1
    }
    i++
  }
  return sql.length
}

/**
 * Whether a statement ends or opens a transaction (BEGIN, START TRANSACTION,
 * COMMIT, END, ROLLBACK but not ROLLBACK TO a savepoint, ABORT, PREPARE
 * TRANSACTION): the SQL editor runs the whole text in one transaction of its
 * own, which such a statement would end, and what followed would run outside it.
 */
export function controlsTransaction(words: readonly string[]): boolean {
  const [first, second, third] = words
  switch (first) {
    case 'begin':
    case 'commit':
    case 'end':
    case 'abort':
      return true
    case 'start':
      return second === 'transaction'
    case 'rollback':
      return !(second === 'to' || ((second === 'transaction' || second === 'work') && third === 'to'))
    case 'prepare':
      return second === 'transaction'
    default:
      return false
  }
}

/** A 1-based character position (PostgreSQL's, counted in code points) in `text` as its line and column, both 1-based. */
export function lineAndColumn(text: string, position: number): { line: number; column: number } {
  const chars = Array.from(text).slice(0, Math.max(0, position - 1))
  let line = 1
  let column = 1
  for (const char of chars) {
    if (char === '\n') {
      line++
      column = 1
    } else column++
  }
  return { line, column }
}

/** How many characters (code points, as PostgreSQL counts) `text` holds before the UTF-16 index `index`. */
export function charactersBefore(text: string, index: number): number {
  return Array.from(text.slice(0, index)).length
}
