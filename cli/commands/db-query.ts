// `baseplane db query REF`: the SQL editor (control-plane/sql-editor.ts) on
// the command line, the SQL read from standard input or --file. Printed as a
// table (a NULL as NULL, a text that reads NULL quoted), a write as its
// command and count, a plan as EXPLAIN prints it; a refusal with its line,
// a caret under its position, and PostgreSQL's detail and hint. With a
// member's token it is the admin API's `POST /projects/{ref}/database/query`.
import fs from 'node:fs'
import { OPERATOR } from '../../control-plane/access.ts'
import { checkSqlRun, MAX_PAGE_ROWS, runSql, SQL_ROLES, SqlError, type SqlResultView, type SqlRole, type SqlRunInput } from '../../control-plane/sql-editor.ts'
import { BaseplaneError } from '../../lib/errors.ts'
import { integerOption, refusedValue, stringOption, table, UsageError, type CliContext, type Command, type ParsedArgs } from '../command.ts'

/** The SQL: --file's, else standard input's (refused when it is a terminal: nothing would end the text). */
async function readSql(args: ParsedArgs, context: CliContext): Promise<string> {
  const file = stringOption(args, 'file', false)
  if (file !== undefined) {
    try {
      return fs.readFileSync(file, 'utf8')
    } catch (error) {
      throw refusedValue(`--file ${file}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`)
    }
  }
  if (process.stdin.isTTY) throw new UsageError('give the SQL on standard input (baseplane db query REF < file.sql) or with --file F')
  return context.readStdin()
}

async function inputOf(args: ParsedArgs, context: CliContext): Promise<SqlRunInput> {
  const role = stringOption(args, 'role', false)
  if (role !== undefined && !(SQL_ROLES as readonly string[]).includes(role)) throw refusedValue(`--role must be one of ${SQL_ROLES.join(', ')}, got "${role}"`)
  const user = stringOption(args, 'user', false)
  const format = stringOption(args, 'explain-format', false)
  if (format !== undefined && format !== 'text' && format !== 'json') throw refusedValue(`--explain-format must be text or json, got "${format}"`)
  const explain = args.values.explain === true || format !== undefined ? (format ?? 'text') : undefined
  if (args.values.analyze === true && explain === undefined) throw new UsageError('--analyze goes with --explain')
  const input: SqlRunInput = {
    query: await readSql(args, context),
    role: (role ?? (user !== undefined ? 'authenticated' : 'owner')) as SqlRole,
    user,
    explain: explain as SqlRunInput['explain'],
    analyze: args.values.analyze === true ? true : undefined,
    readOnly: args.values['read-only'] === true ? true : undefined,
    limit: integerOption(args, 'limit', { min: 1, max: MAX_PAGE_ROWS }),
    offset: integerOption(args, 'offset', { min: 0, max: 1_000_000 }),
  }
  try {
    checkSqlRun(input)
  } catch (error) {
    // The run's checks name API fields; here they are flags. Not through fieldFlags: that would rewrite PostgreSQL's messages too (column "role").
    if (!BaseplaneError.is(error)) throw error
    let message = error.message
    for (const [field, flag] of Object.entries(FLAGS)) message = message.replace(new RegExp(`(?<![\\w-])${field}(?![\\w])`, 'g'), flag)
    throw new BaseplaneError(error.code, message, error.status, error.hint)
  }
  return input
}

const FLAGS: Record<string, string> = { role: '--role', user: '--user', limit: '--limit', offset: '--offset', analyze: '--analyze', explain: '--explain', query: 'the SQL' }

/** A refused statement as psql shows it: its message, the line with a caret under the position, then detail and hint. */
export function describeSqlError(error: { sqlstate: string; message: string; detail?: string | null; hint?: string | null; position?: number | null; line?: number | null; column?: number | null }, query: string): string {
  const lines = [`ERROR:  ${error.sqlstate}: ${error.message}`]
  if (typeof error.line === 'number' && typeof error.column === 'number') {
    const text = query.split('\n')[error.line - 1] ?? ''
    const label = `LINE ${error.line}: `
    lines.push(`${label}${text}`, `${' '.repeat(label.length + Array.from(text).slice(0, error.column - 1).length)}^`)
  }
  if (error.detail) lines.push(`DETAIL:  ${error.detail}`)
  if (error.hint) lines.push(`HINT:  ${error.hint}`)
  return lines.join('\n')
}

/** A value as the table shows it: NULL for NULL, a text that reads NULL quoted, line breaks and tabs visible. */
function cell(value: unknown): string {
  if (value === null) return 'NULL'
  const text = typeof value === 'string' ? value : JSON.stringify(value)
  if (text === 'NULL') return "'NULL'"
  return text.replace(/\r?\n/g, '\\n').replace(/\t/g, '\\t')
}

