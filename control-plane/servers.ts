// The PostgreSQL servers project databases may live on: the default one (the
// catalogue's own server, DATABASE_URL or the embedded one, which has no row)
// and those added with `baseplane servers add` (rows of baseplane.db_servers),
// each with a connection budget for the fleet's data-plane processes together
// (each live node takes its share: lib/db/connection-budget.ts). New projects go
// to the answering, not draining server with the most room.
import pg from 'pg'
import type { Plan } from '../lib/catalogue.ts'
import { platformErrors } from '../lib/errors.ts'
import { planLimits } from '../lib/plans.ts'
import { ensureClusterRoles } from './project-database.ts'
import * as db from './db/servers.ts'

export const DEFAULT_SERVER = 'default'

/** Connections kept free on an added server for the platform's own use (control plane, upgrades, psql). */
const PLATFORM_RESERVE = 10
const MAX_BUDGET = 100000
const CONNECT_TIMEOUT_MS = 5000

export interface DatabaseServer {
  id: string
  /** The admin URL, password included: never shown as is (views.ts masks it). */
  url: string
  /** Connections the fleet's data-plane processes together may open to project databases there. */
  connectionBudget: number
  projects: number
  /** Connections its projects' plans may use in one data-plane process (planConnections, summed). */
  used: number
  /** Budget minus what its projects may use: where new projects go. */
  room: number
  /** Takes no new project (`servers drain`); the default server never drains. */
  draining: boolean
}

/**
 * Connections one project may hold in one data-plane process: each concern runs
 * at most its plan's concurrent requests on one thread (fair-share.ts), so three
 * concerns at most three times that, and never past its role's limit.
 */
export function planConnections(plan: Plan): number {
  const limits = planLimits(plan)
  return Math.min(limits.apiConnections, 3 * limits.concurrentRequests)
}

/** What a server says of itself when asked now. */
export interface ServerState {
  state: 'up' | 'down'
  /** Connections open to the platform's project databases there (every node's), when up. */
  connectionsInUse: number | undefined
  /** Why it is down: the driver's message, never a password. */
  reason: string | undefined
}

const STATE_TIMEOUT_MS = 2000

export interface AddServerInput {
  url: string
  id?: string
  /** Validated here: a whole number from 1 to 100000; without it, computed from the server's settings. */
  connections?: unknown
}

/** A server's address for messages: never its password. */
export function serverAddress(url: string): string {
  const parsed = new URL(url)
  return `${parsed.hostname}:${parsed.port || 5432}`
}

function validId(id: string): string {
  if (!/^[a-z0-9_-]{1,40}$/.test(id) || id === DEFAULT_SERVER) {
    throw platformErrors.invalidArgument(`Invalid server id "${id}": 1 to 40 lowercase letters, digits, "-" or "_", and not "default"`)
  }
  return id
}

function validUrl(url: string): string {
  let parsed: URL | undefined
  try {
    parsed = new URL(url)
  } catch {
    parsed = undefined
  }
  if (!parsed || !/^postgres(ql)?:$/.test(parsed.protocol) || parsed.hostname === '') {
    throw platformErrors.invalidArgument('The database server URL must look like postgres://user:password@host:5432/postgres')
  }
  return url
}

function validBudget(connections: unknown): number | undefined {
  if (connections === undefined || connections === null) return undefined
  if (typeof connections !== 'number' || !Number.isInteger(connections) || connections < 1 || connections > MAX_BUDGET) {
    throw platformErrors.invalidArgument(`The connection budget must be a whole number from 1 to ${MAX_BUDGET}, got ${JSON.stringify(connections)}`)
  }
  return connections
}

interface Probe {
  systemIdentifier: string
  /** What the server leaves the fleet's data-plane processes when no budget is given. */
  budget: number
  budgetReason: string
}

/**
 * Connects to the new server and checks what the platform will do there:
 * create roles (some with BYPASSRLS), databases and event triggers, all of
 * which need a superuser.
 */
