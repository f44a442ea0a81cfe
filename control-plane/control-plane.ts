// The control plane's operations on projects. The CLI and the admin HTTP API
// both call these; neither touches the catalogue directly.
import crypto from 'node:crypto'
import pg from 'pg'
import { classifyDatabaseError, incidents } from '../lib/db/database-errors.ts'
import { LIVE_NODE_SECONDS, PLANS, PRODUCTS, listProjects, readProject, type Plan, type Product, type ProjectRecord } from '../lib/catalogue.ts'
import { migrate } from '../lib/db/migrations.ts'
import { withPoolTransaction } from '../lib/db/request-transaction.ts'
import { platformErrors } from '../lib/errors.ts'
import { signApiKey } from '../lib/jwt.ts'
import { log } from '../lib/log.ts'
import { loadConfig } from '../lib/config.ts'
import { apiRoleLimit } from '../lib/plans.ts'
import {
  createProjectDatabase,
  dropProjectDatabase,
  ensureClusterRoles,
  limitProjectRoles,
  upgradeProjectDatabase,
  type PlacedProject,
  type ProjectDatabaseNames,
} from './project-database.ts'
import { productHooks } from './product-hooks.ts'
import { releaseProjectRoles } from './server-roles.ts'
import { addFirstSigningKey, dropExpiredSigningKeys, validateSigningAlg } from './signing-key-pairs.ts'
import { addServer, DEFAULT_SERVER, listServers, placeProject, removeServer, serverState, setServerBudget, setServerDraining, type AddServerInput, type DatabaseServer, type ServerState } from './servers.ts'
import { isRef } from '../lib/refs.ts'
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

const REF_ALPHABET = 'abcdefghijklmnopqrstuvwxyz'

function newRef(): string {
  const bytes = crypto.randomBytes(20)
  return Array.from(bytes, (b) => REF_ALPHABET[b % 26]).join('')
}

function secret(bytes: number): string {
  return crypto.randomBytes(bytes).toString('base64url')
}

export interface CreateProjectInput {
  name: string
  plan?: string
  ref?: string
  /** The algorithm of the project's signing keys: ES256 (default) or RS256. */
  signingAlg?: string
}

export function validatePlan(plan: string): Plan {
  if (!(PLANS as readonly string[]).includes(plan)) {
    throw platformErrors.invalidArgument(`Unknown plan "${plan}": use one of ${PLANS.join(', ')}`, 'plan')
  }
  return plan as Plan
}

export function validateProduct(product: string): Product {
  if (!(PRODUCTS as readonly string[]).includes(product)) {
    throw platformErrors.invalidArgument(`Unknown product "${product}": use one of ${PRODUCTS.join(', ')} (GraphQL is always on)`)
  }
  return product as Product
}

function namesOf(project: ProjectRecord): ProjectDatabaseNames {
  return {
    database: project.dbName,
    apiRole: project.dbApiRole,
    apiPassword: project.dbApiPassword,
    ownerRole: project.dbOwnerRole,
    ownerPassword: project.dbOwnerPassword,
  }
}

export interface ControlPlaneOptions {
  /**
   * The default server's connection budget per data-plane process (config
   * maxProjectConnections), weighed against added servers' when placing a
   * project. Without it, the configuration's default.
   */
  defaultServerBudget?: number
}

export class ControlPlane {
  readonly catalogue: pg.Pool
  readonly defaultServerUrl: string
  readonly defaultServerBudget: number

  private constructor(catalogue: pg.Pool, defaultServerUrl: string, defaultServerBudget: number) {
    this.catalogue = catalogue
    this.defaultServerUrl = defaultServerUrl
    this.defaultServerBudget = defaultServerBudget
  }

