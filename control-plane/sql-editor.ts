// The SQL editor (issue 42 item 4): a text of SQL run in a project's database
// as its owner, or as anon, a chosen user (authenticated) or service_role to
// try row-level security, and the caller's history of runs and saved
// snippets. The dashboard's SQL tab, `baseplane db query` and the admin API's
// `POST /projects/{ref}/database/query` all call it (docs/sql-editor.md).
//
// How a run goes:
// - on a connection of its own, never as the server's admin: as the owner's
//   login role, or as the API's (which may only become the API roles), so a
//   RESET ROLE in the text lands on a role with no more rights than chosen;
// - the whole text in one transaction: for an API role opened by
//   lib/db/request-transaction.ts's identity statement, the one the Data API
//   runs (role, `request.jwt.claims` and `request.jwt.claim.*` from the
//   token a request would carry: the key's, or one signed for the user as
//   the dashboard's explorers sign it), the role's statement timeout; for the
//   owner OWNER_STATEMENT_TIMEOUT_MS;
// - read-only (`transaction_read_only`) when asked, and always for a member
//   whose role on the project is read-only. A statement that would end the
//   transaction (BEGIN, COMMIT, ROLLBACK...) is refused before anything runs,
//   as what followed it would run outside;
// - statement by statement (lib/sql-statements.ts), each through the
//   extended protocol and a cursor; the answer is the last statement's
//   result, as Supabase's SQL editor answers; its rows are read up to the
//   page asked for (and one more, to say whether there are more);
// - each statement has a deadline of its timeout plus a margin: a text that
//   turns its statement_timeout off still ends, its backend terminated;
// - committed when every statement succeeded, rolled back on the first
//   error (and always for EXPLAIN, so EXPLAIN ANALYZE of a write writes
//   nothing); recorded in the caller's history either way.
import pg from 'pg'
import Cursor from 'pg-cursor'
import type { ProjectRecord } from '../lib/catalogue.ts'
import { BaseplaneError, platformErrors } from '../lib/errors.ts'
import { callerOf } from '../lib/jwt.ts'
import { log } from '../lib/log.ts'
import { identityStatement, withPoolTransaction } from '../lib/db/request-transaction.ts'
import { DEADLINE_MARGIN_MS } from '../lib/db/round-trip-deadline.ts'
import type { RequestIdentity } from '../lib/roles.ts'
import { charactersBefore, controlsTransaction, lineAndColumn, splitStatements, type SqlStatement } from '../lib/sql-statements.ts'
import { actorOf, standingOn, type Caller } from './access.ts'
import { memberErrors } from './members.ts'
import { authUserToken, findAuthUser, type AuthUsersContext } from './auth-users.ts'
import type { ControlPlane } from './control-plane.ts'
import * as db from './db/sql-editor.ts'
import { withClient, withProjectLogin } from './project-database.ts'
import { getProject } from './projects.ts'

/** Who a text runs as: the project's owner role, or one of the API roles (`authenticated` as a chosen user). */
export const SQL_ROLES = ['owner', 'anon', 'authenticated', 'service_role'] as const
export type SqlRole = (typeof SQL_ROLES)[number]

/**
 * The owner's statements have no timeout of the project's: two minutes, long
 * enough for an index on a large table, short enough that a forgotten
 * cross join frees its connection (one of the plan's few owner connections).
 */
export const OWNER_STATEMENT_TIMEOUT_MS = 120_000
export const DEFAULT_PAGE_ROWS = 100
export const MAX_PAGE_ROWS = 1000
/** The Supabase-shaped answer (an array of row objects) carries every row, up to this many. */
export const MAX_ALL_ROWS = 10_000
/** Characters of SQL one run or snippet may hold. */
export const MAX_QUERY_CHARS = 200_000
/** Runs kept per caller and project. */
export const HISTORY_KEPT = 100
/** How long a token signed for a chosen user lives: the run's own span. */
const USER_TOKEN_SECONDS = 300