async function probe(url: string): Promise<Probe> {
  const address = serverAddress(url)
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, application_name: 'baseplane-control-plane' })
  client.on('error', () => {})
  try {
    await client.connect()
  } catch (error) {
    throw platformErrors.invalidArgument(`Could not connect to database server ${address}: ${(error as Error).message}`)
  }
  try {
    const settings = await db.serverSettings(client)
    if (!settings.superuser) {
      throw platformErrors.invalidArgument(
        `Role "${settings.role}" on database server ${address} is not a superuser: Baseplane creates databases, roles and event triggers there, which needs one`,
      )
    }
    const systemIdentifier = await db.systemIdentifier(client)
    const reserved = Number(settings.reserved ?? 0)
    // reserved_connections are the slots kept for the platform's API roles
    // (pg_use_reserved_connections): exactly what the data plane spends.
    if (reserved > 0) return { systemIdentifier, budget: reserved, budgetReason: `reserved_connections is ${reserved}` }
    const budget = Number(settings.max) - Number(settings.superuser_reserved) - PLATFORM_RESERVE
    return {
      systemIdentifier,
      budget,
      budgetReason: `max_connections ${settings.max} - superuser_reserved_connections ${settings.superuser_reserved} - ${PLATFORM_RESERVE} for the platform`,
    }
  } finally {
    await client.end().catch(() => {})
  }
}

/** The first free id of the form db2, db3, ... (the default server being the first). */
async function freeId(catalogue: pg.Pool): Promise<string> {
  const taken = new Set(await db.serverIds(catalogue))
  let n = 2
  while (taken.has(`db${n}`)) n += 1
  return `db${n}`
}

/** Registers a server: checks it, installs the cluster roles, records its budget. */
export async function addServer(catalogue: pg.Pool, input: AddServerInput): Promise<string> {
  const url = validUrl(input.url)
  const requestedId = input.id === undefined ? undefined : validId(input.id)
  const requestedBudget = validBudget(input.connections)
  if (requestedId !== undefined) {
    if (await db.serverIdTaken(catalogue, requestedId)) throw platformErrors.invalidArgument(`A database server with id "${requestedId}" already exists`)
  }
  const server = await probe(url)
  const address = serverAddress(url)
  if (server.systemIdentifier === (await db.systemIdentifier(catalogue))) {
    throw platformErrors.invalidArgument(`Database server ${address} is the default server (the catalogue's own): it needs no row`)
  }
  const same = await db.serverIdOfSystem(catalogue, server.systemIdentifier)
  if (same !== undefined) throw platformErrors.invalidArgument(`Database server ${address} is already added as "${same}"`)
  if (requestedBudget !== undefined && requestedBudget > Math.max(server.budget, 1)) {
    throw platformErrors.invalidArgument(`Database server ${address} allows at most ${Math.max(server.budget, 1)} connections to the data plane (${server.budgetReason}), got ${requestedBudget}`)
  }
  const budget = requestedBudget ?? server.budget
  if (budget < 1 || budget > MAX_BUDGET) {
    throw platformErrors.invalidArgument(`Database server ${address} leaves no usable connection budget (${server.budgetReason}): give one with --connections`)
  }
  await ensureClusterRoles(url)
  const id = requestedId ?? (await freeId(catalogue))
  try {
    await db.insertServer(catalogue, { id, url, budget, systemIdentifier: server.systemIdentifier })
  } catch (error) {
    // Another `servers add` of the same id or server got there first.
    if ((error as { code?: string }).code === '23505') {
      throw platformErrors.invalidArgument(`Database server ${address} or id "${id}" was added at the same time by another command`)
    }
    throw error
  }
  return id
}

/** Every server, the default first, with its projects and room. */
export async function listServers(catalogue: pg.Pool, defaultServerUrl: string, defaultBudget: number): Promise<DatabaseServer[]> {
  const rows = await db.serverRows(catalogue, DEFAULT_SERVER)
  return rows.map((row) => {
    const connectionBudget = row.budget ?? defaultBudget
    const used = row.plans.reduce((sum, plan) => sum + planConnections(plan), 0)
    return { id: row.id, url: row.url ?? defaultServerUrl, connectionBudget, projects: row.plans.length, used, room: connectionBudget - used, draining: row.draining }
  })
}

/** Whether the server answers now, and how many connections the platform's project roles hold there. */
export async function serverState(url: string): Promise<ServerState> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: STATE_TIMEOUT_MS, query_timeout: STATE_TIMEOUT_MS, application_name: 'baseplane-control-plane' })
  client.on('error', () => {})
  try {
    await client.connect()
    return { state: 'up', connectionsInUse: await db.apiConnectionsInUse(client), reason: undefined }
  } catch (error) {
    return { state: 'down', connectionsInUse: undefined, reason: (error as Error).message }
  } finally {
    await client.end().catch(() => {})
  }
}

/**
 * Where a new project goes: the most room among servers that are not draining
 * and answer now (ties: the default server, then the older). A server that does
 * not answer is passed over, so creation fails only when none answers.
 */
