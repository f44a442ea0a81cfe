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
  /** CONNECTION LIMIT of the project's api login role (the platform's connections, all processes together). */
  apiConnections: number
  /** CONNECTION LIMIT of the project's owner role (its developers' psql, migrations, tools). */
  ownerConnections: number
  /**
   * Connections of the project's push sender (its LISTEN connection and its
   * batches' pool), on the one node that holds its sending lease. They use the
   * api role too, so they come off apiConnections before the request pools' share.
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
 * Connections one concern's pools may hold for a project across the whole
 * fleet: the api role's CONNECTION LIMIT, less the push sender's, split evenly
 * between the concerns the project has on. Each node takes its part of this
 * (lib/db/project-pool.ts divides it by the live nodes), so the fleet together
 * stays under the role's limit whatever the number of nodes, down to one
 * connection per concern and node; past that many nodes, a node finding the
 * role's limit reached waits for a connection instead of failing.
 */
export function concernConnections(plan: Plan, products: { auth: boolean; push: boolean }): number {
  const limits = PLAN_LIMITS[plan]
  const concerns = 1 + (products.auth ? 1 : 0) + (products.push ? 1 : 0)
  const push = products.push ? limits.pushActorConnections : 0
  return Math.max(1, Math.floor((limits.apiConnections - push) / concerns))
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