  /** Connects to the catalogue database and brings its schema up to date. */
  static async open(databaseUrl: string, options: ControlPlaneOptions = {}): Promise<ControlPlane> {
    const catalogue = new pg.Pool({ connectionString: databaseUrl, max: 4, application_name: 'baseplane-control-plane' })
    catalogue.on('error', () => {})
    const client = await catalogue.connect()
    try {
      await migrate(client, 'catalogue')
    } finally {
      client.release()
    }
    await dropExpiredSigningKeys(catalogue)
    // An empty environment gives the configuration's defaults without reading process.env.
    return new ControlPlane(catalogue, databaseUrl, options.defaultServerBudget ?? loadConfig({}).maxProjectConnections)
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

  #placed(project: ProjectRecord, nodes: number): PlacedProject {
    return { names: namesOf(project), plan: project.plan, apiLimit: apiRoleLimit(project.plan, nodes, project.dbServerBudget ?? this.defaultServerBudget) }
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
            await limitProjectRoles(await this.serverUrl(server), here.map((p) => this.#placed(p, nodes)))
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

  async list(): Promise<ProjectRecord[]> {
    return listProjects(this.catalogue, this.defaultServerUrl)
  }

  async get(ref: string): Promise<ProjectRecord> {
    const project = isRef(ref) ? await readProject(this.catalogue, ref, this.defaultServerUrl) : undefined
    if (!project) throw platformErrors.unknownProject(ref)
    return project
  }

  async create(input: CreateProjectInput): Promise<ProjectRecord> {
    const name = (input.name ?? '').trim()
    if (name.length === 0 || name.length > 200) throw platformErrors.invalidArgument('Project name must be 1 to 200 characters', 'name')
    const plan = validatePlan(input.plan ?? 'free')
    const signingAlg = input.signingAlg === undefined ? undefined : validateSigningAlg(input.signingAlg)
    const ref = input.ref ?? newRef()
    if (!isRef(ref)) {
      throw platformErrors.invalidArgument(`Invalid ref "${ref}": 3 to 40 lowercase letters and digits, starting with a letter`)
    }
    const jwtSecret = secret(32)
    const names: ProjectDatabaseNames = {
      database: `bp_${ref}`,
      apiRole: `bp_${ref}_api`,
      apiPassword: secret(24),
      ownerRole: `bp_${ref}_owner`,
      ownerPassword: secret(24),
    }
    const [anonKey, serviceRoleKey] = await Promise.all([signApiKey(jwtSecret, ref, 'anon'), signApiKey(jwtSecret, ref, 'service_role')])
    const server = await placeProject(this.catalogue, this.defaultServerUrl, this.defaultServerBudget)
    // The catalogue row is committed only once the database is ready, so a
    // failure leaves neither a row nor a half-made database behind.
    await withPoolTransaction(this.catalogue, async (client) => {
      const inserted = await projectRows.insertProject(client, {
        ref,
        name,
        plan,
        dbServer: server.id,
        dbName: names.database,
        dbApiRole: names.apiRole,
        dbApiPassword: names.apiPassword,
        dbOwnerRole: names.ownerRole,
        dbOwnerPassword: names.ownerPassword,
        jwtSecret,
        anonKey,
        serviceRoleKey,
      })
      if (!inserted) throw platformErrors.invalidArgument(`A project with ref "${ref}" already exists`)
      await addFirstSigningKey(client, ref, signingAlg)
      await createProjectDatabase(server.url, names, plan, apiRoleLimit(plan, await this.liveNodes(), server.connectionBudget))
    })
    await this.changed()
    return this.get(ref)
  }

  async delete(ref: string): Promise<void> {
    const project = await this.get(ref)
    await projectRows.deleteProject(this.catalogue, ref)
    await this.changed()
    const serverUrl = await this.serverUrl(project.dbServer)
    await dropProjectDatabase(serverUrl, namesOf(project))
    await releaseProjectRoles(this.catalogue, project, serverUrl)
  }

  async setPlan(ref: string, plan: string): Promise<ProjectRecord> {
    const valid = validatePlan(plan)
    const project = await this.get(ref)
    // Roles first: a server that cannot be reached leaves the plan unchanged.
    const apiLimit = apiRoleLimit(valid, await this.liveNodes(), project.dbServerBudget ?? this.defaultServerBudget)
    await limitProjectRoles(await this.serverUrl(project.dbServer), [{ names: namesOf(project), plan: valid, apiLimit }])
    if (!(await projectRows.updatePlan(this.catalogue, ref, valid))) throw platformErrors.unknownProject(ref)
    await this.changed()
    return this.get(ref)
  }

  async setProduct(ref: string, product: string, enabled: boolean): Promise<ProjectRecord> {
    const valid = validateProduct(product)
    const project = await this.get(ref)
    if (enabled) await productHooks[valid].beforeEnable?.(project, await this.serverUrl(project.dbServer))
    await projectRows.updateProductEnabled(this.catalogue, ref, valid, enabled)
    await this.changed()
    return this.get(ref)
  }

  /** New JWT secret and keys: every token signed with the old secret stops working. */
  async rotateKeys(ref: string): Promise<ProjectRecord> {
    const jwtSecret = secret(32)
    const [anonKey, serviceRoleKey] = await Promise.all([signApiKey(jwtSecret, ref, 'anon'), signApiKey(jwtSecret, ref, 'service_role')])
    if (!(await projectRows.updateKeys(this.catalogue, ref, { jwtSecret, anonKey, serviceRoleKey }))) throw platformErrors.unknownProject(ref)
    await this.changed()
    return this.get(ref)
  }

  /** Registers another PostgreSQL server for new projects; returns it as listed. */
  async addServer(input: AddServerInput): Promise<DatabaseServer> {
    const id = await addServer(this.catalogue, input)
    return (await this.listServers()).find((server) => server.id === id)!
  }

  async listServers(): Promise<DatabaseServer[]> {
    return listServers(this.catalogue, this.defaultServerUrl, this.defaultServerBudget)
  }

  /** Every server with what it says of itself now (up or down, connections in use), asked at once. */
  async serverStates(): Promise<Array<DatabaseServer & ServerState>> {
    const servers = await this.listServers()
    const states = await Promise.all(servers.map((server) => serverState(server.url)))
    return servers.map((server, i) => ({ ...server, ...states[i]! }))
  }

  async setServerBudget(id: string, connections: unknown): Promise<DatabaseServer> {
    await setServerBudget(this.catalogue, id, connections)
    return (await this.listServers()).find((server) => server.id === id)!
  }

  async setServerDraining(id: string, draining: boolean): Promise<DatabaseServer> {
    await setServerDraining(this.catalogue, id, draining)
    return (await this.listServers()).find((server) => server.id === id)!
  }

  async removeServer(id: string): Promise<void> {
    await removeServer(this.catalogue, id)
  }

  /** Brings every project database up to the newest project SQL; returns ref → versions applied. */
  /**
   * Brings every project database up to date, server by server. A server that
   * does not answer is skipped and named in `down` (its projects answer 503 until
   * it returns; upgradeServers() again then), so one server down never stops a
   * node from starting and serving the others.
   */
  async upgradeAll(): Promise<{ applied: Map<string, number[]>; down: string[] }> {
    const projects = await this.list()
    // The default server always: its platform databases are closed even before its first project.
    return this.upgradeServers([...new Set([DEFAULT_SERVER, ...projects.map((p) => p.dbServer)])], projects)
  }

  /** upgradeAll() for these servers only (those that were down). */
  async upgradeServers(servers: string[], projects?: ProjectRecord[]): Promise<{ applied: Map<string, number[]>; down: string[] }> {
    const all = projects ?? (await this.list())
    // A node starting now is counted once its heartbeat begins (data-plane/fleet-size.ts sizes the roles again).
    const nodes = await this.liveNodes()
    const applied = new Map<string, number[]>()
    const down: string[] = []
    for (const server of servers) {
      try {
        const serverUrl = await this.serverUrl(server)
        const here = all.filter((p) => p.dbServer === server)
        // New cluster-wide roles first: new project SQL may grant them.
        await ensureClusterRoles(serverUrl)
        // Projects made before role limits existed, or roles changed by hand.
        await limitProjectRoles(serverUrl, here.map((p) => this.#placed(p, nodes)))
        for (const project of here) {
          const versions = await upgradeProjectDatabase(serverUrl, namesOf(project))
          if (versions.length > 0) applied.set(project.ref, versions)
          // A product's own SQL (push) is upgraded where the product is on.
          if (project.pushEnabled) await productHooks.push.beforeEnable?.(project, serverUrl)
        }
        incidents.recovered(`database server ${server}`)
      } catch (error) {
        // The catalogue's own server is not skipped: without it nothing can be served.
        if (server === DEFAULT_SERVER || classifyDatabaseError(error) !== 'unavailable') throw error
        incidents.failed(`database server ${server}`, error)
        down.push(server)
      }
    }
    return { applied, down }
  }
}
