// Applies the versioned SQL files of sql/<set>/ (NNNN_name.sql) to a database,
// each once, all pending ones in one transaction under an advisory lock, so
// two processes upgrading the same database never both apply a file.
import fs from 'node:fs'
import path from 'node:path'
import type pg from 'pg'
import { escapeIdentifier, escapeLiteral } from 'pg'
import { ConfigError } from '../errors.ts'
import { PACKAGE_ROOT } from '../package-root.ts'
import { inTransaction } from './request-transaction.ts'
import { holdDeadline, releaseDeadline } from './round-trip-deadline.ts'

/** A folder of sql/: 'catalogue', 'project', or a product's own set (installed when it is enabled). */
export type MigrationSet = string

export const SQL_ROOT = path.join(PACKAGE_ROOT, 'sql')

interface Migration {
  version: number
  name: string
  sql: string
}

const loaded = new Map<string, Migration[]>()

export function migrationsOf(set: string, root: string = SQL_ROOT): Migration[] {
  const key = path.join(root, set)
  let list = root === SQL_ROOT ? loaded.get(key) : undefined
  if (list === undefined) {
    const folder = key
    list = fs
      .readdirSync(folder)
      .filter((file) => /^\d{4}_[a-z0-9_]+\.sql$/.test(file))
      .sort()
      .map((file) => ({
        version: Number(file.slice(0, 4)),
        name: file.slice(5, -4),
        sql: fs.readFileSync(path.join(folder, file), 'utf8'),
      }))
    loaded.set(key, list)
  }
  return list
}

/** Replaces psql-style :"name" (identifier) and :'name' (literal) variables. */
export function substitute(sql: string, vars: Record<string, string>): string {
  return sql.replace(/:(["'])([a-z_]+)\1/g, (whole, quote: string, name: string) => {
    const value = vars[name]
    if (value === undefined) throw new Error(`SQL variable ${name} is not set`)
    return quote === '"' ? escapeIdentifier(value) : escapeLiteral(value)
  })
}

/**
 * One migration run at a time per database: two processes starting at once
 * apply each migration once. (An advisory lock is a database's, not the
 * server's: see runScript for what is shared by the whole server.)
 */
const MIGRATION_BEGIN = `begin; select pg_advisory_xact_lock(hashtext('baseplane.migrations'))`

/**
 * What a run of a cluster-wide script meets when another process, connected
 * to another database of the same server (another catalogue's platform, or a
 * server URL naming another database), made the same role or changed the same
 * shared row at the same moment: the role's unique key, the role already
 * made, a shared catalogue row updated under it, a deadlock.
 */
function isConcurrentClusterChange(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: string; message?: string }
  return code === '23505' || code === '42710' || code === '40P01' || (code === 'XX000' && message === 'tuple concurrently updated')
}

/** Attempts of a cluster-wide script: each one that meets another's change sees it done the next time (the scripts are idempotent). */
const CLUSTER_SCRIPT_ATTEMPTS = 5

/**
 * Runs every file of an idempotent set (no versioning) in one transaction,
 * under the migrations' lock: two projects created at once by two processes
 * would otherwise update the same shared catalogue rows (roles, database
 * ACLs) together and one would fail with "tuple concurrently updated". The
 * lock holds only among processes connected to the same database, and roles
 * are the whole server's: a run that collides with another anyway is run
 * again, and finds the other's work done.
 */
export async function runScript(client: pg.ClientBase, set: string, vars: Record<string, string> = {}): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await inTransaction(client, async (client) => {
        for (const migration of migrationsOf(set)) await client.query(substitute(migration.sql, vars))
      }, MIGRATION_BEGIN)
      return
    } catch (error) {
      if (attempt >= CLUSTER_SCRIPT_ATTEMPTS || !isConcurrentClusterChange(error)) throw error
    }
  }
}

/**
 * Applies pending migrations of `set`; returns the versions applied now.
 * The caller's client must be connected as the platform's admin role.
 */
export async function migrate(
  client: pg.ClientBase,
  set: MigrationSet,
  vars: Record<string, string> = {},
  root: string = SQL_ROOT,
): Promise<number[]> {
  // A migration may rewrite a large table, and waits for another node's run: past the platform's usual deadline.
  holdDeadline(client, MIGRATION_DEADLINE_MS)
  try {
    return await migrateInTransaction(client, set, vars, root)
  } finally {
    releaseDeadline(client)
  }
}

/** A round trip of a migration (round-trip-deadline.ts): a hung server still ends it. */
const MIGRATION_DEADLINE_MS = 600_000

async function migrateInTransaction(client: pg.ClientBase, set: MigrationSet, vars: Record<string, string>, root: string): Promise<number[]> {
  return inTransaction(client, async (client) => {
    await client.query(
      `create schema if not exists baseplane;
       revoke all on schema baseplane from public;
       create table if not exists baseplane.migrations (
         migration_set text not null,
         version integer not null,
         name text not null,
         applied_at timestamptz not null default now(),
         primary key (migration_set, version)
       )`,
    )
    const done = new Set(
      (await client.query<{ version: number }>('select version from baseplane.migrations where migration_set = $1', [set])).rows.map((r) => r.version),
    )
    const known = migrationsOf(set, root)
    const newest = known.at(-1)?.version ?? 0
    const ahead = [...done].filter((version) => version > newest)
    if (ahead.length > 0) {
      // A rolling deploy: a newer node has migrated this database; an older one
      // would run against tables it does not know.
      throw new ConfigError(
        `the ${set} database was migrated by a newer Baseplane (its migration ${Math.max(...ahead)}; this one knows up to ${newest}): start this node with the fleet's newer version`,
      )
    }
    const applied: number[] = []
    for (const migration of known) {
      if (done.has(migration.version)) continue
      await client.query(substitute(migration.sql, vars))
      await client.query('insert into baseplane.migrations (migration_set, version, name) values ($1, $2, $3)', [
        set,
        migration.version,
        migration.name,
      ])
      applied.push(migration.version)
    }
    return applied
  }, MIGRATION_BEGIN)
}
