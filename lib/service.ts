// The contract between the data plane (main thread) and a concern's Piscina
// worker: a request in, a response out, both plain data (they cross threads).
import type { MessagePort } from 'node:worker_threads'
import type { Plan } from './catalogue.ts'
import type { ProjectDatabase } from './db/project-pools.ts'
import type { RequestIdentity } from './roles.ts'
import type { SigningKey } from './jwt.ts'
import type { QuotaCaps, RoleTimeouts } from './plans.ts'
import type { TxEnd } from './rest-tx-end.ts'

export type Concern = 'auth' | 'graphql' | 'push' | 'rest' | 'storage'

/**
 * What every concern's worker knows about the project a request is for. A
 * worker gets only the settings its concern reads (DataPlane.contextOf), so no
 * secret crosses into a thread that does not use it.
 */
export interface ProjectContext {
  ref: string
  plan: Plan
  /** Catalogue version: changes whenever any setting of the project changes. */
  version: number
  /**
   * Where the concern's statements run: for Auth, its own login role (`bp_<ref>_auth`); for every other concern,
   * the API's (`bp_<ref>_api`), which may only become the API roles (lib/db/platform-logins.ts).
   */
  database: ProjectDatabase
  /** Push's and the quota counters' login role (`bp_<ref>_platform`), on which no owner code runs; Auth and Push only. */
  platformDatabase?: ProjectDatabase
  /** statement_timeout per API role and idle_in_transaction_session_timeout, set per request transaction. */
  roleTimeouts: RoleTimeouts
  /** The figures the project is refused past this month (its quotas under `cap`; empty under `bill`). */
  caps: QuotaCaps
  /** Past its database size cap: the API roles' transactions are read-only (lib/plans.ts). */
  readOnly: boolean
}

/** What the data API's worker knows besides: where the project is served (its OpenAPI description's host and base path), and what it exposes. */
export interface RestProjectContext extends ProjectContext {
  /** Public base URL of the project (`{base_url}`), without a trailing slash. */
  baseUrl: string
  /** The schemas the data API exposes, the default first (PostgREST's `db-schemas`; lib/pg-catalog/exposed-schemas.ts). */
  schemas: readonly string[]
  /** The most rows one response carries (PostgREST's `db-max-rows`), as the operator set it for the project; null: the node's (`WorkerOptions.rest.maxRows`). */
  maxRows: number | null
  /** The function called as the caller before every request's statement (PostgREST's `db-pre-request`; lib/pg-catalog/pre-request.ts), as the operator named it for the project; null: none. */
  preRequest: string | null
  /** How a request's transaction ends (PostgREST's `db-tx-end`; lib/rest-tx-end.ts), as the operator set it for the project. */
  txEnd: TxEnd
  /** Whether `Accept: application/vnd.pgrst.plan` answers the statement's EXPLAIN (PostgREST's `db-plan-enabled`), as the operator set it for the project. */
  plans: boolean
}

/** What Storage's worker knows besides: it signs and checks signed URLs with the project's secret, and names its public URLs. */
export interface StorageProjectContext extends ProjectContext {
  /** Public base URL of the project (`{base_url}`), without a trailing slash. */
  baseUrl: string
  jwtSecret: string
  /** Past its storage egress cap this month (lib/plans.ts): its downloads are refused. */
  egressCapped: boolean
}

/** What Auth's worker knows besides: it signs tokens and writes links and mails. */
export interface AuthProjectContext extends ProjectContext {
  /** Public base URL of the project (`{base_url}`), without a trailing slash. */
  baseUrl: string
  jwtSecret: string
  /**
   * The project's asymmetric signing keys (lib/jwt.ts): the one in use signs
   * access tokens, all are published in the JWKS. Which one is in use depends
   * on the time, so the worker decides per token (lib/jwt.ts signerOf).
   */
  signingKeys: readonly SigningKey[]
  /** Stored auth settings as the control plane saved them (workers/auth applies defaults). */
  authSettings: Record<string, unknown>
  /** The project's own API roles, which the admin API may give a user besides authenticated. */
  projectRoles: readonly string[]
  /** The project's name: what authenticator apps show for its TOTP factors unless its settings name another issuer. */
  projectName: string
}

export interface ServiceRequest<Project extends ProjectContext = ProjectContext> {
  concern: Concern
  /** HEAD comes as GET, with `head` set (the answer's body is not sent). */
  method: string
  head?: boolean
  /** Path below the concern's prefix, e.g. "/token" for /auth/v1/token; "" for the prefix itself. */
  path: string
  /** Raw query string without "?". */
  query: string
  /** Lower-cased header names. */
  headers: Record<string, string>
  body: string
  clientAddress: string
  project: Project
  /**
   * The verified caller: role and claims of the Bearer token, or of the apikey
   * when no token was sent. Undefined only on routes that need no apikey
   * (links a browser opens, such as GET /auth/v1/verify).
   */
  identity: RequestIdentity | undefined
  /** Which project key was sent in `apikey`, if any. */
  apikeyRole: 'anon' | 'service_role' | undefined
  /**
   * For a route whose manifest streams its body (Storage's uploads): the body
   * arrives here (lib/port-stream.ts receiveFromPort) and `body` is empty.
   */
  bodyPort?: MessagePort
  /** For a concern that streams its answers (Storage): where an answer marked `streamed` sends its body (lib/port-stream.ts sendToPort). */
  replyPort?: MessagePort
}

