// SQL of the SQL editor (control-plane/sql-editor.ts, sql-history.ts): in the catalogue, a
// caller's history of runs and saved snippets (sql/catalogue/0025); in a
// project's database, the names of result columns' types and ending a run
// that outlived its deadline (as the server's admin role).
import type { Queryable } from './queryable.ts'

export interface SqlRunRow {
  id: string
  query: string
  role: string
  user_id: string | null
  explain: boolean
  read_only: boolean
  at: Date
  duration_ms: number
  row_count: string | null
  error_code: string | null
}

export interface NewSqlRun {
  ref: string
  actor: string
  query: string
  role: string
  userId: string | null
  explain: boolean
  readOnly: boolean
  durationMs: number
  rowCount: number | null
  errorCode: string | null
}

/** Records a run and drops the caller's runs past the newest `keep`, in one statement each (the caller holds the transaction). */
export async function insertSqlRun(db: Queryable, run: NewSqlRun, keep: number): Promise<void> {
  await db.query(
    `insert into baseplane.sql_runs (ref, actor, query, role, user_id, explain, read_only, duration_ms, row_count, error_code)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [run.ref, run.actor, run.query, run.role, run.userId, run.explain, run.readOnly, run.durationMs, run.rowCount, run.errorCode],
  )
  await db.query(
    `delete from baseplane.sql_runs
      where ref = $1 and actor = $2
        and id < (select min(id) from (select id from baseplane.sql_runs where ref = $1 and actor = $2 order by id desc limit $3) newest)`,
    [run.ref, run.actor, keep],
  )
}

/** The caller's runs on the project, newest first. */
export async function sqlRuns(db: Queryable, ref: string, actor: string, limit: number): Promise<SqlRunRow[]> {
  const { rows } = await db.query<SqlRunRow>(
    `select id::text, query, role, user_id::text, explain, read_only, at, duration_ms, row_count::text, error_code
       from baseplane.sql_runs where ref = $1 and actor = $2 order by id desc limit $3`,
    [ref, actor, limit],
  )
  return rows
}

export interface SqlSnippetRow {
  id: string
  name: string
  query: string
  created_at: Date
  updated_at: Date
}

const SNIPPET_COLUMNS = 'id::text, name, query, created_at, updated_at'

/** The caller's snippets on the project, by name. */
export async function sqlSnippets(db: Queryable, ref: string, actor: string): Promise<SqlSnippetRow[]> {
  const { rows } = await db.query<SqlSnippetRow>(
    `select ${SNIPPET_COLUMNS} from baseplane.sql_snippets where ref = $1 and actor = $2 order by name, id`,
    [ref, actor],
  )
  return rows
}

export async function countSqlSnippets(db: Queryable, ref: string, actor: string): Promise<number> {
  const { rows } = await db.query<{ count: number }>('select count(*)::int as count from baseplane.sql_snippets where ref = $1 and actor = $2', [ref, actor])
  return rows[0]!.count
}

/** A new snippet; undefined when the caller already has one of that name (the unique key, so two saves at once cannot both make it). */
export async function insertSqlSnippet(db: Queryable, ref: string, actor: string, name: string, query: string): Promise<SqlSnippetRow | undefined> {
  const { rows } = await db.query<SqlSnippetRow>(
    `insert into baseplane.sql_snippets (ref, actor, name, query) values ($1, $2, $3, $4)
     on conflict on constraint sql_snippets_name_unique do nothing
     returning ${SNIPPET_COLUMNS}`,
    [ref, actor, name, query],
  )
  return rows[0]
}

/** Renames or rewrites one of the caller's snippets; 'missing' when it has none of that id, 'taken' when the new name is another's. */
export async function updateSqlSnippet(
  db: Queryable,
  ref: string,
  actor: string,
  id: string,
  change: { name?: string; query?: string },
): Promise<SqlSnippetRow | 'missing' | 'taken'> {
  try {
    const { rows } = await db.query<SqlSnippetRow>(
      `update baseplane.sql_snippets set name = coalesce($4, name), query = coalesce($5, query), updated_at = now()
        where ref = $1 and actor = $2 and id = $3
        returning ${SNIPPET_COLUMNS}`,
      [ref, actor, id, change.name ?? null, change.query ?? null],
    )
    return rows[0] ?? 'missing'
  } catch (error) {
    if ((error as { code?: string; constraint?: string }).constraint === 'sql_snippets_name_unique') return 'taken'
    throw error
  }
}

export async function deleteSqlSnippet(db: Queryable, ref: string, actor: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query('delete from baseplane.sql_snippets where ref = $1 and actor = $2 and id = $3', [ref, actor, id])
  return (rowCount ?? 0) > 0
}

/** PostgreSQL's names of these types, with their modifiers (`character varying(20)`, `numeric(10,2)`, `text[]`). */
export async function typeNames(db: Queryable, types: ReadonlyArray<{ oid: number; modifier: number }>): Promise<string[]> {
  if (types.length === 0) return []
  const { rows } = await db.query<{ name: string }>(
    `select format_type(t.oid, t.modifier) as name
       from unnest($1::oid[], $2::int[]) with ordinality as t(oid, modifier, n) order by t.n`,
    [types.map((t) => t.oid), types.map((t) => t.modifier)],
  )
  return rows.map((row) => row.name)
}

/** Ends a backend by its process id (a run that met its deadline: a statement_timeout its text turned off does not end it). */
export async function terminateBackend(db: Queryable, pid: number): Promise<void> {
  await db.query('select pg_terminate_backend($1)', [pid])
}
