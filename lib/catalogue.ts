// Read side of the platform catalogue, shared by the control plane and the
// data plane. Writes live in control-plane/.
import { platformLoginOf, type PlatformLogin } from './db/platform-logins.ts'
import type pg from 'pg'
import type { ProjectDatabase } from './db/project-pools.ts'
import type { SigningKey } from './jwt.ts'
import type { TxEnd } from './rest-tx-end.ts'
import { DEFAULT_ROLE_TIMEOUTS, type Plan, type QuotaOverrides, type RoleTimeouts } from './plans.ts'

export { PLANS, type Plan } from './plans.ts'

/**
 * A data-plane process counts as live while its heartbeat in baseplane.nodes
 * (every 2 s) is this recent: live nodes divide the fleet's connection figures
 * and are waited for when a change is made.
 */
export const LIVE_NODE_SECONDS = 10

export const PRODUCTS = ['auth', 'push'] as const
export type Product = (typeof PRODUCTS)[number]

/**
 * Whether a project serves (sql/catalogue/0015_project_states.sql): `suspended`
 * by its operator, `paused` by the fleet after a time without requests. Anything
 * but `active` is refused by the data plane and sends no push.
 */
export const PROJECT_STATES = ['active', 'suspended', 'paused'] as const
export type ProjectState = (typeof PROJECT_STATES)[number]

export interface ProjectRecord {
  ref: string
  name: string
  plan: Plan
  dbServer: string
  dbName: string
  dbApiRole: string
  dbApiPassword: string
  dbOwnerRole: string
  dbOwnerPassword: string
  jwtSecret: string
  anonKey: string
  serviceRoleKey: string
  authEnabled: boolean
  pushEnabled: boolean
  /** Stored auth settings (see workers/auth/settings.ts for their shape and defaults). */
  authSettings: Record<string, unknown>
  /** The API roles' timeouts: the operator's overrides (catalogue column role_timeouts) over the defaults. */
  roleTimeouts: RoleTimeouts
  /**
   * The project's own API roles (`baseplane projects roles`), sorted: roles
   * besides anon, authenticated and service_role that its tokens may name.
   */
  projectRoles: string[]
  /**
   * Its asymmetric signing keys not yet dropped (standby, in use, previously
   * used), oldest first; empty for a project made before they existed, until
   * the control plane's next start gives it one (control-plane/signing-keys.ts).
   */
  signingKeys: SigningKey[]
  state: ProjectState
  /** The operator's reason for a suspension: for operators only, never in an answer to the project's callers. */
  stateReason: string | undefined
  /** When the state last changed (undefined: active since it was made). */
  stateChangedAt: string | undefined
  /** The operator's quota overrides over the plan's (lib/plans.ts projectQuotas). */
  quotaOverrides: QuotaOverrides
  /** Past its database size cap: the API roles' writes are refused (sql/catalogue/0016). */
  readOnly: boolean
  /** Past its storage egress cap this month: Storage's downloads are refused (sql/catalogue/0021). */
  storageEgressCapped: boolean
  /** The schemas its data API exposes, the default first (sql/catalogue/0017; lib/pg-catalog/exposed-schemas.ts). */
  restSchemas: string[]
  /** The most rows its data API answers per response, null for the node's default (sql/catalogue/0018). */
  restMaxRows: number | null
  /** The function its data API calls before every request's statement, `schema.fn` or `fn`, null for none (sql/catalogue/0019; lib/pg-catalog/pre-request.ts). */
  restPreRequest: string | null
  /** How its data API ends a request's transaction, PostgREST's db-tx-end (sql/catalogue/0023; lib/rest-tx-end.ts). */
  restTxEnd: TxEnd
  /** Whether its data API answers plans (Accept: application/vnd.pgrst.plan), PostgREST's db-plan-enabled (sql/catalogue/0023). */
  restPlans: boolean
  version: number
  createdAt: string
  /** Host and port of the server the database lives on (resolved from db_servers). */
  dbHost: string
  dbPort: number
  /** Connections the fleet's data-plane processes together may open on an added server; undefined on the default server (config maxProjectConnections). */
  dbServerBudget: number | undefined
}

