// Database fixtures for tests: every test file works in databases it creates
// and drops, on the server `npm test` provides (DATABASE_URL), or, when a file
// is run on its own without one, on a temporary embedded server.
import crypto from 'node:crypto'
import pg from 'pg'
import { escapeIdentifier } from 'pg'
import { startTemporary, type EmbeddedServer } from '../../lib/db/embedded.ts'

let standalone: Promise<EmbeddedServer> | undefined

export async function serverUrl(): Promise<string> {
  if (process.env.DATABASE_URL) return process.env.DATABASE_URL
  standalone ??= startStandalone()
  return (await standalone).url
}

/**
 * A file run on its own under tap (`npx tap test/auth/flow.test.ts`) stops its
 * server when its root test ends. The root teardown is also what lets tap end
 * the root once it is idle; without it the server's child process keeps the
 * file alive until tap's timeout fails it, every subtest passed or not.
 */
async function startStandalone(): Promise<EmbeddedServer> {
  if (process.env.TAP === '1') (await import('tap')).default.teardown(stopStandalone)
  return startTemporary()
}

/** Stops the standalone embedded server, if this process started one. */
export async function stopStandalone(): Promise<void> {
  if (standalone) await (await standalone).stop()
  standalone = undefined
}

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url)
  parsed.pathname = `/${database}`
  return parsed.toString()
}

export async function adminQuery<T extends pg.QueryResultRow = pg.QueryResultRow>(url: string, sql: string, values?: unknown[]): Promise<pg.QueryResult<T>> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await client.query<T>(sql, values)
  } finally {
    await client.end()
  }
}

interface Teardown {
  teardown(fn: () => unknown): void
}

/** A new empty database on the test server; dropped when `t` ends. Returns its admin URL. */
export async function freshDatabase(t: Teardown, prefix = 'bptest'): Promise<string> {
  const server = await serverUrl()
  const name = `${prefix}_${crypto.randomBytes(6).toString('hex')}`
  await adminQuery(server, `create database ${escapeIdentifier(name)}`)
  t.teardown(async () => {
    await adminQuery(server, `drop database if exists ${escapeIdentifier(name)} with (force)`)
  })
  return withDatabase(server, name)
}

/** A connected client that reports errors to its caller only (a server ending it is what the test looks at). */
export async function connectClient(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url })
  client.on('error', () => {})
  await client.connect()
  return client
}
