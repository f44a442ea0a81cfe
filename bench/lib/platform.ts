// A PostgreSQL server and a platform for benchmarks: DATABASE_URL's server, or
// a temporary embedded PostgreSQL; catalogues made and dropped with dev/db.ts.
import fs from 'node:fs'
import { startPlatform, type RunningPlatform } from '../../server/platform.ts'
import { freePort, startTemporary } from '../../lib/db/embedded.ts'
import { createDatabase, dropCatalogue } from '../../dev/db.ts'
import { nodeConfig } from '../../dev/node-config.ts'

export interface BenchServer {
  /** An admin URL of the server. */
  url: string
  /** Stops the server if this process started it. */
  stop(): Promise<void>
}

/** DATABASE_URL's server, or a temporary embedded one (then DATABASE_URL names it, for child processes). */
export async function benchServer(): Promise<BenchServer> {
  if (process.env.DATABASE_URL) return { url: process.env.DATABASE_URL, stop: async () => {} }
  const embedded = await startTemporary()
  process.env.DATABASE_URL = embedded.url
  return {
    url: embedded.url,
    async stop() {
      await embedded.stop()
      delete process.env.DATABASE_URL
    },
  }
}

/** A new empty catalogue database on `server`; returns its URL. Dropped with dev/db.ts's dropCatalogue(). */
export function benchCatalogue(server: string): Promise<string> {
  return createDatabase(server, 'bpbench')
}

export interface BenchPlatform {
  platform: RunningPlatform
  origin: string
  serverUrl: string
  catalogueUrl: string
  close(): Promise<void>
}

export async function benchPlatform(env: Record<string, string> = {}): Promise<BenchPlatform> {
  const server = await benchServer()
  const catalogueUrl = await benchCatalogue(server.url)
  const config = nodeConfig(catalogueUrl, await freePort(), env)
  const platform = await startPlatform(config, catalogueUrl)
  return {
    platform,
    origin: config.publicUrl,
    serverUrl: server.url,
    catalogueUrl,
    async close() {
      await platform.stop()
      await dropCatalogue(server.url, catalogueUrl)
      fs.rmSync(config.home, { recursive: true, force: true })
      await server.stop()
    },
  }
}