export function showSqlResult(result: SqlResultView): string {
  if (result.explain !== undefined) return typeof result.explain.plan === 'string' ? result.explain.plan : JSON.stringify(result.explain.plan, null, 2)
  const out: string[] = []
  if (result.columns.length > 0) {
    out.push(table([result.columns.map((c) => c.name), result.columns.map((c) => c.type), ...result.rows.map((row) => row.map(cell))]))
    const shown = result.rows.length
    const span = result.offset === 0 ? `${shown} row${shown === 1 ? '' : 's'}` : `rows ${result.offset + 1} to ${result.offset + shown}`
    if (result.more) out.push(`(${span}; there are more: --offset ${result.offset + shown})`)
    else out.push(result.offset === 0 ? `(${span})` : `(${span} of ${result.row_count ?? result.offset + shown})`)
  } else {
    out.push(`${result.command ?? 'OK'}${result.row_count !== null && result.command !== null && /^(INSERT|UPDATE|DELETE|MERGE|COPY|SELECT)/.test(result.command) ? ` ${result.row_count}` : ''}`)
  }
  if (result.read_only) out.push('(a read-only transaction)')
  return out.join('\n')
}

export const dbQueryCommand: Command = {
  words: ['db', 'query'],
  positionals: ['REF'],
  usage: 'db query REF [--file F] [--role owner|anon|authenticated|service_role] [--user EMAIL|ID] [--explain [--analyze] [--explain-format text|json]] [--read-only] [--limit N] [--offset N]',
  summary: "Run SQL in the project's database (from standard input or --file) as its owner or an API role, and print the last statement's result",
  options: {
    file: { type: 'string' },
    role: { type: 'string' },
    user: { type: 'string' },
    explain: { type: 'boolean' },
    analyze: { type: 'boolean' },
    'explain-format': { type: 'string' },
    'read-only': { type: 'boolean' },
    limit: { type: 'string' },
    offset: { type: 'string' },
  },
  optionHelp: {
    file: 'read the SQL from file F instead of standard input',
    role: "who runs it: owner (the default: the project's owner role), anon, authenticated (with --user) or service_role, under their row-level security and statement timeout",
    user: "run as this user of the project's Auth (email or id), with the claims a request of theirs carries; implies --role authenticated",
    explain: "print the last statement's plan (EXPLAIN) instead of its rows",
    analyze: 'with --explain: EXPLAIN ANALYZE (the statement runs, and the whole run is rolled back)',
    'explain-format': 'the plan as text (the default) or json',
    'read-only': 'run in a read-only transaction',
    limit: `rows of the result to print, 1 to ${MAX_PAGE_ROWS} (default 100)`,
    offset: 'rows of the result to skip first (the next page: the text runs again)',
  },
  optionValues: { role: 'ROLE', user: 'EMAIL|ID', 'explain-format': 'text|json' },
  notes:
    'The whole text is one transaction, committed when every statement succeeds (rolled back on the first error, and always with --explain); BEGIN, COMMIT and ROLLBACK are refused. Only the last statement\'s result is printed, as Supabase\'s SQL editor shows it. A NULL prints as NULL; a text that reads NULL prints quoted, \'NULL\'.',
  async run(context, args) {
    const ref = args.positionals[0]!
    const input = await inputOf(args, context)
    const controlPlane = await context.controlPlane()
    try {
      return await runSql(controlPlane, ref, OPERATOR, input, { addressing: context.addressing, mail: { smtpUrl: context.config.smtpUrl, from: context.config.mailFrom } })
    } catch (error) {
      if (error instanceof SqlError) throw new BaseplaneError(error.code, describeSqlError(error, input.query), error.status)
      throw error
    }
  },
  async remote(args, context) {
    const input = await inputOf(args, context)
    return {
      method: 'POST',
      path: `/projects/${args.positionals[0]!}/database/query`,
      body: {
        format: 'table',
        query: input.query,
        role: input.role,
        ...(input.user !== undefined ? { user: input.user } : {}),
        ...(input.explain !== undefined ? { explain: input.explain } : {}),
        ...(input.analyze ? { analyze: true } : {}),
        ...(input.readOnly ? { read_only: true } : {}),
        ...(input.limit !== undefined ? { limit: input.limit } : {}),
        ...(input.offset !== undefined ? { offset: input.offset } : {}),
      },
    }
  },
  human: (result: SqlResultView) => showSqlResult(result),
}