export interface ServiceResponse {
  status: number
  headers: Record<string, string>
  body: string
  /** Set-Cookie lines, each a header of its own (lib/http.ts OutgoingResponse). */
  setCookies?: readonly string[]
  /**
   * Set by a service when this answer counts as a failed attempt for the
   * per-address throttle (e.g. a 4xx from sign-in); the data plane feeds it.
   */
  throttleFailure?: boolean
  /** What the request counts for in the project's usage beyond its answer (Auth's sessions and mail), when anything. */
  usage?: ServiceUsage
  /** The body comes through the request's `replyPort` instead of `body`, of this many bytes when known (Content-Length). */
  streamed?: { length?: number }
}

/**
 * A request's usage as its worker saw it, for the data plane's counts
 * (lib/metrics/project-figures.ts `used`, lib/metrics/active-users.ts).
 */
export interface ServiceUsage {
  /**
   * A session was issued: by a sign-in (a first factor), a token refresh, or a
   * second factor's upgrade of a session already counted. Each makes `user`
   * an active user of the month (Supabase's monthly active users).
   */
  session?: 'sign_in' | 'refresh' | 'upgrade'
  user?: { id: string; anonymous: boolean }
  /** Mails the platform sent (SMTP or the outbox) while answering. */
  mails?: number
  /** Bytes of stored objects the answer sends (Storage's egress), counted when the answer is sent. */
  storageEgressBytes?: number
}

/** A concern's worker module exports a default function of this type. */
export type ServiceHandler<Project extends ProjectContext = ProjectContext> = (request: ServiceRequest<Project>) => Promise<ServiceResponse>

/** Options every concern's worker thread receives as Piscina workerData. */
export interface WorkerOptions {
  /** Whether a worker reports each request's usage (ServiceResponse.usage); false only where usage is not counted (the benchmark's peer). Default true. */
  countUsage?: boolean
  /** Connections the process may hold to a database server whose ProjectDatabase names no serverBudget. */
  maxProjectConnections: number
  /** A project pool's size when its ProjectDatabase names no poolMax. */
  projectPoolSize: number
  idleConnectionMillis: number
  /**
   * The process's per-server connection budget (lib/db/connection-budget.ts
   * createConnectionBudget), made once in the main thread and shared by every
   * worker thread of every concern.
   */
  connectionBudget: SharedArrayBuffer
  /** Platform mail: SMTP when smtpUrl is set, else each project's outbox. */
  mail: { smtpUrl: string | undefined; from: string }
  /** Push: the token endpoint service accounts are checked against; whether http:// Web Push endpoints are allowed (tests). */
  push: { fcmTokenUrl: string; allowInsecureWebPushEndpoints: boolean }
  /** Google sign-in endpoints (platform-level overrides for tests). */
  google: { authorizationUrl: string; tokenUrl: string; certsUrl: string; issuer: string }
  /** The data API: the most rows one response carries (PostgREST's db-max-rows) unless the project sets its own (RestProjectContext.maxRows); 1,000 when absent. */
  rest?: { maxRows: number; aggregates: boolean }
  /** Storage: where bytes live (the fleet's one setting, checked at start), and the platform home's folder for local disk. */
  storage?: StorageBackendConfig
}

/** Where Storage keeps bytes: a folder on local disk, or an S3-compatible store. */
export type StorageBackendConfig =
  | { kind: 'local'; root: string }
  | { kind: 's3'; endpoint: string | undefined; region: string; bucket: string; accessKeyId: string; secretAccessKey: string; forcePathStyle: boolean; prefix: string }

/**
 * The sections of WorkerOptions that only some concerns read. Each concern's
 * threads are given only their own (data-plane/dispatcher.ts): the SMTP URL
 * may carry a password, and no other concern's thread should hold it.
 */
export const WORKER_SECTIONS = {
  auth: ['mail', 'google'],
  graphql: [],
  push: ['push'],
  rest: ['rest'],
  storage: ['storage'],
} as const satisfies Record<Concern, readonly WorkerSectionName[]>

export type WorkerSectionName = 'mail' | 'push' | 'google' | 'rest' | 'storage'

/** What one concern's thread is given: the common options, and its own sections only. */
export type ThreadOptions = Omit<WorkerOptions, WorkerSectionName> & Partial<Pick<WorkerOptions, WorkerSectionName>>

export function json(status: number, body: unknown, headers: Record<string, string> = {}): ServiceResponse {
  return { status, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) }
}
