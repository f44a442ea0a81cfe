// The control plane's operations on projects: listing, creating (database,
// roles, keys, on the server with the most room), deleting, plans, products,
// key rotation, and upgrades of project databases. The CLI and the admin HTTP
// API both call these; neither touches the catalogue directly.
import crypto from 'node:crypto'
import { classifyDatabaseError, incidents } from '../lib/db/database-errors.ts'
import { PLANS, PRODUCTS, listProjects, readProject, type Plan, type Product, type ProjectRecord } from '../lib/catalogue.ts'
import { withPoolTransaction } from '../lib/db/request-transaction.ts'
import { platformErrors } from '../lib/errors.ts'
import { signApiKey } from '../lib/jwt.ts'
import { apiRoleLimit } from '../lib/plans.ts'
import { isRef } from '../lib/refs.ts'
import type { ControlPlane } from './control-plane.ts'
import { appendEvent } from './events.ts'
import {
  createProjectDatabase,
  dropProjectDatabase,
  ensureClusterRoles,
  limitProjectRoles,
  placedProject,
  projectDatabaseNames,
  upgradeProjectDatabase,
  type ProjectDatabaseNames,
} from './project-database.ts'
import { productHooks } from './product-hooks.ts'
import { ALWAYS_ON } from './views.ts'
import { syncProjectPushCap } from './push-cap.ts'
import { log } from '../lib/log.ts'
import { releaseProjectRoles } from './server-roles.ts'
import { deleteProjectObjects } from '../workers/storage/face.ts'
import { addFirstSigningKey, validateSigningAlg } from './signing-key-pairs.ts'
import { DEFAULT_SERVER, placeProject } from './servers.ts'
import * as projectRows from './db/projects.ts'

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

/** "a, b and c". */
function listed(names: readonly string[]): string {
  return names.length > 1 ? `${names.slice(0, -1).join(', ')} and ${names.at(-1)}` : names.join('')
}

/** A product that is always on (GraphQL, the Data API), by its id; undefined for any other name. */
export function alwaysOnProduct(product: string): (typeof ALWAYS_ON)[number] | undefined {
  return ALWAYS_ON.find((always) => always.id === product)
}

export function validateProduct(product: string): Product {
  if (!(PRODUCTS as readonly string[]).includes(product)) {
    const always = alwaysOnProduct(product)
    if (always !== undefined) throw platformErrors.invalidArgument(`${always.name} is always on for every project: it cannot be turned off (only ${PRODUCTS.join(' and ')} are switched)`)
    throw platformErrors.invalidArgument(`Unknown product "${product}": use one of ${PRODUCTS.join(', ')} (${listed(ALWAYS_ON.map((p) => p.id))} are always on)`)
  }
  return product as Product
}

export async function listAllProjects(controlPlane: ControlPlane): Promise<ProjectRecord[]> {
  return listProjects(controlPlane.catalogue, controlPlane.defaultServerUrl)
}

export async function getProject(controlPlane: ControlPlane, ref: string): Promise<ProjectRecord> {
  const project = isRef(ref) ? await readProject(controlPlane.catalogue, ref, controlPlane.defaultServerUrl) : undefined
  if (!project) throw platformErrors.unknownProject(ref)
  return project
}

/** The database and login roles a project of `ref` is made with (the platform's own logins follow the API role's name). */
export function databaseNamesOf(ref: string): Pick<ProjectDatabaseNames, 'database' | 'apiRole' | 'ownerRole'> {
  return { database: `bp_${ref}`, apiRole: `bp_${ref}_api`, ownerRole: `bp_${ref}_owner` }
}

export async function createProject(controlPlane: ControlPlane, input: CreateProjectInput): Promise<ProjectRecord> {
  const name = (input.name ?? '').trim()
  if (name.length === 0 || name.length > 200) throw platformErrors.invalidArgument('Project name must be 1 to 200 characters', 'name')
  const plan = validatePlan(input.plan ?? 'free')
  const signingAlg = input.signingAlg === undefined ? undefined : validateSigningAlg(input.signingAlg)
  const ref = input.ref ?? newRef()
  if (!isRef(ref)) {
    throw platformErrors.invalidArgument(`Invalid ref "${ref}": 3 to 40 lowercase letters and digits, starting with a letter`)
  }
  const jwtSecret = secret(32)
  const names: ProjectDatabaseNames = { ...databaseNamesOf(ref), apiPassword: secret(24), ownerPassword: secret(24) }
  const [anonKey, serviceRoleKey] = await Promise.all([signApiKey(jwtSecret, ref, 'anon'), signApiKey(jwtSecret, ref, 'service_role')])
  const server = await placeProject(controlPlane.catalogue, controlPlane.defaultServerUrl, controlPlane.defaultServerBudget)
  // Read before the transaction: asked inside it, the pool's other connection could be held by
  // concurrent creations each waiting the same way (four at once held all four, forever).
  const apiLimit = apiRoleLimit(plan, await controlPlane.liveNodes(), server.connectionBudget)
  // The catalogue row is committed only once the database is ready, so a
  // failure leaves neither a row nor a half-made database behind.
  await withPoolTransaction(controlPlane.catalogue, async (client) => {
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
    await appendEvent(client, 'project.created', ref, { name, plan })
    await createProjectDatabase(server.url, names, plan, apiLimit)
  })
  await controlPlane.changed()
  return getProject(controlPlane, ref)
}