export interface SqlRunInput {
  query: string
  role: SqlRole
  /** For `authenticated`: the user's email or id. */
  user?: string
  /** EXPLAIN the last statement, in this format. */
  explain?: 'text' | 'json'
  /** With `explain`: EXPLAIN ANALYZE (the statement runs; the transaction is rolled back). */
  analyze?: boolean
  readOnly?: boolean
  /** Rows of the last result to answer (the page), 1 to MAX_PAGE_ROWS; `all` answers every row up to MAX_ALL_ROWS. */
  limit?: number | 'all'
  offset?: number
  /** Values for $1, $2... of a text of one statement. */
  parameters?: unknown[]
  /** Refuse (and roll back) a run whose last result has more rows than `limit`: the answer that carries every row (Supabase's) never silently drops some. */
  wholeResult?: boolean
  /** `text`: every value as PostgreSQL's text (null for NULL); `json`: as node-postgres parses it (numbers, booleans, JSON). */
  values?: 'text' | 'json'
}

export interface SqlColumn {
  name: string
  /** PostgreSQL's name of its type, with its modifier (`integer`, `character varying(20)`, `timestamp with time zone`). */
  type: string
  type_oid: number
}

export interface SqlResultView {
  ref: string
  role: SqlRole
  user?: { id: string; email: string | null }
  read_only: boolean
  /** How many statements the text held; the answer is the last one's. */
  statements: number
  /** The last statement's command (SELECT, INSERT, CREATE...). */
  command: string | null
  columns: SqlColumn[]
  /** The page of the last statement's rows, each value in the column order: PostgreSQL's text, or null for NULL. */
  rows: unknown[][]
  offset: number
  limit: number
  /** Whether the result had rows past this page. */
  more: boolean
  /** The rows the last statement returned or changed, when it ended within what was read (else null: there are more). */
  row_count: number | null
  committed: boolean
  duration_ms: number
  explain?: { format: 'text' | 'json'; analyze: boolean; plan: unknown }
}

/** A statement PostgreSQL refused, or one that passed its deadline: 400, with PostgreSQL's fields. */
export class SqlError extends BaseplaneError {
  readonly sqlstate: string
  readonly detail: string | undefined
  /** 1-based character position in the whole text, as PostgreSQL counts. */
  readonly position: number | undefined
  readonly line: number | undefined
  readonly column: number | undefined
  readonly where: string | undefined
  /** Which statement of the text (1-based). */
  readonly statement: number
  readonly #fields: ConstructorParameters<typeof SqlError>[0]

  constructor(fields: { sqlstate: string; message: string; detail?: string; hint?: string; position?: number; where?: string; statement: number; text: string }) {
    super('sql_failed', fields.message, 400, fields.hint)
    this.#fields = fields
    this.name = 'SqlError'
    this.sqlstate = fields.sqlstate
    this.detail = fields.detail
    this.position = fields.position
    this.where = fields.where
    this.statement = fields.statement
    const at = fields.position === undefined ? undefined : lineAndColumn(fields.text, fields.position)
    this.line = at?.line
    this.column = at?.column
  }

