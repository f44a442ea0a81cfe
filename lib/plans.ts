// What each plan may take of a node and of its database server. One table, read
// by the data plane (fair shares), the workers (pool sizes) and the control
// plane (role connection limits), so a plan's limits are written once.
import type { ApiRole } from './roles.ts'

export const PLANS = ['free', 'plus', 'pro', 'business'] as const
export type Plan = (typeof PLANS)[number]

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

/**
 * Monthly quotas (issue 27 item 3), counted per UTC calendar month. Under
 * `bill` a project past a figure is counted and served (what paid plans do);
 * under `cap` what would take it past the figure is refused, where the truth
 * is (../shared/DECISIONS.md): a new user's sign-in from the project's own
 * `auth` tables, a push send at enqueue in its `push` schema, mail at sending
 * in its `auth` tables, and the database size from the latest sample (writes
 * of the API roles and the owner refused past it, reads still served).
 */
export const QUOTA_NAMES = ['monthly_active_users', 'push_deliveries', 'mail_sent', 'database_size_bytes', 'storage_size_bytes', 'storage_egress_bytes'] as const
export type QuotaName = (typeof QUOTA_NAMES)[number]
export const QUOTA_POLICIES = ['bill', 'cap'] as const
export type QuotaPolicy = (typeof QUOTA_POLICIES)[number]
/** A figure per quota; null: no quota. */
export type QuotaFigures = Readonly<Record<QuotaName, number | null>>

export interface Quotas {
  policy: QuotaPolicy
  figures: QuotaFigures
}

/** How a quota is named in sentences. */
export const QUOTA_LABELS: Readonly<Record<QuotaName, string>> = Object.freeze({
  monthly_active_users: 'monthly active users',
  push_deliveries: 'push deliveries',
  mail_sent: 'auth mail sent',
  database_size_bytes: 'database size',
  storage_size_bytes: 'storage size',
  storage_egress_bytes: 'storage egress',
})

const MB = 1024 * 1024
const GB = 1024 * MB

/** Supabase's published figures where it has them (50,000 / 100,000 active users, 500 MB / 8 GB of database, 1 GB / 100 GB of storage, 5 GB / 250 GB of egress). */
export const PLAN_QUOTAS: Readonly<Record<Plan, Readonly<Quotas>>> = Object.freeze({
  free: Object.freeze({ policy: 'cap', figures: Object.freeze({ monthly_active_users: 50_000, push_deliveries: 1_000_000, mail_sent: 3_000, database_size_bytes: 500 * MB, storage_size_bytes: 1 * GB, storage_egress_bytes: 5 * GB }) }),
  plus: Object.freeze({ policy: 'bill', figures: Object.freeze({ monthly_active_users: 100_000, push_deliveries: 5_000_000, mail_sent: 30_000, database_size_bytes: 8 * GB, storage_size_bytes: 100 * GB, storage_egress_bytes: 250 * GB }) }),
  pro: Object.freeze({ policy: 'bill', figures: Object.freeze({ monthly_active_users: 250_000, push_deliveries: 20_000_000, mail_sent: 100_000, database_size_bytes: 32 * GB, storage_size_bytes: 250 * GB, storage_egress_bytes: 500 * GB }) }),
  business: Object.freeze({ policy: 'bill', figures: Object.freeze({ monthly_active_users: 1_000_000, push_deliveries: 100_000_000, mail_sent: 500_000, database_size_bytes: 128 * GB, storage_size_bytes: 1024 * GB, storage_egress_bytes: 2048 * GB }) }),
} satisfies Record<Plan, Quotas>)

/**
 * A project's own overrides (catalogue column quota_overrides): a policy, and
 * per quota a figure or null (no quota); an absent key keeps the plan's.
 */
export interface QuotaOverrides {
  policy?: QuotaPolicy
  figures?: Partial<Record<QuotaName, number | null>>
}

export function planQuotas(plan: Plan): Readonly<Quotas> {
  return PLAN_QUOTAS[plan]
}

/** The plan's quotas with the project's overrides applied. */
export function effectiveQuotas(plan: Plan, overrides: QuotaOverrides = {}): Quotas {
  const base = PLAN_QUOTAS[plan]
  return { policy: overrides.policy ?? base.policy, figures: { ...base.figures, ...overrides.figures } }
}

/** The figures a project is refused past: those it has under `cap` (none under `bill`). */
export type QuotaCaps = Partial<Record<QuotaName, number>>

export function quotaCaps(quotas: Quotas): QuotaCaps {
  if (quotas.policy !== 'cap') return {}
  const caps: QuotaCaps = {}
  for (const name of QUOTA_NAMES) {
    const figure = quotas.figures[name]
    if (figure !== null) caps[name] = figure
  }
  return caps
}

