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

export interface LedgerRow {
  version: string
  name: string | null
  statements: string[] | null
}

/** Whether the ledger exists yet (a project never pushed to has none). */
export async function ledgerExists(db: Queryable): Promise<boolean> {
  const { rows } = await db.query<{ found: boolean }>(`select to_regclass('supabase_migrations.schema_migrations') is not null as found`)
  return rows[0]!.found
}

export async function ensureLedger(db: Queryable): Promise<void> {
  for (const statement of LEDGER_DDL) await db.query(statement)
}

/** Every recorded migration, by version. */
export async function ledgerRows(db: Queryable): Promise<LedgerRow[]> {
  const { rows } = await db.query<LedgerRow>('select version, name, statements from supabase_migrations.schema_migrations order by version')
  return rows
}

/** One push at a time per project database (a session lock: the ledger is read again once it is held). */
export async function lockLedger(db: Queryable): Promise<void> {
  await db.query(`select pg_advisory_lock(hashtext('supabase_migrations.schema_migrations'))`)
}

export async function unlockLedger(db: Queryable): Promise<void> {
  await db.query(`select pg_advisory_unlock(hashtext('supabase_migrations.schema_migrations'))`)
}

export async function recordMigration(db: Queryable, row: { version: string; name: string; statements: string[]; createdBy: string }): Promise<void> {
  await db.query('insert into supabase_migrations.schema_migrations (version, name, statements, created_by) values ($1, $2, $3, $4)', [row.version, row.name, row.statements, row.createdBy])
}