  /** The same refusal with a hint of the platform's where PostgreSQL gave none. */
  withHint(hint: string): SqlError {
    return this.hint === undefined ? new SqlError({ ...this.#fields, hint }) : this
  }

  /** The admin API's body: `{code, message}` and PostgreSQL's fields (absent ones null). */
  body(): Record<string, unknown> {
    return {
      code: this.code,
      message: this.message,
      sqlstate: this.sqlstate,
      detail: this.detail ?? null,
      hint: this.hint ?? null,
      position: this.position ?? null,
      line: this.line ?? null,
      column: this.column ?? null,
      where: this.where ?? null,
      statement: this.statement,
    }
  }

}

/** What a run needs besides: where the project's API is (the claims' issuer), and how Auth's mail goes (finding a user sends none). */
export type SqlEditorContext = Pick<AuthUsersContext, 'addressing'> & Partial<Pick<AuthUsersContext, 'mail'>>

const refuse = (message: string, field: string) => platformErrors.invalidArgument(message, field)

/**
 * A run as the admin API and the dashboard's script send it (snake_case), checked:
 * every problem is a 400 `invalid_argument` naming its field, before anything runs.
 */
export function readSqlRunInput(body: Record<string, unknown>, extra: readonly string[] = []): SqlRunInput {
  const known = ['query', 'role', 'user', 'explain', 'analyze', 'read_only', 'limit', 'offset', 'parameters', ...extra]
  const unknown = Object.keys(body).find((key) => !known.includes(key))
  if (unknown !== undefined) throw refuse(`Unknown field "${unknown.slice(0, 40)}": use ${known.join(', ')}`, unknown)
  if (typeof body.query !== 'string' || body.query.trim() === '') throw refuse('query must be the SQL text to run', 'query')
  const user = body.user === undefined || body.user === null ? undefined : body.user
  if (user !== undefined && (typeof user !== 'string' || user.trim() === '')) throw refuse("user must be the email or id of one of the project's users", 'user')
  let role: SqlRole
  if (body.role === undefined || body.role === null) role = user === undefined ? 'owner' : 'authenticated'
  else if (typeof body.role === 'string' && (SQL_ROLES as readonly string[]).includes(body.role)) role = body.role as SqlRole
  else throw refuse(`role must be one of ${SQL_ROLES.join(', ')}, got ${JSON.stringify(body.role).slice(0, 40)}`, 'role')
  let explain: SqlRunInput['explain']
  if (body.explain === true || body.explain === 'text') explain = 'text'
  else if (body.explain === 'json') explain = 'json'
  else if (body.explain !== undefined && body.explain !== false && body.explain !== null) throw refuse('explain must be true, "text", "json" or false', 'explain')
  const flag = (name: string): boolean | undefined => {
    const value = body[name]
    if (value === undefined || value === null) return undefined
    if (typeof value !== 'boolean') throw refuse(`${name} must be true or false`, name)
    return value
  }
  const whole = (name: string): number | undefined => {
    const value = body[name]
    if (value === undefined || value === null) return undefined
    if (typeof value !== 'number' || !Number.isInteger(value)) throw refuse(`${name} must be a whole number`, name)
    return value
  }
  const parameters = body.parameters === undefined || body.parameters === null ? undefined : body.parameters
  if (parameters !== undefined && !Array.isArray(parameters)) throw refuse('parameters must be an array of values for $1, $2...', 'parameters')
  const input: SqlRunInput = {
    query: body.query,
    role,
    user: user?.trim(),
    explain,
    analyze: flag('analyze'),
    readOnly: flag('read_only'),
    limit: whole('limit'),
    offset: whole('offset'),
    parameters,
  }
  checkSqlRun(input)
  return input
}

/** The checks every run passes, from any of its callers (the CLI builds its input itself). */
export function checkSqlRun(input: SqlRunInput): SqlStatement[] {
  if (input.query.length > MAX_QUERY_CHARS) throw refuse(`query must be at most ${MAX_QUERY_CHARS} characters, got ${input.query.length}`, 'query')
  if (!(SQL_ROLES as readonly string[]).includes(input.role)) throw refuse(`role must be one of ${SQL_ROLES.join(', ')}`, 'role')
  if (input.role === 'authenticated' && input.user === undefined) throw refuse('role authenticated needs user: whom to run as (an email or id)', 'user')
  if (input.user !== undefined && input.role !== 'authenticated') throw refuse(`user goes with role authenticated, not ${input.role}`, 'user')
  if (input.analyze === true && input.explain === undefined) throw refuse('analyze goes with explain', 'analyze')
  if (typeof input.limit === 'number' && !(input.limit >= 1 && input.limit <= MAX_PAGE_ROWS)) throw refuse(`limit must be from 1 to ${MAX_PAGE_ROWS}, got ${input.limit}`, 'limit')
  if (input.offset !== undefined && !(input.offset >= 0 && input.offset <= 1_000_000)) throw refuse(`offset must be from 0 to 1000000, got ${input.offset}`, 'offset')
  const statements = splitStatements(input.query)
  if (statements.length === 0) throw refuse('query holds no statement (only blanks or comments)', 'query')
  const control = statements.findIndex((statement) => controlsTransaction(statement.words))
  if (control !== -1) {
    const at = lineAndColumn(input.query, charactersBefore(input.query, statements[control]!.start + leadingBlank(statements[control]!.text)) + 1)
    throw refuse(
      `statement ${control + 1} (${statements[control]!.words.slice(0, 2).join(' ').toUpperCase()}, line ${at.line}) would end the run's transaction: a run is one transaction, committed when every statement succeeds; leave out BEGIN, COMMIT and ROLLBACK`,
      'query',
    )
  }
  if (input.parameters !== undefined && input.parameters.length > 0 && statements.length > 1) throw refuse('parameters go with a text of one statement', 'parameters')
  return statements
}

/** Blanks and comments before a statement's first word (a UTF-16 length). */
function leadingBlank(text: string): number {
  const match = /^(?:\s+|--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/)*/.exec(text)
  return match?.[0].length ?? 0
}

interface RunAs {
  login: 'owner' | 'api'
  /** Makes the open transaction the chosen role's, with its timeouts. */
  setup: string
  timeoutMs: number
  user?: { id: string; email: string | null }
}

/** The identity a request of the Data API would carry for the role (the key's claims, or a token's signed for the user). */
async function runAs(controlPlane: ControlPlane, project: ProjectRecord, input: SqlRunInput, readOnly: boolean, context: SqlEditorContext): Promise<RunAs> {
  const timeouts = project.roleTimeouts
  if (input.role === 'owner') {
    const items = [
      `set_config('statement_timeout', '${OWNER_STATEMENT_TIMEOUT_MS}', true)`,
      `set_config('idle_in_transaction_session_timeout', '${timeouts.idleInTransactionTimeoutMs}', true)`,
      ...(readOnly ? [`set_config('transaction_read_only', 'on', true)`] : []),
    ]
    return { login: 'owner', setup: `select ${items.join(', ')}`, timeoutMs: OWNER_STATEMENT_TIMEOUT_MS }
  }
  let token = input.role === 'service_role' ? project.serviceRoleKey : project.anonKey
  let user: RunAs['user']
  if (input.role === 'authenticated') {
    const lookup = { addressing: context.addressing, mail: context.mail ?? NO_MAIL }
    let found
    try {
      found = await findAuthUser(controlPlane, project.ref, input.user!, lookup)
    } catch (error) {
      // Auth's refusal of a user it does not have (or of Auth being off), as this API's 400 naming the field.
      if (BaseplaneError.is(error) && error.status < 500) throw refuse(error.message, 'user')
      throw error
    }
    token = await authUserToken(controlPlane, project.ref, found, USER_TOKEN_SECONDS, lookup)
    user = { id: found.id, email: found.email ?? null }
  }
  let identity: RequestIdentity
  try {
    identity = await callerOf(project, token)
  } catch (error) {
    // A user whose role the project no longer has: the gate would refuse the request.
    if (BaseplaneError.is(error)) throw refuse(error.message, 'user')
    throw error
  }
  return { login: 'api', setup: identityStatement(identity, timeouts, readOnly), timeoutMs: timeouts.statementTimeoutMs[input.role], user }
}

/** Finding a user sends no mail: what Auth's scope asks for, never used. */
const NO_MAIL: AuthUsersContext['mail'] = { smtpUrl: undefined, from: 'baseplane' }

/** Every value as PostgreSQL's text: what psql shows, exact for numerics, dates and bigints. */
const TEXT_TYPES = { getTypeParser: () => (value: string) => value }

/** node-postgres's parsers (numbers, booleans, JSON), but dates and times as PostgreSQL writes them, not as a JavaScript Date in this process's zone. */
const DATE_OIDS = new Set([1082, 1083, 1114, 1184, 1266])
const JSON_TYPES = {
  getTypeParser: (oid: number) => (DATE_OIDS.has(oid) ? (value: string) => value : pg.types.getTypeParser(oid, 'text')),
}

interface StatementResult {
  fields: Array<{ name: string; dataTypeID: number; dataTypeModifier: number }>
  rows: unknown[][]
  more: boolean
  rowCount: number | null
  command: string | null
}

const tooManyRows = (most: number) =>
  new BaseplaneError('too_many_rows', `The last statement answers more than ${most} rows, the most one answer carries; the run was rolled back. Add a LIMIT, or page it with "format": "table"`, 400)

/** Thrown inside a run that passed its deadline. */
class Deadline extends Error {}

/**
 * Reads the statement's rows through a cursor: the first `skip` dropped,
 * then up to `keep` kept, then one more to know whether there are more;
 * `keep` Infinity reads every row (a statement before the last, which must
 * run whole), keeping none when `discard`.
 */
async function readStatement(
  client: pg.Client,
  text: string,
  values: unknown[] | undefined,
  page: { skip: number; keep: number; discard?: boolean },
  types: typeof TEXT_TYPES | typeof JSON_TYPES,
  deadlineMs: number,
): Promise<StatementResult> {
  const cursor = client.query(new Cursor(text, values as never, { rowMode: 'array', types: types as never }))
  // One deadline for the statement, across its reads: PostgreSQL's timeout counts each fetch apart, so a select trickling rows would otherwise never meet it.
  const until = Date.now() + deadlineMs
  const left = () => Math.max(0, until - Date.now())
  const kept: unknown[][] = []
  let seen = 0
  let ended = false
  let result: { fields?: StatementResult['fields']; rowCount?: number | null; command?: string } = {}
  {
    while (seen < page.skip + page.keep + 1) {
      const batch = Math.min(1000, page.skip + page.keep + 1 - seen)
      const rows = await withinDeadline(
        new Promise<unknown[][]>((resolve, reject) =>
          cursor.read(batch, (error: Error | undefined, rows: unknown[][], answer: typeof result) => {
            if (error) return reject(error)
            result = answer ?? result
            resolve(rows)
          }),
        ),
        left(),
      )
      for (const row of rows) {
        if (!page.discard && seen >= page.skip && seen < page.skip + page.keep) kept.push(row)
        seen++
      }
      if (rows.length < batch) {
        ended = true
        break
      }
    }
  }
  // Past the page: the portal closed (a select is not read further). After an error or a deadline nothing is closed: the run ends.
  if (!ended) await withinDeadline(cursor.close(), left())
  const fields = (result.fields ?? []).map((f) => ({ name: f.name, dataTypeID: f.dataTypeID, dataTypeModifier: f.dataTypeModifier }))
  const selected = fields.length > 0
  return {
    fields,
    rows: kept,
    more: !ended,
    // A cursor's command tag carries the count of a write; a select's rows are the ones read, when it ended.
    rowCount: !ended ? null : selected ? seen : (result.rowCount ?? null),
    command: result.command ?? (selected ? 'SELECT' : null),
  }
}

async function withinDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([work, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Deadline()), ms)))])
  } finally {
    clearTimeout(timer)
  }
}

