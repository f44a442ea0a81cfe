// A project's own migrations (`baseplane db push`, `baseplane db
// migrations`, the admin API's `/database/migrations`;
// docs/developer-tools.md): a folder of `<version>_<name>.sql` files, as
// Supabase's CLI keeps them, applied in the order of their versions as the
// project's owner role, each in its own transaction, and recorded in the
// ledger Supabase uses, `supabase_migrations.schema_migrations` (version,
// name, statements), so a project moved from Supabase keeps its history and
// Supabase's tools read ours.
//
// A migration already recorded whose statements differ from the file's now
// (compared without comments, whitespace and `;`: lib/sql-statements.ts
// comparableSql, against the statements the ledger stores, as Supabase's
// does; no hash of our own) is refused before anything is applied. A row
// recorded without statements (Supabase's `migration repair`) is taken as
// it is. One push at a time per database (an advisory lock), the ledger
// read again under it, so two pushes never apply a migration twice.
import fs from 'node:fs'
import path from 'node:path'
import type pg from 'pg'
import { BaseplaneError, platformErrors } from '../lib/errors.ts'
import { describeError } from '../lib/log.ts'
import { holdDeadline } from '../lib/db/round-trip-deadline.ts'
import { charactersBefore, comparableSql, lineAndColumn, splitStatements, type SqlStatement } from '../lib/sql-statements.ts'
import { actorOf, OPERATOR, type Caller } from './access.ts'
import type { ControlPlane } from './control-plane.ts'
import { getProject } from './projects.ts'
import { withProjectLogin } from './project-database.ts'
import * as db from './db/migrations.ts'

/** Supabase's CLI's pattern of a migration's file name (pkg/migration/file.go): the version is the digits before the first `_`. */
export const MIGRATION_FILE = /^([0-9]+)_(.*)\.sql$/

/** The folder `db push` reads when none is given, as Supabase's CLI. */
export const DEFAULT_MIGRATIONS_DIR = 'supabase/migrations'

/** A migration's round trips may take this long (an index on a large table), past the control plane's usual minute. */
const MIGRATION_DEADLINE_MS = 600_000

/** At most this many migrations in one push (a folder of years of work is a few hundred). */
const MAX_MIGRATIONS = 2000

export interface Migration {
  version: string
  name: string
  statements: string[]
  /** Where it was read from (a file), to name it and its lines in a refusal. */
  file?: string
  /** The file's text and where each statement starts in it, for the line of an error. */
  source?: { text: string; offsets: number[] }
}

export interface PushView {
  ref: string
  /** Applied now, in order. */
  applied: Array<{ version: string; name: string }>
  /** How many of those given were recorded already (and left as they are). */
  already_applied: number
}

export type MigrationState = 'applied' | 'pending' | 'changed' | 'applied, no local file' | 'applied, statements not recorded'

export interface MigrationsView {
  ref: string
  /** Whether local files were compared (`--dir`): without them nothing is pending or changed. */
  compared: boolean
  migrations: Array<{ version: string; name: string; state: MigrationState }>
}

const migrationFailed = (message: string, hint?: string) => new BaseplaneError('migration_failed', message, 400, hint)

/** The project's owner role may log in: a suspended or paused project's login roles are NOLOGIN (suspension.ts). */
async function ownersProject(controlPlane: ControlPlane, ref: string) {
  const project = await getProject(controlPlane, ref)
  if (project.state !== 'active') {
    throw new BaseplaneError('project_not_active', `Project ${project.ref} is ${project.state}: its owner role cannot log in until it is resumed (baseplane projects resume ${project.ref})`, 409)
  }
  return project
}

/** Versions compare as numbers (`9_a` before `10_b`), as timestamps of one length compare as text. */
function byVersion(a: { version: string }, b: { version: string }): number {
  const x = BigInt(a.version)
  const y = BigInt(b.version)
  return x < y ? -1 : x > y ? 1 : 0
}

