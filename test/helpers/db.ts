// Database fixtures for tests: every test file works in databases it creates
// and drops, on the server `npm test` provides (DATABASE_URL), or, when a file
// is run on its own without one, on a temporary embedded server.
import pg from 'pg'
import { startTemporary, type EmbeddedServer } from '../../lib/db/embedded.ts'
import { createDatabase, dropDatabase } from '../../dev/db.ts'

export { adminQuery } from '../../dev/db.ts'
// A database's URL on the test server: lib's adminUrlFor, under the name the tests know it by.
export { adminUrlFor as withDatabase } from '../../lib/db/server-url.ts'

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

interface Teardown {
  teardown(fn: () => unknown): void
}

/** A new empty database on the test server; dropped when `t` ends. Returns its admin URL. */
export async function freshDatabase(t: Teardown, prefix = 'bptest'): Promise<string> {
  const server = await serverUrl()
  const url = await createDatabase(server, prefix)
  t.teardown(() => dropDatabase(server, url))
  return url
}

/** A connected client that reports errors to its caller only (a server ending it is what the test looks at). */
export async function connectClient(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url })
  client.on('error', () => {})
  await client.connect()
  return client
}