/** The first instant of the UTC month after the one holding `ms`: when monthly quotas reset. */
export function quotaResetsAt(ms = Date.now()): Date {
  const at = new Date(ms)
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1))
}

/** The quotas in bytes (written "500 MB", given as "8GB"), not counts. */
export function isSizeQuota(name: QuotaName): boolean {
  return name.endsWith('_bytes')
}

/** The quotas on what is held now (a size), which do not reset with the month, unlike what a month used. */
export function isLevelQuota(name: QuotaName): boolean {
  return name === 'database_size_bytes' || name === 'storage_size_bytes'
}

/** "50,000" / "500 MB": a figure as a sentence writes it. */
export function quotaFigureText(name: QuotaName, figure: number): string {
  if (!isSizeQuota(name)) return figure.toLocaleString('en-US')
  if (figure >= GB && figure % GB === 0) return `${figure / GB} GB`
  if (figure >= MB && figure % MB === 0) return `${figure / MB} MB`
  return `${figure.toLocaleString('en-US')} bytes`
}

/** The sentence a refusal past a cap carries: which quota, its figure, when it resets. */
export function quotaRefusal(name: QuotaName, figure: number, now = Date.now()): string {
  if (name === 'storage_size_bytes') {
    return `This project's storage has reached its size quota of ${quotaFigureText(name, figure)}, so uploads are refused: remove objects to bring it under the quota, or ask the operator to raise it.`
  }
  if (name === 'database_size_bytes') {
    return `This project's database has reached its size quota of ${quotaFigureText(name, figure)}, so it is read-only: delete data to bring it under the quota, or ask the operator to raise it.`
  }
  const resets = quotaResetsAt(now).toISOString().slice(0, 10)
  return `This project has reached its monthly quota of ${quotaFigureText(name, figure)} ${QUOTA_LABELS[name]}; it resets on ${resets} (UTC), or when the operator raises it.`
}

/**
 * Realtime's limits per plan, as Supabase publishes them (supabase.com/docs/guides/realtime/limits):
 * free is Supabase's Free, plus its Pro, pro its Pro without a spend cap, business its Team.
 * Past one, Realtime's own reasons (data-plane/realtime/limits.ts).
 */
export interface RealtimeLimits {
  /** Sockets open at once for the project. */
  connections: number
  /** Broadcasts sent per second (sockets, HTTP). */
  messagesPerSecond: number
  /** Channel joins per second. */
  joinsPerSecond: number
  /** Channels one socket may have joined. */
  channelsPerConnection: number
  /** Presence track and untrack per second. */
  presencePerSecond: number
  /** A broadcast's payload, in bytes. */
  payloadBytes: number
}

export const REALTIME_LIMITS: Readonly<Record<Plan, Readonly<RealtimeLimits>>> = Object.freeze({
  free: Object.freeze({ connections: 200, messagesPerSecond: 100, joinsPerSecond: 100, channelsPerConnection: 100, presencePerSecond: 20, payloadBytes: 256 * 1024 }),
  plus: Object.freeze({ connections: 500, messagesPerSecond: 500, joinsPerSecond: 500, channelsPerConnection: 100, presencePerSecond: 50, payloadBytes: 3000 * 1024 }),
  pro: Object.freeze({ connections: 10000, messagesPerSecond: 2500, joinsPerSecond: 2500, channelsPerConnection: 100, presencePerSecond: 1000, payloadBytes: 3000 * 1024 }),
  business: Object.freeze({ connections: 10000, messagesPerSecond: 2500, joinsPerSecond: 2500, channelsPerConnection: 100, presencePerSecond: 1000, payloadBytes: 3000 * 1024 }),
})

/**
 * Storage's limits per plan, as Supabase publishes them (supabase.com/docs/guides/storage/uploads/file-limits,
 * .../image-transformations): Free uploads up to 50 MB and has no image transformations; paid plans upload up to
 * 500 GB and transform. A bucket's own `file_size_limit` may only lower the plan's.
 */
export interface StorageLimits {
  /** The largest object one upload may store, in bytes. */
  fileSizeBytes: number
  /** Whether `/render/image` and the `transform` options are offered. */
  imageTransformations: boolean
}

export const STORAGE_LIMITS: Readonly<Record<Plan, Readonly<StorageLimits>>> = Object.freeze({
  free: Object.freeze({ fileSizeBytes: 50 * MB, imageTransformations: false }),
  plus: Object.freeze({ fileSizeBytes: 500 * GB, imageTransformations: true }),
  pro: Object.freeze({ fileSizeBytes: 500 * GB, imageTransformations: true }),
  business: Object.freeze({ fileSizeBytes: 500 * GB, imageTransformations: true }),
})
