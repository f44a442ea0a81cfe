// Settings every node of a fleet must share, kept in the catalogue: the first
// node to start writes them, every later node adopts them or, where it was
// configured with another value, refuses to start and says which.
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import type pg from 'pg'
import { ConfigError } from '../lib/errors.ts'

const ADMIN_TOKEN = 'admin_token'

/** Where a node's own admin token came from, if it has one. */
export interface LocalAdminToken {
  token: string | undefined
  /** `BASEPLANE_ADMIN_TOKEN`, or the home's `admin-token` file. */
  source: string
}

/** The node's configured admin token: BASEPLANE_ADMIN_TOKEN, else the one in <home>/admin-token, else none. */
export function localAdminToken(config: { adminToken: string | undefined; home: string }): LocalAdminToken {
  if (config.adminToken) return { token: config.adminToken, source: 'BASEPLANE_ADMIN_TOKEN' }
  const file = path.join(config.home, 'admin-token')
  try {
    return { token: fs.readFileSync(file, 'utf8').trim() || undefined, source: file }
  } catch {
    return { token: undefined, source: file }
  }
}

function sameToken(a: string, b: string): boolean {
  const hash = (text: string) => crypto.createHash('sha256').update(text).digest()
  return crypto.timingSafeEqual(hash(a), hash(b))
}

/**
 * The fleet's admin token. The first node stores its own (configured, or made
 * now); a later node without one adopts the fleet's and keeps it in its home
 * (for the CLI there); a later node configured with another refuses, since its
 * admin API would then answer to a token the others refuse.
 */
export async function fleetAdminToken(catalogue: pg.Pool, config: { adminToken: string | undefined; home: string }): Promise<string> {
  const local = localAdminToken(config)
  const offered = local.token ?? crypto.randomBytes(32).toString('base64url')
  await catalogue.query(`insert into baseplane.fleet_settings (name, value) values ($1, $2) on conflict (name) do nothing`, [ADMIN_TOKEN, offered])
  const { rows } = await catalogue.query<{ value: string }>(`select value from baseplane.fleet_settings where name = $1`, [ADMIN_TOKEN])
  const fleet = rows[0]!.value
  if (local.token !== undefined && !sameToken(local.token, fleet)) {
    throw new ConfigError(
      `the admin token of ${local.source} is not this fleet's: the catalogue holds the one the first node started with, and every node must answer to the same. ` +
        `Give this node that token (BASEPLANE_ADMIN_TOKEN, or the admin-token file of the first node's home), or remove ${local.source} to adopt it.`,
    )
  }
  if (config.adminToken === undefined && local.token === undefined) {
    fs.mkdirSync(config.home, { recursive: true })
    fs.writeFileSync(path.join(config.home, 'admin-token'), fleet + '\n', { mode: 0o600 })
  }
  return fleet
}