const columns = `
  p.ref, p.name, p.plan, p.db_server, p.db_name, p.db_api_role, p.db_api_password,
  p.db_owner_role, p.db_owner_password, p.jwt_secret, p.anon_key, p.service_role_key,
  p.auth_enabled, p.push_enabled, p.auth_settings, p.role_timeouts, p.state, p.state_reason, p.state_changed_at,
  p.quota_overrides, p.read_only, p.storage_egress_capped, p.rest_schemas, p.rest_max_rows, p.rest_pre_request, p.rest_tx_end, p.rest_plans,
  p.version, p.created_at, s.admin_url, s.connection_budget,
  array(select r.name from baseplane.project_roles r where r.ref = p.ref order by r.name) as project_roles,
  coalesce((select json_agg(json_build_object(
      'kid', k.kid, 'alg', k.alg, 'jwk', k.private_jwk, 'signs_from', baseplane.epoch_ms(k.signs_from),
      'retires_at', baseplane.epoch_ms(k.retires_at), 'drops_at', baseplane.epoch_ms(k.drops_at), 'created_at', baseplane.epoch_ms(k.created_at))
    order by k.signs_from)
    from baseplane.signing_keys k where k.ref = p.ref and (k.drops_at is null or k.drops_at > now())), '[]') as signing_keys`

interface Row {
  ref: string
  name: string
  plan: Plan
  db_server: string
  db_name: string
  db_api_role: string
  db_api_password: string
  db_owner_role: string
  db_owner_password: string
  jwt_secret: string
  anon_key: string
  service_role_key: string
  auth_enabled: boolean
  push_enabled: boolean
  auth_settings: Record<string, unknown>
  role_timeouts: StoredRoleTimeouts
  project_roles: string[]
  signing_keys: StoredSigningKey[]
  state: ProjectState
  state_reason: string | null
  state_changed_at: Date | null
  quota_overrides: QuotaOverrides
  read_only: boolean
  storage_egress_capped: boolean
  rest_schemas: string[]
  rest_max_rows: number | null
  rest_pre_request: string | null
  rest_tx_end: TxEnd
  rest_plans: boolean
  version: string
  created_at: Date
  admin_url: string | null
  connection_budget: number | null
}

/**
 * Overrides as stored, in milliseconds (0: no limit). The column's check
 * (sql/catalogue/0004) admits only these keys with whole numbers.
 */
export type StoredRoleTimeouts = Partial<Record<'anon' | 'authenticated' | 'service_role' | 'idle_in_transaction', number>>

export function resolveRoleTimeouts(stored: StoredRoleTimeouts): RoleTimeouts {
  const defaults = DEFAULT_ROLE_TIMEOUTS
  return {
    statementTimeoutMs: {
      anon: stored.anon ?? defaults.statementTimeoutMs.anon,
      authenticated: stored.authenticated ?? defaults.statementTimeoutMs.authenticated,
      service_role: stored.service_role ?? defaults.statementTimeoutMs.service_role,
    },
    idleInTransactionTimeoutMs: stored.idle_in_transaction ?? defaults.idleInTransactionTimeoutMs,
  }
}

interface StoredSigningKey {
  kid: string
  alg: SigningKey['alg']
  jwk: SigningKey['privateJwk']
  /** Milliseconds since the epoch (baseplane.epoch_ms). */
  signs_from: number
  retires_at: number | null
  drops_at: number | null
  created_at: number
}

function toSigningKey(stored: StoredSigningKey): SigningKey {
  return {
    kid: stored.kid,
    alg: stored.alg,
    privateJwk: stored.jwk,
    signsFrom: stored.signs_from,
    retiresAt: stored.retires_at ?? undefined,
    dropsAt: stored.drops_at ?? undefined,
    createdAt: stored.created_at,
  }
}