export async function placeProject(catalogue: pg.Pool, defaultServerUrl: string, defaultBudget: number): Promise<DatabaseServer> {
  const servers = (await listServers(catalogue, defaultServerUrl, defaultBudget)).filter((server) => !server.draining)
  const ranked = servers.map((server, order) => ({ server, order })).sort((a, b) => b.server.room - a.server.room || a.order - b.order)
  for (const { server } of ranked) {
    if ((await serverState(server.url)).state === 'up') return server
  }
  throw platformErrors.noServerAvailable()
}

/** What an operator may ask of an added server, and not of the default one. */
export type AddedServerOperation = 'set' | 'drain' | 'remove'

/** What the default server is, for the refusals that explain why it is not an added one. */
const DEFAULT_IS = "it is the catalogue's own server (DATABASE_URL, or the embedded one), set by the platform's configuration rather than added"

/**
 * The refusal of `operation` on the default server, saying why it cannot be
 * done there: it has no row to drain or remove (it is the configuration's),
 * the catalogue itself lives on it, and it is where new projects go when no
 * added server takes them (placeProject never passes it over as draining).
 */
export function defaultServerRefusal(operation: AddedServerOperation): Error {
  if (operation === 'drain') {
    return platformErrors.invalidArgument(
      `The default server cannot be drained: ${DEFAULT_IS}, and it is where new projects go when no added server takes them. To send new projects elsewhere, give an added server more room than it (baseplane servers set ID --connections N): new projects go to the server with the most room`,
    )
  }
  if (operation === 'remove') {
    return platformErrors.invalidArgument(
      `The default server cannot be removed: ${DEFAULT_IS}, and the platform's catalogue lives on it, so the platform cannot run without it`,
    )
  }
  return platformErrors.invalidArgument("The default server (the catalogue's own) is set by the platform's configuration: its budget is BASEPLANE_MAX_PROJECT_CONNECTIONS")
}

function addedServer(id: string, operation: AddedServerOperation): string {
  if (id === DEFAULT_SERVER) throw defaultServerRefusal(operation)
  return validId(id)
}

async function serverRow(catalogue: pg.Pool, id: string, operation: AddedServerOperation): Promise<{ url: string }> {
  const url = await db.serverAdminUrl(catalogue, addedServer(id, operation))
  if (url === undefined) throw platformErrors.serverNotFound(id)
  return { url }
}

/** The most the data plane may be given on a server that answers: what probe() computes, at most. */
async function allowedBudget(url: string): Promise<{ budget: number; reason: string } | undefined> {
  try {
    const server = await probe(url)
    return { budget: Math.max(server.budget, 1), reason: server.budgetReason }
  } catch {
    return undefined
  }
}

/** `servers set ID --connections N`: checked against what the server allows, when it answers. */
export async function setServerBudget(catalogue: pg.Pool, id: string, connections: unknown): Promise<void> {
  const budget = validBudget(connections)
  if (budget === undefined) throw platformErrors.invalidArgument('A connection budget is required (connections)')
  const { url } = await serverRow(catalogue, id, 'set')
  const allowed = await allowedBudget(url)
  if (allowed !== undefined && budget > allowed.budget) {
    throw platformErrors.invalidArgument(`Database server ${serverAddress(url)} allows at most ${allowed.budget} connections to the data plane (${allowed.reason}), got ${budget}`)
  }
  await db.updateServerBudget(catalogue, id, budget)
}

/** `servers drain ID` (and `--undo`): a draining server keeps its projects and takes no new one. */
export async function setServerDraining(catalogue: pg.Pool, id: string, draining: boolean): Promise<void> {
  // The default server never drains: taking new projects again, it already does.
  if (id === DEFAULT_SERVER && !draining) return
  await serverRow(catalogue, id, 'drain')
  await db.updateServerDraining(catalogue, id, draining)
}

/** `servers remove ID`: only a server that holds no project. */
export async function removeServer(catalogue: pg.Pool, id: string): Promise<void> {
  await serverRow(catalogue, id, 'remove')
  const projects = await db.countProjectsOn(catalogue, id)
  if (projects > 0) {
    throw platformErrors.invalidArgument(`Database server ${id} holds ${projects} project${projects === 1 ? '' : 's'}: delete or move them first (drain it to stop new ones)`)
  }
  // A project placed there meanwhile keeps the row: the foreign key refuses the delete.
  await db.deleteEmptyServer(catalogue, id)
}