/** PostgreSQL's error as the run's, its position counted in the whole text. */
function sqlErrorOf(error: unknown, statement: SqlStatement, index: number, prefixChars: number, text: string): SqlError | undefined {
  const e = error as { code?: unknown; message?: string; detail?: string; hint?: string; position?: string; where?: string }
  if (typeof e.code !== 'string' || !/^[0-9A-Z]{5}$/.test(e.code)) return undefined
  const raw = e.position === undefined ? undefined : Number(e.position) - prefixChars
  const position = raw === undefined || !(raw >= 1) ? undefined : charactersBefore(text, statement.start) + raw
  return new SqlError({ sqlstate: e.code, message: e.message ?? 'statement failed', detail: e.detail, hint: e.hint, position, where: e.where, statement: index + 1, text })
}

/** Runs `input` as the caller, records it in the caller's history, and answers the last statement's result (or throws its SqlError). */
export async function runSql(controlPlane: ControlPlane, ref: string, caller: Caller, input: SqlRunInput, context: SqlEditorContext): Promise<SqlResultView> {
  const statements = checkSqlRun(input)
  const project = await getProject(controlPlane, ref)
  const standing = standingOn(caller, project.ref)
  if (standing === undefined) throw memberErrors.notAMember(project.ref)
  if (project.state === 'suspended') throw platformErrors.projectSuspended()
  if (project.state === 'paused') throw platformErrors.projectPaused()
  const readOnly = input.readOnly === true || standing === 'read-only'
  const as = await runAs(controlPlane, project, input, readOnly, context)
  const serverUrl = await controlPlane.serverUrl(project.dbServer)
  const deadlineMs = (as.timeoutMs > 0 ? as.timeoutMs : 3_600_000) + DEADLINE_MARGIN_MS
  const page = input.limit === 'all' ? { skip: 0, keep: MAX_ALL_ROWS } : { skip: input.offset ?? 0, keep: input.limit ?? DEFAULT_PAGE_ROWS }
  const types = input.values === 'json' ? JSON_TYPES : TEXT_TYPES
  const explainPrefix = input.explain === undefined ? '' : `explain (format ${input.explain}${input.analyze ? ', analyze' : ''})\n`
  const started = Date.now()
  const record = (rowCount: number | null, errorCode: string | null) =>
    withPoolTransaction(controlPlane.catalogue, (client) =>
      db.insertSqlRun(
        client,
        {
          ref: project.ref,
          actor: actorOf(caller),
          query: input.query,
          role: input.role,
          userId: as.user?.id ?? null,
          explain: input.explain !== undefined,
          readOnly,
          durationMs: Date.now() - started,
          rowCount,
          errorCode,
        },
        HISTORY_KEPT,
      ),
    ).catch((error: unknown) => log.error('could not record a SQL editor run in its history', error, { ref: project.ref }))

  let outcome: { last: StatementResult; columns: SqlColumn[]; committed: boolean }
  try {
    outcome = await withProjectLogin(
      serverUrl,
      project,
      as.login,
      async (client) => {
        await client.query(`begin; ${as.setup}`)
        let index = 0
        try {
          let last: StatementResult | undefined
          for (; index < statements.length; index++) {
            const statement = statements[index]!
            const isLast = index === statements.length - 1
            const text = isLast ? explainPrefix + statement.text : statement.text
            const result = await readStatement(client, text, isLast ? input.parameters : undefined, isLast ? page : { skip: 0, keep: Infinity, discard: true }, types, deadlineMs)
            // A belt beside the refusal of BEGIN/COMMIT/ROLLBACK: a statement that still ended the transaction stops the run.
            if (client.getTransactionStatus() === 'I') throw new SqlError({ sqlstate: '25000', message: 'the statement ended the run\'s transaction', statement: index + 1, text: input.query })
            if (isLast) last = result
          }
          if (input.wholeResult && last!.more) throw tooManyRows(page.keep)
          const columns = await columnsOf(client, last!)
          const rollback = input.explain !== undefined
          await client.query(rollback ? 'rollback' : 'commit')
          return { last: last!, columns, committed: !rollback }
        } catch (error) {
          if (error instanceof Deadline) {
            ;(client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy()
            // Its statement_timeout may be off (the text can set it): end the backend, not only the socket.
            const pid = (client as unknown as { processID?: number }).processID
            if (pid !== undefined) await withClient(serverUrl, (admin) => db.terminateBackend(admin, pid)).catch(() => {})
            throw new SqlError({
              sqlstate: '57014',
              message: `canceling statement: it ran past the run's deadline (${as.timeoutMs} ms, the ${input.role === 'owner' ? "owner's cap" : `${input.role} role's statement timeout`}, and ${DEADLINE_MARGIN_MS} ms more)`,
              statement: index + 1,
              text: input.query,
            })
          }
          if (client.getTransactionStatus() !== 'I') await client.query('rollback').catch(() => {})
          const statement = statements[Math.min(index, statements.length - 1)]!
          const prefix = index === statements.length - 1 ? Array.from(explainPrefix).length : 0
          throw sqlErrorOf(error, statement, index, prefix, input.query) ?? error
        }
      },
      deadlineMs,
    )
  } catch (error) {
    if (error instanceof SqlError) {
      await record(null, error.sqlstate)
      if (error.sqlstate === '25006' && standing === 'read-only') throw error.withHint(`Your role on project ${project.ref} is read-only: your runs are read-only transactions.`)
    } else if (BaseplaneError.is(error) && error.status < 500) await record(null, error.code)
    throw error
  }
  const { last, columns, committed } = outcome
  await record(last.rowCount, null)
  const view: SqlResultView = {
    ref: project.ref,
    role: input.role,
    ...(as.user ? { user: as.user } : {}),
    read_only: readOnly,
    statements: statements.length,
    command: last.command,
    columns,
    rows: last.rows,
    offset: page.skip,
    limit: page.keep,
    more: last.more,
    row_count: last.rowCount,
    committed,
    duration_ms: Date.now() - started,
  }
  if (input.explain !== undefined) {
    const cells = last.rows.map((row) => row[0])
    const plan = input.explain === 'json' ? (typeof cells[0] === 'string' ? JSON.parse(cells[0]) : cells[0]) : cells.join('\n')
    view.explain = { format: input.explain, analyze: input.analyze === true, plan }
  }
  return view
}

async function columnsOf(client: pg.Client, result: StatementResult): Promise<SqlColumn[]> {
  const names = await db.typeNames(client, result.fields.map((f) => ({ oid: f.dataTypeID, modifier: f.dataTypeModifier })))
  return result.fields.map((f, i) => ({ name: f.name, type: names[i] ?? String(f.dataTypeID), type_oid: f.dataTypeID }))
}

/** A result as Supabase's management API answers it: an array of row objects (a later column of the same name wins). */
export function rowObjects(view: SqlResultView): Array<Record<string, unknown>> {
  return view.rows.map((row) => Object.fromEntries(view.columns.map((column, i) => [column.name, row[i]])))
}
