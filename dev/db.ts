// Throwaway databases on a PostgreSQL server, for the tests and the benches:
// made with a random name, dropped with everything a platform made in them.
import crypto from 'node:crypto'
import pg from 'pg'
import { escapeIdentifier } from 'pg'
import { adminUrlFor } from '../lib/db/server-url.ts'

/** One statement on a connection of its own. */
export async function adminQuery<T extends pg.QueryResultRow = pg.QueryResultRow>(url: string, sql: string, values?: unknown[]): Promise<pg.QueryResult<T>> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await client.query<T>(sql, values)
  } finally {
    await client.end()
  }
}

/** A new empty database on `server`, named `<prefix>_<random hex>`; returns its URL. */
export async function createDatabase(server: string, prefix: string): Promise<string> {
  const name = `${prefix}_${crypto.randomBytes(6).toString('hex')}`
  await adminQuery(server, `create database ${escapeIdentifier(name)}`)
  return adminUrlFor(server, name)
}

/** Drops the database at `url` (connected through `server`), whoever is still connected to it. */
export async function dropDatabase(server: string, url: string): Promise<void> {
  await adminQuery(server, `drop database if exists ${escapeIdentifier(new URL(url).pathname.slice(1))} with (force)`)
}

/** Drops a catalogue's projects (their databases and roles), then the catalogue itself. */
export async function dropCatalogue(server: string, catalogueUrl: string): Promise<void> {
  type Row = { db_name: string; db_api_role: string; db_owner_role: string }
  const { rows } = await adminQuery<Row>(catalogueUrl, 'select db_name, db_api_role, db_owner_role from baseplane.projects').catch(() => ({ rows: [] as Row[] }))
  for (const row of rows) {
    await adminQuery(server, `drop database if exists ${escapeIdentifier(row.db_name)} with (force)`)
    await adminQuery(server, `drop role if exists ${escapeIdentifier(row.db_api_role)}`)
    await adminQuery(server, `drop role if exists ${escapeIdentifier(row.db_owner_role)}`)
  }
  await dropDatabase(server, catalogueUrl)
}
