// The control plane's context: the catalogue's pool and the fleet around it
// (the default server, the live data-plane nodes, waiting for them to apply a
// change). The operations are functions taking it, one module per concern
// (projects.ts, server-admin.ts, signing-keys.ts, ...); the CLI and the admin
// HTTP API both call these; neither touches the catalogue directly.
import pg from 'pg'
import { LIVE_NODE_SECONDS, listProjects } from '../lib/catalogue.ts'
import { migrate } from '../lib/db/migrations.ts'
import { boundPool, PLATFORM_POOL_SETTINGS } from '../lib/db/round-trip-deadline.ts'
import { platformErrors } from '../lib/errors.ts'
import { log } from '../lib/log.ts'
import { loadConfig } from '../lib/config.ts'
import type { StorageBackendConfig } from '../lib/service.ts'
import { limitProjectRoles, placedProject } from './project-database.ts'
import { dropExpiredSigningKeys } from './signing-key-pairs.ts'
import { reportUnacknowledged } from './unacknowledged.ts'
import { countLiveNodes, countNodesBehind, lastChange, nodesBehind } from './db/nodes.ts'
import * as projectRows from './db/projects.ts'
import { serverAdminUrl } from './db/servers.ts'

/** How long a change waits for every data-plane process to apply it. */
const SETTLE_TIMEOUT_MS = 5000
/**
 * A process heard from within this long may still be serving (cut off from the
 * catalogue, it turns unready after BASEPLANE_CATALOGUE_SILENCE_MS, and a
 * balancer takes a while more to take it out): if it has not acknowledged a
 * change, the change says so, though it was not waited for.
 */
const SERVING_NODE_SECONDS = 60

export interface ControlPlaneOptions {
  /**
   * The default server's connection budget per data-plane process (config
   * maxProjectConnections), weighed against added servers' when placing a
   * project. Without it, the configuration's default.
   */
  defaultServerBudget?: number
  /**
   * Where the node keeps Storage's bytes (config.storage): what removing an
   * object from the operator's paths and deleting a project remove bytes
   * from. Without it, they remove rows only and say so in the log; Storage's
   * collector removes an unnamed object's bytes later, a deleted project's never.
   */
  storage?: StorageBackendConfig
}

export class ControlPlane {
  readonly catalogue: pg.Pool
  readonly defaultServerUrl: string
  readonly defaultServerBudget: number
  /** The node's Storage setting (ControlPlaneOptions.storage). */
  readonly storage: StorageBackendConfig | undefined

  private constructor(catalogue: pg.Pool, defaultServerUrl: string, defaultServerBudget: number, storage: StorageBackendConfig | undefined) {
    this.catalogue = catalogue
    this.defaultServerUrl = defaultServerUrl
    this.defaultServerBudget = defaultServerBudget
    this.storage = storage
  }

  /** Connects to the catalogue database and brings its schema up to date. */
  static async open(databaseUrl: string, options: ControlPlaneOptions = {}): Promise<ControlPlane> {
    // Bounded connects and round trips (lib/db/round-trip-deadline.ts): a catalogue that hangs answers 503, not never.
    // boundPool also listens for a checked-out client's errors: a server that dies while one is held between round
    // trips (a transaction waiting on other work, as createProject's does) would otherwise raise an unhandled
    // 'error' that ends the process. Its next round trip fails instead, as unavailable.
    const catalogue = boundPool(new pg.Pool({ connectionString: databaseUrl, max: 4, application_name: 'baseplane-control-plane', ...PLATFORM_POOL_SETTINGS }))
    catalogue.on('error', () => {})
    try {
      const client = await catalogue.connect()
      try {
        await migrate(client, 'catalogue')
      } finally {
        client.release()
      }
      await dropExpiredSigningKeys(catalogue)
    } catch (error) {
      // A start that tries again (a restarting server) opens a new pool; this one must not linger.
      await catalogue.end().catch(() => {})
      throw error
    }
    // An empty environment gives the configuration's defaults without reading process.env.
    return new ControlPlane(catalogue, databaseUrl, options.defaultServerBudget ?? loadConfig({}).maxProjectConnections, options.storage)
  }

  async close(): Promise<void> {
    await this.catalogue.end()
  }

  async serverUrl(serverId: string): Promise<string> {
    if (serverId === 'default') return this.defaultServerUrl
    const url = await serverAdminUrl(this.catalogue, serverId)
    if (url === undefined) throw platformErrors.invalidArgument(`Unknown database server "${serverId}"`)
    return url
  }

  /**
   * Waits until every live data-plane process has applied the catalogue's
   * latest change to its cache, so the change is seen by the next request
   * anywhere. Every operation that changes a project calls it before it returns.
   * Returns the ids of the processes that may still be serving and had not
   * applied it by the deadline (also reported to withUnacknowledged(), which the
   * admin API and the CLI tell the operator from).
   */
  async changed(): Promise<string[]> {
    const target = await lastChange(this.catalogue)
    const deadline = Date.now() + SETTLE_TIMEOUT_MS
    while (Date.now() < deadline) {
      if ((await countNodesBehind(this.catalogue, target, LIVE_NODE_SECONDS)) === 0) break
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
    const nodes = await nodesBehind(this.catalogue, target, SERVING_NODE_SECONDS)
    if (nodes.length > 0) log.info('data-plane processes did not acknowledge a catalogue change in time', { change: target, nodes })
    reportUnacknowledged(nodes)
    return nodes
  }

  /** Data-plane processes whose heartbeat is recent (at least 1): they divide the servers' budgets and multiply the roles' limits. */
  async liveNodes(): Promise<number> {
    return Math.max(1, await countLiveNodes(this.catalogue, LIVE_NODE_SECONDS))
  }

  /**
   * Sizes every project's api role for a fleet of `nodes` (lib/plans.ts
   * apiRoleLimit), server by server, touching only roles that differ. One node
   * at a time does it (the others skip, and their next look finds it done); a
   * server that does not answer is left for the next time.
   */
  async sizeRoleLimits(nodes: number): Promise<void> {
    const lock = await this.catalogue.connect()
    try {
      if (!(await projectRows.tryLockRoleLimits(lock))) return
      try {
        const all = await listProjects(lock, this.defaultServerUrl)
        for (const server of new Set(all.map((p) => p.dbServer))) {
          const here = all.filter((p) => p.dbServer === server)
          try {
            await limitProjectRoles(await this.serverUrl(server), here.map((p) => placedProject(p, nodes, this.defaultServerBudget)))
          } catch (error) {
            log.info('could not size the role limits of a database server; trying again later', { server, nodes, error: (error as Error).message })
          }
        }
      } finally {
        await projectRows.unlockRoleLimits(lock)
      }
    } finally {
      lock.release()
    }
  }
}
