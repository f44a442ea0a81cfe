// What each plan may take of a node and of its database server. One table, read
// by the data plane (fair shares), the workers (pool sizes) and the control
// plane (role connection limits), so a plan's limits are written once.
import type { Plan } from './catalogue.ts'
import type { ApiRole } from './db/request-transaction.ts'

export interface PlanLimits {
  /**
   * Requests of one project that one concern (auth, graphql, push) runs at once
   * in one data-plane process. Kept below a worker thread's task slots
   * (BASEPLANE_TASKS_PER_THREAD, 16 by default) so a project never fills the
   * thread it shares with others.
   */
  concurrentRequests: number
  /** Requests of one project that may wait for a slot per concern; beyond this, 503 with Retry-After. */
  queuedRequests: number
  /** Connections one data-plane node may hold for the project (its api role's CONNECTION LIMIT is this times the live nodes: apiRoleLimit). */
  apiConnections: number
  /** CONNECTION LIMIT of the project's owner role (its developers' psql, migrations, tools). */
  ownerConnections: number
  /**
   * Connections of the project's push sender (its LISTEN connection and its
   * batches' pool), on the one node that holds its sending lease. They use the
   * api role too: with the concerns' pools (3 x concurrentRequests) they fit in apiConnections.
   */
  pushActorConnections: number
}

export const PLAN_LIMITS: Readonly<Record<Plan, Readonly<PlanLimits>>> = Object.freeze({
  free: Object.freeze({ concurrentRequests: 4, queuedRequests: 32, apiConnections: 20, ownerConnections: 10, pushActorConnections: 3 }),
  plus: Object.freeze({ concurrentRequests: 6, queuedRequests: 64, apiConnections: 40, ownerConnections: 20, pushActorConnections: 4 }),
  pro: Object.freeze({ concurrentRequests: 8, queuedRequests: 128, apiConnections: 60, ownerConnections: 40, pushActorConnections: 6 }),
  business: Object.freeze({ concurrentRequests: 8, queuedRequests: 256, apiConnections: 100, ownerConnections: 60, pushActorConnections: 9 }),
})

export function planLimits(plan: Plan): Readonly<PlanLimits> {
  return PLAN_LIMITS[plan]
}

/**
 * The CONNECTION LIMIT of a project's api role on a fleet of `nodes`: the
 * plan's figure is what one node may use (its concerns' pools and the push
 * sender's connections fit in it), so the role's limit grows with the live
 * nodes, capped by the server's budget (never below the plan's figure). A node
 * that joins before the roles are raised waits for a connection instead of
 * failing (lib/db/project-pool.ts).
 */
export function apiRoleLimit(plan: Plan, nodes: number, serverBudget: number): number {
  const figure = PLAN_LIMITS[plan].apiConnections
  return Math.max(figure, Math.min(figure * Math.max(1, nodes), serverBudget))
}

/** Per API role, in milliseconds (0: no limit). The operator may change them per project. */
export interface RoleTimeouts {
  statementTimeoutMs: Record<ApiRole, number>
  idleInTransactionTimeoutMs: number
}

/**
 * Supabase's defaults for the roles a browser can reach (anon 3 s,
 * authenticated 8 s); service_role, which only servers hold, gets a minute
 * rather than no limit, so no request can hold a worker slot indefinitely.
 */
export const DEFAULT_ROLE_TIMEOUTS: Readonly<RoleTimeouts> = Object.freeze({
  statementTimeoutMs: Object.freeze({ anon: 3000, authenticated: 8000, service_role: 60000 }),
  idleInTransactionTimeoutMs: 10000,
})
