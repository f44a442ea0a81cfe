// The extensions a Supabase project has from its start and seeds written for
// Supabase call unqualified (issue 40): pgcrypto's crypt() and gen_salt(),
// uuid-ossp's uuid_generate_v4(). Installed into the schema `extensions`
// (sql/project/0060) on every upgrade of a project's database, not by a
// migration, so "where the server has them" holds both ways: a server without
// one upgrades anyway, and installs it on the first start after it gains it.
import type pg from 'pg'
import { escapeIdentifier } from 'pg'
import { log } from '../lib/log.ts'

export const DEFAULT_EXTENSIONS = ['pgcrypto', 'uuid-ossp'] as const

/**
 * Installs each default extension the server has and the database lacks, and
 * returns those the server does not have. One query when nothing is missing.
 * An extension the owner installed elsewhere (say pgcrypto in public) is left
 * where it is: its functions are on the path either way.
 */
export async function installDefaultExtensions(client: pg.ClientBase, database: string): Promise<string[]> {
  const { rows } = await client.query<{ name: string; available: boolean; installed: boolean }>(
    `select wanted.name,
            exists (select 1 from pg_catalog.pg_available_extensions a where a.name = wanted.name) as available,
            exists (select 1 from pg_catalog.pg_extension e where e.extname = wanted.name) as installed
       from unnest($1::text[]) as wanted(name)`,
    [DEFAULT_EXTENSIONS],
  )
  const unavailable: string[] = []
  for (const row of rows) {
    if (row.installed) continue
    if (!row.available) {
      unavailable.push(row.name)
      continue
    }
    await client.query(`create extension if not exists ${escapeIdentifier(row.name)} with schema extensions`)
  }
  if (unavailable.length > 0) {
    log.info('the database server lacks extensions every project database has on Supabase; install its contrib package', { database, extensions: unavailable })
  }
  return unavailable
}
