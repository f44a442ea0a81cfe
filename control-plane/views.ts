// How projects are shown by the CLI and the admin API (one shape for both).
// Secrets other than the two API keys are never part of a view.
import { baseUrlOf, ownerUrlOf, type ProjectRecord } from '../lib/catalogue.ts'
import type { DatabaseServer, ServerState } from './servers.ts'

export interface Addressing {
  publicUrl: string
  baseDomain: string | undefined
}

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
    products: { auth: project.authEnabled, graphql: true, push: project.pushEnabled },
    database: { server: project.dbServer, name: project.dbName },
    created_at: project.createdAt,
  }
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