function checked(migrations: Migration[], where: string): Migration[] {
  if (migrations.length > MAX_MIGRATIONS) throw platformErrors.invalidArgument(`${where} holds ${migrations.length} migrations; at most ${MAX_MIGRATIONS} are applied at once`)
  const seen = new Map<string, Migration>()
  for (const migration of migrations) {
    const other = seen.get(migration.version)
    if (other) throw platformErrors.invalidArgument(`${where} has two migrations of version ${migration.version} (${label(other)} and ${label(migration)}): a version is applied once`)
    seen.set(migration.version, migration)
  }
  return [...migrations].sort(byVersion)
}

/** How a migration is named in messages: its file, else `version_name`. */
function label(migration: Migration): string {
  return migration.file ?? (migration.name === '' ? migration.version : `${migration.version}_${migration.name}`)
}

/**
 * The folder's migrations (`*.sql`, in version order). A `.sql` file not
 * named `<version>_<name>.sql` is refused, naming it; other files and
 * folders are not migrations and are left alone.
 */
export function readMigrationsFolder(dir: string): Migration[] {
  let entries: fs.Dirent[]
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true })
  } catch (error) {
    throw platformErrors.invalidArgument(`cannot read the migrations folder ${dir}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'it does not exist' : describeError(error)}`)
  }
  const migrations: Migration[] = []
  for (const entry of entries) {
    if (!entry.isFile() || !entry.name.endsWith('.sql')) continue
    const match = MIGRATION_FILE.exec(entry.name)
    const file = path.join(dir, entry.name)
    if (!match) {
      throw platformErrors.invalidArgument(`${file} is not named as a migration: <version>_<name>.sql, the version the digits before the first _ (Supabase's <timestamp>_<name>.sql, such as 20240101120000_create_posts.sql); rename it or move it out of ${dir}`)
    }
    const text = fs.readFileSync(file, 'utf8')
    const statements = splitStatements(text)
    migrations.push({ version: match[1]!, name: match[2]!, statements: statements.map(statementText), file, source: { text, offsets: statements.map(statementOffset) } })
  }
  return checked(migrations, dir)
}

/** A UTC timestamp as Supabase's management API versions a migration sent without one: YYYYMMDDHHMMSS. */
function timestampVersion(now = new Date()): string {
  return now.toISOString().replace(/[-:T]/g, '').slice(0, 14)
}

/**
 * The migrations of an admin API body: `{ migrations: [{ version, name,
 * statements: [...] | query: "..." }] }` (what `db push` sends), or
 * Supabase's management API's one `{ query, name? }`, versioned now.
 */
export function migrationsFromBody(body: Record<string, unknown>): Migration[] {
  const refuse = (message: string, field: string) => platformErrors.invalidArgument(message, field)
  if (body.migrations === undefined) {
    if (typeof body.query !== 'string' || body.query.trim() === '') throw refuse('the body needs migrations: [{ version, name, statements }] (or Supabase\'s { query, name })', 'migrations')
    if (body.name !== undefined && typeof body.name !== 'string') throw refuse('name must be a string', 'name')
    return [{ version: timestampVersion(), name: (body.name as string | undefined) ?? '', statements: splitStatements(body.query).map(statementText) }]
  }
  if (!Array.isArray(body.migrations)) throw refuse('migrations must be a list of { version, name, statements }', 'migrations')
  const migrations = body.migrations.map((item: unknown, i): Migration => {
    const at = `migrations[${i}]`
    if (typeof item !== 'object' || item === null || Array.isArray(item)) throw refuse(`${at} must be an object { version, name, statements }`, 'migrations')
    const { version, name, statements, query } = item as Record<string, unknown>
    if (typeof version !== 'string' || !/^[0-9]{1,40}$/.test(version)) throw refuse(`${at}.version must be a string of digits (the file's prefix, such as "20240101120000"), got ${JSON.stringify(version)?.slice(0, 60)}`, 'migrations')
    if (name !== undefined && typeof name !== 'string') throw refuse(`${at}.name must be a string`, 'migrations')
    if ((statements === undefined) === (query === undefined)) throw refuse(`${at} needs either statements (a list of SQL statements) or query (the file's SQL)`, 'migrations')
    if (query !== undefined && typeof query !== 'string') throw refuse(`${at}.query must be a string`, 'migrations')
    if (statements !== undefined && (!Array.isArray(statements) || !statements.every((s) => typeof s === 'string'))) throw refuse(`${at}.statements must be a list of strings`, 'migrations')
    return { version, name: name ?? '', statements: query !== undefined ? splitStatements(query as string).map(statementText) : (statements as string[]) }
  })
  return checked(migrations, 'migrations')
}

