// Which platform a command works on: the home and the database in it (or
// DATABASE_URL). Said in `--help`, `baseplane status` and when there is none,
// so a command run from another folder cannot quietly use an empty platform.
import path from 'node:path'
import type { PlatformConfig } from '../lib/config.ts'
import { hasEmbeddedData } from '../lib/db/embedded.ts'

/** The connection string with its password hidden. */
export function maskedUrl(raw: string): string {
  const url = new URL(raw)
  if (url.password !== '') url.password = '***'
  return url.toString()
}

export interface Where {
  home: string
  /** 'embedded': PostgreSQL under the home; 'url': DATABASE_URL. */
  database: { kind: 'embedded'; data_dir: string } | { kind: 'url'; url: string }
  /** Whether a platform exists there (DATABASE_URL: taken to be one; its catalogue is made on first use). */
  platform: boolean
}

export function whereOf(config: Pick<PlatformConfig, 'home' | 'databaseUrl'>): Where {
  if (config.databaseUrl) return { home: config.home, database: { kind: 'url', url: maskedUrl(config.databaseUrl) }, platform: true }
  return { home: config.home, database: { kind: 'embedded', data_dir: path.join(config.home, 'pgdata') }, platform: hasEmbeddedData(config.home) }
}

/** One phrase naming the database, e.g. "the embedded PostgreSQL in /srv/.baseplane". */
export function databasePhrase(where: Where): string {
  return where.database.kind === 'url' ? `DATABASE_URL ${where.database.url}` : `the embedded PostgreSQL in ${where.home}`
}

/** The line `--help` ends with. */
export function whereLine(where: Where): string {
  const database = where.database.kind === 'url' ? `; database: DATABASE_URL ${where.database.url}` : ' (embedded PostgreSQL)'
  const none = where.platform ? '' : '; no platform there yet: `baseplane start` creates one'
  return `Platform home: ${where.home}${database}${none}.`
}
