// SQL of a project's migrations ledger (control-plane/migrations.ts), the
// table Supabase's CLI keeps (pkg/migration/history.go) with the columns its
// Studio and management API add, so a project moved from Supabase keeps its
// history and Supabase's tools read ours. Run on the owner's connection: the
// owner makes and owns the ledger, as `supabase db push` makes it as postgres.
import type { Queryable } from './queryable.ts'

/** The CLI's own statements, in its order (each idempotent), then Studio's two columns. */
export const LEDGER_DDL = [
  'create schema if not exists supabase_migrations',
  'create table if not exists supabase_migrations.schema_migrations (version text not null primary key)',
  'alter table supabase_migrations.schema_migrations add column if not exists statements text[]',
  'alter table supabase_migrations.schema_migrations add column if not exists name text',
  'alter table supabase_migrations.schema_migrations add column if not exists created_by text',
  'alter table supabase_migrations.schema_migrations add column if not exists idempotency_key text unique',
]

/** The columns of the CLI's ledger, and all of them (Studio's `created_by` and `idempotency_key` too). */
export const CLI_LEDGER_COLUMNS = ['version', 'statements', 'name']
export const LEDGER_COLUMNS = [...CLI_LEDGER_COLUMNS, 'created_by', 'idempotency_key']

export interface LedgerRow {
  version: string
  name: string | null
  statements: string[] | null
}

export async function ensureLedger(db: Queryable): Promise<void> {
  for (const statement of LEDGER_DDL) await db.query(statement)
}

/** The ledger's columns (an old CLI's ledger has only `version`), none when there is no ledger. */
export async function ledgerColumns(db: Queryable): Promise<Set<string>> {
  const { rows } = await db.query<{ name: string }>(
    `select a.attname as name from pg_catalog.pg_attribute a where a.attrelid = to_regclass('supabase_migrations.schema_migrations') and a.attnum > 0 and not a.attisdropped`,
  )
  return new Set(rows.map((row) => row.name))
}

/** Every recorded migration, by version; `name` and `statements` null where the ledger has no such column. */
export async function ledgerRows(db: Queryable, columns: Set<string>): Promise<LedgerRow[]> {
  const name = columns.has('name') ? 'name' : 'null::text as name'
  const statements = columns.has('statements') ? 'statements' : 'null::text[] as statements'
  const { rows } = await db.query<LedgerRow>(`select version, ${name}, ${statements} from supabase_migrations.schema_migrations order by version`)
  return rows
}

/** One push at a time per project database (a session lock: the ledger is read again once it is held). */
export async function lockLedger(db: Queryable): Promise<void> {
  await db.query(`select pg_advisory_lock(hashtext('supabase_migrations.schema_migrations'))`)
}

export async function unlockLedger(db: Queryable): Promise<void> {
  await db.query(`select pg_advisory_unlock(hashtext('supabase_migrations.schema_migrations'))`)
}

export async function recordMigration(db: Queryable, columns: Set<string>, row: { version: string; name: string; statements: string[]; createdBy: string }): Promise<void> {
  if (columns.has('created_by')) {
    await db.query('insert into supabase_migrations.schema_migrations (version, name, statements, created_by) values ($1, $2, $3, $4)', [row.version, row.name, row.statements, row.createdBy])
  } else {
    await db.query('insert into supabase_migrations.schema_migrations (version, name, statements) values ($1, $2, $3)', [row.version, row.name, row.statements])
  }
}
