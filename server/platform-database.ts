// Where a node's catalogue lives: DATABASE_URL, or the embedded PostgreSQL
// under its home. Apart from server/platform.ts so the command line, which
// opens the catalogue for nearly every command, does not load the data plane.
import type { PlatformConfig } from '../lib/config.ts'
import { startEmbedded, type EmbeddedServer } from '../lib/db/embedded.ts'

/**
 * How long a start waits for its supervised embedded PostgreSQL: the supervisor's first six
 * restarts (0.5 s doubling) take 31.5 s, and crash recovery a few seconds each.
 */
export const EMBEDDED_DATABASE_WAIT_MS = 60000

/** DATABASE_URL, or the embedded server under <home> (started if needed). */
export async function platformDatabase(config: PlatformConfig, own: boolean): Promise<{ url: string; embedded?: EmbeddedServer }> {
  if (config.databaseUrl) return { url: config.databaseUrl }
  const embedded = await startEmbedded(config.home, config.embeddedPort, own)
  return { url: embedded.url, embedded }
}