function toRecord(row: Row, defaultServerUrl: string): ProjectRecord {
  const server = new URL(row.admin_url ?? defaultServerUrl)
  return {
    ref: row.ref,
    name: row.name,
    plan: row.plan,
    dbServer: row.db_server,
    dbName: row.db_name,
    dbApiRole: row.db_api_role,
    dbApiPassword: row.db_api_password,
    dbOwnerRole: row.db_owner_role,
    dbOwnerPassword: row.db_owner_password,
    jwtSecret: row.jwt_secret,
    anonKey: row.anon_key,
    serviceRoleKey: row.service_role_key,
    authEnabled: row.auth_enabled,
    pushEnabled: row.push_enabled,
    authSettings: row.auth_settings,
    roleTimeouts: resolveRoleTimeouts(row.role_timeouts),
    projectRoles: row.project_roles,
    signingKeys: row.signing_keys.map(toSigningKey),
    state: row.state,
    stateReason: row.state_reason ?? undefined,
    stateChangedAt: row.state_changed_at?.toISOString(),
    quotaOverrides: row.quota_overrides,
    readOnly: row.read_only,
    storageEgressCapped: row.storage_egress_capped,
    restSchemas: row.rest_schemas,
    restMaxRows: row.rest_max_rows,
    restPreRequest: row.rest_pre_request,
    restTxEnd: row.rest_tx_end,
    restPlans: row.rest_plans,
    version: Number(row.version),
    createdAt: row.created_at.toISOString(),
    dbHost: server.hostname,
    dbPort: Number(server.port || 5432),
    dbServerBudget: row.connection_budget ?? undefined,
  }
}

export async function readProject(pool: pg.Pool | pg.ClientBase, ref: string, defaultServerUrl: string): Promise<ProjectRecord | undefined> {
  const { rows } = await pool.query<Row>({
    name: 'baseplane_read_project',
    text: `select ${columns} from baseplane.projects p left join baseplane.db_servers s on s.id = p.db_server where p.ref = $1`,
    values: [ref],
  })
  return rows[0] ? toRecord(rows[0], defaultServerUrl) : undefined
}

/** The records of those of `refs` that exist, in no particular order (the directory's batched misses). */
export async function readProjects(pool: pg.Pool | pg.ClientBase, refs: readonly string[], defaultServerUrl: string): Promise<ProjectRecord[]> {
  const { rows } = await pool.query<Row>({
    name: 'baseplane_read_projects',
    text: `select ${columns} from baseplane.projects p left join baseplane.db_servers s on s.id = p.db_server where p.ref = any($1::text[])`,
    values: [refs],
  })
  return rows.map((row) => toRecord(row, defaultServerUrl))
}

export async function listProjects(pool: pg.Pool | pg.ClientBase, defaultServerUrl: string): Promise<ProjectRecord[]> {
  const { rows } = await pool.query<Row>(
    `select ${columns} from baseplane.projects p left join baseplane.db_servers s on s.id = p.db_server order by p.created_at, p.ref`,
  )
  return rows.map((row) => toRecord(row, defaultServerUrl))
}

/**
 * Connection details the data plane uses (the project's login role), with the
 * pool limits the caller decides: `serverBudget`, the connections the fleet's
 * processes together may hold to the project's server (each takes its share);
 * `poolMax`, the project's pool size per thread. The pools fall back to the
 * worker options when they are absent.
 */
export function apiDatabaseOf(project: ProjectRecord, limits: Pick<ProjectDatabase, 'serverBudget' | 'poolMax'> = {}): ProjectDatabase {
  return {
    ref: project.ref,
    host: project.dbHost,
    port: project.dbPort,
    database: project.dbName,
    user: project.dbApiRole,
    password: project.dbApiPassword,
    serverBudget: limits.serverBudget,
    poolMax: limits.poolMax,
  }
}

/**
 * The same database as one of the platform's own login roles (lib/db/platform-logins.ts):
 * `auth` for Auth's statements, `platform` for Push's and the quota counters.
 */
export function platformDatabaseOf(project: ProjectRecord, login: PlatformLogin, limits: Pick<ProjectDatabase, 'serverBudget' | 'poolMax'> = {}): ProjectDatabase {
  return { ...apiDatabaseOf(project, limits), ...platformLoginOf(project, login) }
}

/** The connection string a project's developers use (its owner role). */
export function ownerUrlOf(project: ProjectRecord): string {
  const user = encodeURIComponent(project.dbOwnerRole)
  const password = encodeURIComponent(project.dbOwnerPassword)
  return `postgres://${user}:${password}@${project.dbHost}:${project.dbPort}/${project.dbName}`
}

/** Base URL of a project: host form with a base domain, path form otherwise. */
export function baseUrlOf(ref: string, publicUrl: string, baseDomain: string | undefined): string {
  if (baseDomain) return `${new URL(publicUrl).protocol}//${ref}.${baseDomain}`
  return `${publicUrl}/project/${ref}`
}