/**
 * The ledger made where missing (the CLI's statements, then Studio's two
 * columns), answering its columns. ALTER needs the table's owner, which a
 * ledger restored from elsewhere may not be: one with the CLI's three
 * columns is used as it is, without Studio's.
 */
async function ensureLedger(client: pg.ClientBase): Promise<Set<string>> {
  const have = await db.ledgerColumns(client)
  if (db.LEDGER_COLUMNS.every((column) => have.has(column))) return have
  await client.query('begin')
  try {
    await db.ensureLedger(client)
    await client.query('commit')
    return await db.ledgerColumns(client)
  } catch (error) {
    await client.query('rollback').catch(() => {})
    if (db.CLI_LEDGER_COLUMNS.every((column) => have.has(column))) return have
    throw migrationFailed(`could not make the migrations ledger supabase_migrations.schema_migrations as the project's owner: ${describeError(error)}`)
  }
}

/** Which of `migrations` are recorded with other statements than they have now. */
function changedOnes(migrations: Migration[], rows: db.LedgerRow[]): Migration[] {
  const recorded = new Map(rows.map((row) => [row.version, row]))
  return migrations.filter((migration) => {
    const row = recorded.get(migration.version)
    return row !== undefined && row.statements !== null && comparableSql(row.statements) !== comparableSql(migration.statements)
  })
}

/** A statement as the ledger records it: its text trimmed, as Supabase's CLI stores it. */
const statementText = (statement: SqlStatement): string => statement.text.trim()

/** Where a statement's trimmed text starts in its file (a UTF-16 index). */
const statementOffset = (statement: SqlStatement): number => statement.start + (statement.text.length - statement.text.trimStart().length)

/** PostgreSQL's error on statement `index` of `migration`, with where it points (the file's line when read from a file). */
function failureOf(migration: Migration, index: number, error: unknown, applied: Migration[], after: number): BaseplaneError {
  const pgError = error as { message?: string; code?: string; position?: string; detail?: string; hint?: string }
  const statement = migration.statements[index]!
  let where = `statement ${index + 1}`
  // PostgreSQL's position is 1-based, in characters of the statement it was sent.
  if (pgError.position !== undefined && /^\d+$/.test(pgError.position)) {
    const position = Number(pgError.position)
    const start = migration.source?.offsets[index]
    const at = start === undefined ? lineAndColumn(statement, position) : lineAndColumn(migration.source!.text, charactersBefore(migration.source!.text, start) + position)
    where += start === undefined ? ` (line ${at.line}, column ${at.column} of the statement)` : ` (line ${at.line}, column ${at.column})`
  } else if (migration.source?.offsets[index] !== undefined) {
    where += ` (from line ${lineAndColumn(migration.source.text, charactersBefore(migration.source.text, migration.source.offsets[index]!) + 1).line})`
  }
  const sqlstate = pgError.code === undefined ? '' : ` (SQLSTATE ${pgError.code})`
  const detail = pgError.detail ? `; ${pgError.detail}` : ''
  const before = applied.length === 0 ? 'nothing was applied before it' : `applied before it: ${applied.map(label).join(', ')}`
  const rest = after === 0 ? 'it was rolled back' : `it and the ${after} after it were not applied`
  return migrationFailed(`${label(migration)} failed at ${where}: ${pgError.message ?? describeError(error)}${sqlstate}${detail}; ${rest}, ${before}`, pgError.hint)
}

