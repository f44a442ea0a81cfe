// A platform for benchmarks: DATABASE_URL, or a temporary embedded PostgreSQL.
import crypto from 'node:crypto'
import pg from 'pg'
import { escapeIdentifier } from 'pg'
import { startPlatform, type RunningPlatform } from '../../server/platform.ts'
import { freePort, startTemporary, type EmbeddedServer } from '../../lib/db/embedded.ts'
import { dropCatalogue, testConfig } from '../../test/helpers/platform.ts'

export interface BenchPlatform {
  platform: RunningPlatform
  origin: string
  serverUrl: string
  catalogueUrl: string
  close(): Promise<void>
}

export async function benchPlatform(env: Record<string, string> = {}): Promise<BenchPlatform> {
  let embedded: EmbeddedServer | undefined
  if (!process.env.DATABASE_URL) {
    embedded = await startTemporary()
    process.env.DATABASE_URL = embedded.url
  }
  const serverUrl = process.env.DATABASE_URL!
  const name = `bpbench_${crypto.randomBytes(4).toString('hex')}`
  const admin = new pg.Client({ connectionString: serverUrl })
  await admin.connect()
  await admin.query(`create database ${escapeIdentifier(name)}`)
  await admin.end()
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  const catalogueUrl = url.toString()
  const config = testConfig(catalogueUrl, await freePort(), env)
  const platform = await startPlatform(config, catalogueUrl)
  return {
    platform,
    origin: config.publicUrl,
    serverUrl,
    catalogueUrl,
    async close() {
      await platform.stop()
      await dropCatalogue(catalogueUrl)
      await embedded?.stop()
    },
  }
}