export async function deleteProject(controlPlane: ControlPlane, ref: string): Promise<void> {
  const project = await getProject(controlPlane, ref)
  await withPoolTransaction(controlPlane.catalogue, async (client) => {
    await projectRows.deleteProjectRow(client, ref)
    await appendEvent(client, 'project.deleted', ref, { name: project.name, plan: project.plan })
  })
  await controlPlane.changed()
  const serverUrl = await controlPlane.serverUrl(project.dbServer)
  await dropProjectDatabase(serverUrl, projectDatabaseNames(project))
  await removeProjectBytes(controlPlane, ref)
  await releaseProjectRoles(controlPlane.catalogue, project, serverUrl)
}

/** A deleted project's Storage bytes (`<ref>/...` in the node's store): a failure is logged, never the deletion's. */
async function removeProjectBytes(controlPlane: ControlPlane, ref: string): Promise<void> {
  if (controlPlane.storage === undefined) {
    log.info("no Storage setting given to this control plane: a deleted project's stored bytes were not removed", { ref })
    return
  }
  try {
    await deleteProjectObjects(controlPlane.storage, ref)
  } catch (error) {
    log.error("could not remove a deleted project's Storage bytes; remove the keys under its ref from the store by hand", error, { ref })
  }
}

export async function setProjectPlan(controlPlane: ControlPlane, ref: string, plan: string): Promise<ProjectRecord> {
  const valid = validatePlan(plan)
  const project = await getProject(controlPlane, ref)
  // Roles first: a server that cannot be reached leaves the plan unchanged.
  const apiLimit = apiRoleLimit(valid, await controlPlane.liveNodes(), project.dbServerBudget ?? controlPlane.defaultServerBudget)
  await limitProjectRoles(await controlPlane.serverUrl(project.dbServer), [{ names: projectDatabaseNames(project), plan: valid, apiLimit }])
  await withPoolTransaction(controlPlane.catalogue, async (client) => {
    const before = await projectRows.lockPlan(client, ref)
    if (before === undefined) throw platformErrors.unknownProject(ref)
    await projectRows.updatePlan(client, ref, valid)
    // Setting the plan it has changes nothing to report.
    if (before !== valid) await appendEvent(client, 'project.plan_changed', ref, { from: before, to: valid })
  })
  await controlPlane.changed()
  const changed = await getProject(controlPlane, ref)
  // The new plan's push deliveries cap, enforced in the project's database; its push sender writes it too when it next claims.
  await syncProjectPushCap(controlPlane, changed).catch((error: unknown) =>
    log.info("could not write the plan's push deliveries cap into the project's database; its push sender writes it when it runs", { ref, error: (error as Error).message }),
  )
  return changed
}

/**
 * Turns `product` on or off. Enabling a product that is always on (graphql,
 * rest) changes nothing and answers the project, as enabling one already on
 * does; disabling one is refused.
 */
export async function setProjectProduct(controlPlane: ControlPlane, ref: string, product: string, enabled: boolean): Promise<ProjectRecord> {
  if (enabled && alwaysOnProduct(product) !== undefined) return getProject(controlPlane, ref)
  const valid = validateProduct(product)
  const project = await getProject(controlPlane, ref)
  if (enabled) await productHooks[valid].beforeEnable?.(project, await controlPlane.serverUrl(project.dbServer))
  await projectRows.updateProductEnabled(controlPlane.catalogue, ref, valid, enabled)
  await controlPlane.changed()
  return getProject(controlPlane, ref)
}

/** New JWT secret and keys: every token signed with the old secret stops working. */
export async function rotateProjectKeys(controlPlane: ControlPlane, ref: string): Promise<ProjectRecord> {
  const jwtSecret = secret(32)
  const [anonKey, serviceRoleKey] = await Promise.all([signApiKey(jwtSecret, ref, 'anon'), signApiKey(jwtSecret, ref, 'service_role')])
  if (!(await projectRows.updateKeys(controlPlane.catalogue, ref, { jwtSecret, anonKey, serviceRoleKey }))) throw platformErrors.unknownProject(ref)
  await controlPlane.changed()
  return getProject(controlPlane, ref)
}

/** Brings every project database up to the newest project SQL; returns ref → versions applied. */
/**
 * Brings every project database up to date, server by server. A server that
 * does not answer is skipped and named in `down` (its projects answer 503 until
 * it returns; upgradeProjectsOn() again then), so one server down never stops a
 * node from starting and serving the others.
 */
export async function upgradeAllProjects(controlPlane: ControlPlane): Promise<{ applied: Map<string, number[]>; down: string[] }> {
  const projects = await listAllProjects(controlPlane)
  // The default server always: its platform databases are closed even before its first project.
  return upgradeProjectsOn(controlPlane, [...new Set([DEFAULT_SERVER, ...projects.map((p) => p.dbServer)])], projects)
}

/** upgradeAllProjects() for these servers only (those that were down). */
export async function upgradeProjectsOn(controlPlane: ControlPlane, servers: string[], projects?: ProjectRecord[]): Promise<{ applied: Map<string, number[]>; down: string[] }> {
  const all = projects ?? (await listAllProjects(controlPlane))
  // A node starting now is counted once its heartbeat begins (data-plane/fleet-size.ts sizes the roles again).
  const nodes = await controlPlane.liveNodes()
  const applied = new Map<string, number[]>()
  const down: string[] = []
  for (const server of servers) {
    try {
      const serverUrl = await controlPlane.serverUrl(server)
      const here = all.filter((p) => p.dbServer === server)
      // New cluster-wide roles first: new project SQL may grant them.
      await ensureClusterRoles(serverUrl)
      // Projects made before role limits existed, or roles changed by hand.
      await limitProjectRoles(serverUrl, here.map((p) => placedProject(p, nodes, controlPlane.defaultServerBudget)))
      for (const project of here) {
        const versions = await upgradeProjectDatabase(serverUrl, projectDatabaseNames(project))
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
