// How projects are shown by the CLI and the admin API (one shape for both).
// Secrets other than the two API keys are never part of a view.
import { baseUrlOf, ownerUrlOf, type ProjectRecord } from '../lib/catalogue.ts'
import type { DatabaseServer, ServerState } from './servers.ts'

export interface Addressing {
  publicUrl: string
  baseDomain: string | undefined
}

/** The products every project has, which `products enable` and `disable` do not switch: their ids and names. */
export const ALWAYS_ON = [
  { id: 'graphql', name: 'GraphQL' },
  { id: 'rest', name: 'The Data API (REST)' },
  { id: 'storage', name: 'Storage' },
] as const

/**
 * A project for its operator. `state` is `active`, `suspended` or `paused`;
 * `state_reason` is the operator's reason for a suspension (null otherwise),
 * shown here and nowhere a project's callers can see.
 */
export function projectView(project: ProjectRecord, addressing: Addressing) {
  return {
    ref: project.ref,
    name: project.name,
    plan: project.plan,
    state: project.state,
    state_reason: project.stateReason ?? null,
    state_changed_at: project.stateChangedAt ?? null,
    base_url: baseUrlOf(project.ref, addressing.publicUrl, addressing.baseDomain),
    // GraphQL and the Data API (REST) are always on (their manifests name no catalogue flag); Auth and Push are switched.
    products: { auth: project.authEnabled, graphql: true, push: project.pushEnabled, rest: true },
    database: { server: project.dbServer, name: project.dbName },
    created_at: project.createdAt,
  }
}

/** What a project's products view holds: every product's name, and whether it is on. */
export type ProductsView = ReturnType<typeof projectView>['products']

/** The products on, as the CLI lists them: graphql and rest (the Data API) always, then auth and push when on. */
export function productsOn(products: ProductsView): string[] {
  return [...ALWAYS_ON.map((product) => product.id), ...(['auth', 'push'] as const).filter((product) => products[product])]
}

/** One project in full (`projects show`, `GET /projects/{ref}`): its view and when a node last saw a request for it (null: none recorded). */
export function projectDetailView(project: ProjectRecord, addressing: Addressing, lastRequestAt: string | null) {
  return { ...projectView(project, addressing), last_request_at: lastRequestAt }
}

export function keysView(project: ProjectRecord, addressing: Addressing) {
  return {
    ref: project.ref,
    base_url: baseUrlOf(project.ref, addressing.publicUrl, addressing.baseDomain),
    anon_key: project.anonKey,
    service_role_key: project.serviceRoleKey,
  }
}

export function dbUrlView(project: ProjectRecord) {
  return { ref: project.ref, db_url: ownerUrlOf(project) }
}

/** A server's admin URL carries its superuser's password: shown masked. */
export function serverView(server: DatabaseServer) {
  const url = new URL(server.url)
  if (url.password !== '') url.password = '***'
  return { id: server.id, url: url.toString(), connection_budget: server.connectionBudget, projects: server.projects, used: server.used, room: server.room, draining: server.draining }
}

/** A server as listed: its row, and what it said of itself when asked now. */
export function serverStateView(server: DatabaseServer & ServerState) {
  return { ...serverView(server), state: server.state, connections_in_use: server.connectionsInUse ?? null, ...(server.reason === undefined ? {} : { reason: server.reason }) }
}
