// The configuration of a throwaway platform node, for the tests and the benches.
import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { loadConfig, type PlatformConfig } from '../lib/config.ts'

/**
 * The Storage folder every test node of `catalogueUrl`'s catalogue uses (removed with the catalogue by
 * the test helpers): named by the catalogue's database, so a node that reaches it another way (through
 * a forwarder) shares it too.
 */
export function storageRootOf(catalogueUrl: string): string {
  const database = new URL(catalogueUrl).pathname.replace(/^\//, '') || catalogueUrl
  return path.join(os.tmpdir(), `baseplane-storage-${crypto.createHash('sha256').update(database).digest('hex').slice(0, 16)}`)
}

/**
 * A node on `catalogueUrl` listening on `port`: a home of its own under the
 * system's temporary folder, one thread for each concern, no logs; `env` over those.
 */
export function nodeConfig(catalogueUrl: string, port: number, env: Record<string, string> = {}): PlatformConfig {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'baseplane-home-'))
  return loadConfig({
    DATABASE_URL: catalogueUrl,
    PORT: String(port),
    BASEPLANE_HOME: home,
    // The fleet's token is the first node's (control-plane/fleet-settings.ts): every node of one catalogue gets the same.
    BASEPLANE_ADMIN_TOKEN: crypto.createHash('sha256').update(`admin token of ${catalogueUrl}`).digest('hex'),
    BASEPLANE_AUTH_THREADS: '1',
    BASEPLANE_GRAPHQL_THREADS: '1',
    BASEPLANE_PUSH_THREADS: '1',
    BASEPLANE_LOG_LEVEL: 'silent',
    // Storage's folder is the catalogue's, not the node's: the nodes of one test fleet share it as a fleet shares a disk it mounts.
    BASEPLANE_STORAGE_ROOT: storageRootOf(catalogueUrl),
    ...env,
  })
}