/**
 * Applies the migrations not recorded yet, in version order, each in its own
 * transaction as the project's owner, recording each in the same
 * transaction. Refused whole, before anything runs, when a recorded one
 * changed. A failing one is rolled back and stops the push; those before it
 * stay applied.
 */
export async function applyMigrations(controlPlane: ControlPlane, ref: string, migrations: Migration[], options: { caller?: Caller } = {}): Promise<PushView> {
  const ordered = checked(migrations, 'the migrations')
  const project = await ownersProject(controlPlane, ref)
  const createdBy = actorOf(options.caller ?? OPERATOR)
  return withProjectLogin(await controlPlane.serverUrl(project.dbServer), project, 'owner', async (client) => {
    holdDeadline(client, MIGRATION_DEADLINE_MS)
    await db.lockLedger(client)
    try {
      const columns = await ensureLedger(client)
      const rows = await db.ledgerRows(client, columns)
      const changed = changedOnes(ordered, rows)
      if (changed.length > 0) {
        throw new BaseplaneError(
          'migration_changed',
          `${changed.map(label).join(', ')} ${changed.length === 1 ? 'was' : 'were'} applied with other statements than ${changed.length === 1 ? 'its file has' : 'their files have'} now; nothing was applied. A migration applied stays as it ran: put the change in a new migration (or restore the file)`,
          409,
        )
      }
      const recorded = new Set(rows.map((row) => row.version))
      const pending = ordered.filter((migration) => !recorded.has(migration.version))
      const applied: Migration[] = []
      for (const [n, migration] of pending.entries()) {
        await client.query('begin')
        let index = 0
        try {
          for (; index < migration.statements.length; index++) await client.query(migration.statements[index]!)
          await db.recordMigration(client, columns, { version: migration.version, name: migration.name, statements: migration.statements, createdBy })
          await client.query('commit')
        } catch (error) {
          await client.query('rollback').catch(() => {})
          if ((error as { code?: unknown }).code === undefined || typeof (error as { severity?: unknown }).severity !== 'string') throw error
          if (index >= migration.statements.length) throw migrationFailed(`${label(migration)} ran but could not be recorded in supabase_migrations.schema_migrations, so it was rolled back: ${describeError(error)}`)
          throw failureOf(migration, index, error, applied, pending.length - n - 1)
        }
        applied.push(migration)
      }
      return { ref: project.ref, applied: applied.map(({ version, name }) => ({ version, name })), already_applied: ordered.length - pending.length }
    } finally {
      await db.unlockLedger(client).catch(() => {})
    }
  })
}

/**
 * The ledger's migrations, and with `local` (a folder's) each local one's
 * state too: pending, changed since it was applied, or applied; recorded
 * ones with no local file are listed as such.
 */
export async function listMigrations(controlPlane: ControlPlane, ref: string, local?: Migration[]): Promise<MigrationsView> {
  const project = await ownersProject(controlPlane, ref)
  const rows = await withProjectLogin(await controlPlane.serverUrl(project.dbServer), project, 'owner', async (client) => {
    const columns = await db.ledgerColumns(client)
    return columns.has('version') ? db.ledgerRows(client, columns) : []
  })
  const recorded = new Map(rows.map((row) => [row.version, row]))
  const entries: MigrationsView['migrations'] = []
  const localOnes = local === undefined ? [] : checked(local, 'the migrations')
  const changed = new Set(changedOnes(localOnes, rows).map((migration) => migration.version))
  for (const migration of localOnes) {
    const row = recorded.get(migration.version)
    const state: MigrationState = row === undefined ? 'pending' : changed.has(migration.version) ? 'changed' : row.statements === null ? 'applied, statements not recorded' : 'applied'
    entries.push({ version: migration.version, name: migration.name, state })
  }
  const localVersions = new Set(localOnes.map((migration) => migration.version))
  for (const row of rows) {
    if (!localVersions.has(row.version)) entries.push({ version: row.version, name: row.name ?? '', state: local === undefined ? 'applied' : 'applied, no local file' })
  }
  return { ref: project.ref, compared: local !== undefined, migrations: entries.sort(byVersion) }
}
