// How projects are shown by the CLI and the admin API (one shape for both).
// Secrets other than the two API keys are never part of a view.
import { baseUrlOf, ownerUrlOf, type ProjectRecord } from '../lib/catalogue.ts'
import type { DatabaseServer } from './servers.ts'

export interface Addressing {
  publicUrl: string
  baseDomain: string | undefined
}

export function projectView(project: ProjectRecord, addressing: Addressing) {
  return {
    ref: project.ref,
    name: project.name,
    plan: project.plan,
    base_url: baseUrlOf(project.ref, addressing.publicUrl, addressing.baseDomain),
    products: { auth: project.authEnabled, graphql: true, push: project.pushEnabled },
    database: { server: project.dbServer, name: project.dbName },
    created_at: project.createdAt,
  }
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
  return { id: server.id, url: url.toString(), connection_budget: server.connectionBudget, projects: server.projects, room: server.room }
}
