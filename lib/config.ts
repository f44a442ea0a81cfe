// The one module that reads the environment. Everything else receives the
// frozen PlatformConfig that loadConfig() returns.
import path from 'node:path'
import { ConfigError } from './errors.ts'
import { parseProxyRange, type ProxyRange } from './http/client-address.ts'
import { MIN_SECRET_BYTES, webhookSecretBytes } from './webhooks.ts'
import type { StorageBackendConfig } from './service.ts'

export interface PlatformConfig {
  /** Admin connection to the platform's PostgreSQL; undefined means "start an embedded one". */
  databaseUrl: string | undefined
  /** Folder for embedded PostgreSQL data and local state (admin token). */
  home: string
  host: string
  port: number
  /** Public origin of the data plane, used to build project base URLs in path form. */
  publicUrl: string
  /** With a base domain, projects are also served at https://<ref>.<baseDomain>. */
  baseDomain: string | undefined
  adminToken: string | undefined
  /** The default server's budget: PostgreSQL connections the fleet's data-plane processes together open to its project databases (each live node takes its share). */
  maxProjectConnections: number
  /** Connections one project may hold in one pool (per worker thread). */
  projectPoolSize: number
  /** Idle project connections are closed after this long, so idle projects cost nothing. */
  idleConnectionMillis: number
  threads: { auth: number; graphql: number; push: number; rest: number; storage: number }
  /**
   * The data API (`/rest/v1`): the most rows one response carries (PostgREST's db-max-rows), and
   * whether `select=` may use aggregates (`count()`, `sum()` ...; PostgREST's db-aggregates-enabled,
   * off by default: an aggregate over a large table is a full scan any caller could ask for).
   */
  rest: { maxRows: number; aggregates: boolean }
  /** Requests one worker thread interleaves (they mostly wait on PostgreSQL). */
  tasksPerThread: number
  /**
   * BASEPLANE_TRUSTED_PROXIES: the reverse proxies (addresses or CIDR ranges) whose X-Forwarded-For
   * names the client, for every throttle (lib/http/client-address.ts); empty: the peer is the client.
   */
  trustedProxies: readonly ProxyRange[]
  throttle: { maxFailures: number; windowSeconds: number; blockSeconds: number }
  embeddedPort: number
  /** SMTP server for all projects' mail; without it mail goes to each project's outbox table. */
  smtpUrl: string | undefined
  /** Sender address of the platform's sending domain. */
  mailFrom: string
  /** Push provider endpoints (platform-level overrides; tests point them at local peers). */
  push: { apnsUrl: string | undefined; fcmUrl: string; fcmTokenUrl: string; allowInsecureWebPushEndpoints: boolean; actors: boolean }
  /** Google sign-in endpoints; tests point them at a local OpenID provider stand-in. */
  google: { authorizationUrl: string; tokenUrl: string; certsUrl: string; issuer: string }
  logLevel: 'silent' | 'info' | 'debug'
  /** BASEPLANE_REQUEST_LOG: one JSON line per answered request on standard output (lib/request-log.ts); off by default. */
  requestLog: boolean
  /**
   * The data plane's HTTP server: `uws` (uWebSockets.js, native; start refuses where
   * no native build loads) or `node` (node:http, asked for explicitly: slower).
   */
  httpEngine: 'uws' | 'node'
  /**
   * On SIGTERM, how long `/health` answers 503 while requests are still served,
   * before the listener closes: at least a balancer's health-check interval times
   * its unhealthy threshold, so it stops sending here first. 0: close at once.
   */
  unreadyMillis: number
  /**
   * Opt-in (0, the default: off): how long a node keeps saying it is ready
   * after its catalogue link last answered (issue 24 item 3); past it,
   * `/health` answers 503 so a balancer takes the node out, since it may be
   * missing changes (a revoked key). Off by default because with one catalogue
   * an outage would turn every node unready and empty the balancer, while the
   * nodes can serve what they know. The link beats every 2 s, hence the floor.
   */
  catalogueSilenceMillis: number
  /**
   * Where Storage keeps object bytes: `local` (the default: a folder under the home,
   * BASEPLANE_STORAGE_ROOT to move it; a fleet on local disk must share that folder) or
   * `s3` (any S3-compatible store: BASEPLANE_STORAGE_S3_*). The fleet's one setting.
   */
  storage: StorageBackendConfig
  /** Usage per project (issue 27): counted in memory, written to the catalogue in batches, rolled up and kept. */
  usage: UsageConfig
  /** Suspension's companions (issue 27 items 4 and 5): pausing idle free projects, waking them, the operator webhook. */
  lifecycle: LifecycleConfig
  /**
   * BASEPLANE_NATS_URL: the NATS servers (one URL, or several separated by commas, of one NATS
   * cluster) that carry Realtime between the fleet's nodes; undefined (the default): one node,
   * delivering in process. The fleet's: every node names one, or none does.
   */
  natsServers: readonly string[] | undefined
}

export interface LifecycleConfig {
  /**
   * BASEPLANE_PAUSE_IDLE_DAYS: free projects without a request for this long
   * are paused; undefined (unset or 0, the default): never. Fractions of a day
   * are allowed (0.5 is 12 hours; tests use a few seconds' worth).
   */
  pauseIdleDays: number | undefined
  /** The same in milliseconds. */
  pauseIdleMillis: number | undefined
  /** How often one node of the fleet looks for idle projects: a tenth of the idle time, from 1 s to 10 min. */
  pauseSweepMillis: number
  /** How often a node writes which projects it served (data-plane/request-activity.ts): a minute, or a tenth of a shorter idle time. */
  activityFlushMillis: number
  /** BASEPLANE_WAKE_ON_REQUEST: whether a paused project's first request resumes it (off by default: only its operator does). */
  wakeOnRequest: boolean
  /** BASEPLANE_WAKE_WAIT_MS: how long that request waits for the resume before it is answered 503 with Retry-After. */
  wakeWaitMillis: number
  /** BASEPLANE_OPERATOR_WEBHOOK_URL and _SECRET (`whsec_<base64>`): where the fleet's events are posted, signed per Standard Webhooks. */
  operatorWebhook: { url: string; secret: string } | undefined
}

export interface UsageConfig {
  /** BASEPLANE_USAGE: whether this node counts usage at all. Off only for the benchmark's peer: a node that does not count bills nothing. */
  enabled: boolean
  /** How often the node writes what it counted (one statement each time), on the interval's boundaries: a minute. */
  flushMillis: number
  /** Months of daily rollups, monthly active users and database sizes kept, the current month included. */
  retentionMonths: number
  /** Months of hourly rollups kept (at most retentionMonths): about 24 times the rows of the daily ones. */
  hourlyRetentionMonths: number
  /** How often one node of the fleet samples every project's database size. */
  sizeSampleMillis: number
}

type Env = Record<string, string | undefined>

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`)
  const value = Number(raw)
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`)
  return value
}

function url(env: Env, name: string, fallback: string | undefined): string | undefined {
  const raw = env[name] || fallback
  if (raw === undefined) return undefined
  try {
    const parsed = new URL(raw)
    return parsed.toString().replace(/\/$/, '')
  } catch {
    throw new ConfigError(`${name} must be a URL, got "${raw}"`)
  }
}

export function loadConfig(env: Env = process.env, cwd: string = process.cwd()): Readonly<PlatformConfig> {
  const port = integer(env, 'PORT', 8000, 0, 65535)
  const host = env.HOST || '127.0.0.1'
  const databaseUrl = env.DATABASE_URL ? url(env, 'DATABASE_URL', undefined) : undefined
  if (databaseUrl && !/^postgres(ql)?:/.test(databaseUrl)) {
    throw new ConfigError(`DATABASE_URL must be a postgres:// URL`)
  }
  const baseDomain = env.BASEPLANE_BASE_DOMAIN || undefined
  if (baseDomain && !/^[a-z0-9.-]+(:\d+)?$/i.test(baseDomain)) {
    throw new ConfigError(`BASEPLANE_BASE_DOMAIN must be a host name such as "example.com", got "${baseDomain}"`)
  }
  const adminToken = env.BASEPLANE_ADMIN_TOKEN || undefined
  if (adminToken !== undefined && adminToken.length < 32) {
    throw new ConfigError('BASEPLANE_ADMIN_TOKEN must be at least 32 characters')
  }
  const trustedProxies = proxies(env)
  const logLevel = (env.BASEPLANE_LOG_LEVEL || 'info') as PlatformConfig['logLevel']
  if (!['silent', 'info', 'debug'].includes(logLevel)) {
    throw new ConfigError(`BASEPLANE_LOG_LEVEL must be one of silent, info, debug; got "${logLevel}"`)
  }
  const httpEngine = (env.BASEPLANE_HTTP_ENGINE || 'uws') as PlatformConfig['httpEngine']
  if (httpEngine !== 'uws' && httpEngine !== 'node') {
    throw new ConfigError(`BASEPLANE_HTTP_ENGINE must be uws or node, got "${httpEngine}"`)
  }
  const config: PlatformConfig = {
    databaseUrl,
    home: path.resolve(cwd, env.BASEPLANE_HOME || '.baseplane'),
    host,
    port,
    publicUrl: url(env, 'BASEPLANE_PUBLIC_URL', `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`)!,
    baseDomain,
    adminToken,
    maxProjectConnections: integer(env, 'BASEPLANE_MAX_PROJECT_CONNECTIONS', 2000, 1, 100000),
    projectPoolSize: integer(env, 'BASEPLANE_PROJECT_POOL_SIZE', 4, 1, 1000),
    idleConnectionMillis: integer(env, 'BASEPLANE_IDLE_CONNECTION_MS', 10000, 100, 3600000),
    threads: {
      auth: integer(env, 'BASEPLANE_AUTH_THREADS', 2, 1, 256),
      graphql: integer(env, 'BASEPLANE_GRAPHQL_THREADS', 2, 1, 256),
      push: integer(env, 'BASEPLANE_PUSH_THREADS', 1, 1, 256),
      rest: integer(env, 'BASEPLANE_REST_THREADS', 2, 1, 256),
      storage: integer(env, 'BASEPLANE_STORAGE_THREADS', 1, 1, 256),
    },
    rest: { maxRows: integer(env, 'BASEPLANE_REST_MAX_ROWS', 1000, 1, 1000000), aggregates: flag(env, 'BASEPLANE_REST_AGGREGATES', false) },
    tasksPerThread: integer(env, 'BASEPLANE_TASKS_PER_THREAD', 16, 1, 1000),
    trustedProxies,
    throttle: {
      maxFailures: integer(env, 'BASEPLANE_THROTTLE_MAX_FAILURES', 30, 1, 1000000),
      windowSeconds: integer(env, 'BASEPLANE_THROTTLE_WINDOW_SECONDS', 300, 1, 86400),
      blockSeconds: integer(env, 'BASEPLANE_THROTTLE_BLOCK_SECONDS', 300, 1, 86400),
    },
    embeddedPort: integer(env, 'BASEPLANE_EMBEDDED_PG_PORT', 54329, 0, 65535),
    smtpUrl: env.SMTP_URL ? smtp(env.SMTP_URL) : undefined,
    mailFrom: mailbox(env, 'BASEPLANE_MAIL_FROM', 'Baseplane <no-reply@mail.baseplane.local>'),
    push: {
      // Unset: Apple's production or sandbox host, as each project's key says.
      apnsUrl: url(env, 'BASEPLANE_APNS_URL', undefined),
      fcmUrl: url(env, 'BASEPLANE_FCM_URL', 'https://fcm.googleapis.com')!,
      fcmTokenUrl: url(env, 'BASEPLANE_FCM_TOKEN_URL', 'https://oauth2.googleapis.com/token')!,
      allowInsecureWebPushEndpoints: flag(env, 'BASEPLANE_WEBPUSH_ALLOW_INSECURE', false),
      actors: flag(env, 'BASEPLANE_PUSH_ACTORS', true),
    },
    google: {
      authorizationUrl: url(env, 'BASEPLANE_GOOGLE_AUTHORIZATION_URL', 'https://accounts.google.com/o/oauth2/v2/auth')!,
      tokenUrl: url(env, 'BASEPLANE_GOOGLE_TOKEN_URL', 'https://oauth2.googleapis.com/token')!,
      certsUrl: url(env, 'BASEPLANE_GOOGLE_CERTS_URL', 'https://www.googleapis.com/oauth2/v3/certs')!,
      issuer: env.BASEPLANE_GOOGLE_ISSUER || 'https://accounts.google.com',
    },
    logLevel,
    requestLog: flag(env, 'BASEPLANE_REQUEST_LOG', false),
    httpEngine,
    unreadyMillis: integer(env, 'BASEPLANE_UNREADY_MS', 0, 0, 120000),
    catalogueSilenceMillis: silence(env),
    usage: usageConfig(env),
    lifecycle: lifecycleConfig(env),
    natsServers: natsServers(env),
    storage: storageBackend(env, path.resolve(cwd, env.BASEPLANE_HOME || '.baseplane')),
  }
  return deepFreeze(config)
}

/**
 * BASEPLANE_TRUSTED_PROXIES: addresses or CIDR ranges, separated by commas or spaces. The variable
 * it replaces trusted its header from any peer, so anyone could name any address: it is refused,
 * not read as "trust everyone", and the message names what to set instead.
 */
function proxies(env: Env): ProxyRange[] {
  if (env.BASEPLANE_TRUSTED_PROXY_HEADER) {
    throw new ConfigError(
      'BASEPLANE_TRUSTED_PROXY_HEADER is no longer read: set BASEPLANE_TRUSTED_PROXIES to the addresses or ranges of your reverse proxies (e.g. "10.0.0.0/8, ::1"); X-Forwarded-For is read only from them',
    )
  }
  const entries = (env.BASEPLANE_TRUSTED_PROXIES ?? '').split(/[\s,]+/).filter((entry) => entry !== '')
  return entries.map((entry) => {
    const range = parseProxyRange(entry)
    if (range === undefined) throw new ConfigError(`BASEPLANE_TRUSTED_PROXIES must list IP addresses or CIDR ranges (e.g. "10.0.0.0/8, ::1"), got "${entry}"`)
    return range
  })
}

/** BASEPLANE_STORAGE_BACKEND and what it needs: checked here, once, so a node with half an S3 setting never starts. */
function storageBackend(env: Env, home: string): StorageBackendConfig {
  const kind = env.BASEPLANE_STORAGE_BACKEND || 'local'
  if (kind === 'local') return { kind: 'local', root: path.resolve(home, env.BASEPLANE_STORAGE_ROOT || 'storage') }
  if (kind !== 's3') throw new ConfigError(`BASEPLANE_STORAGE_BACKEND must be local or s3, got "${kind}"`)
  const missing = ['BASEPLANE_STORAGE_S3_BUCKET', 'BASEPLANE_STORAGE_S3_ACCESS_KEY_ID', 'BASEPLANE_STORAGE_S3_SECRET_ACCESS_KEY'].filter((name) => !env[name])
  if (missing.length > 0) throw new ConfigError(`BASEPLANE_STORAGE_BACKEND=s3 needs ${missing.join(', ')}`)
  const endpoint = url(env, 'BASEPLANE_STORAGE_S3_ENDPOINT', undefined)
  return {
    kind: 's3',
    endpoint,
    region: env.BASEPLANE_STORAGE_S3_REGION || 'us-east-1',
    bucket: env.BASEPLANE_STORAGE_S3_BUCKET!,
    accessKeyId: env.BASEPLANE_STORAGE_S3_ACCESS_KEY_ID!,
    secretAccessKey: env.BASEPLANE_STORAGE_S3_SECRET_ACCESS_KEY!,
    // MinIO, R2 and most stores other than AWS's own are addressed by path.
    forcePathStyle: flag(env, 'BASEPLANE_STORAGE_S3_FORCE_PATH_STYLE', endpoint !== undefined),
    prefix: env.BASEPLANE_STORAGE_S3_PREFIX ?? '',
  }
}

/** BASEPLANE_NATS_URL: nats:// or tls:// URLs with a host, separated by commas (credentials in the URL are allowed). */
function natsServers(env: Env): string[] | undefined {
  const raw = env.BASEPLANE_NATS_URL?.trim()
  if (!raw) return undefined
  return raw.split(',').map((entry) => {
    const server = entry.trim()
    let parsed: URL | undefined
    try {
      parsed = new URL(server)
    } catch {
      parsed = undefined
    }
    if (parsed === undefined || !['nats:', 'tls:'].includes(parsed.protocol) || parsed.hostname === '') {
      throw new ConfigError(`BASEPLANE_NATS_URL must be nats:// (or tls://) URLs separated by commas, such as "nats://10.0.0.5:4222", got "${server.replace(/\/\/[^@/]*@/, '//***@')}"`)
    }
    return server
  })
}

/** BASEPLANE_CATALOGUE_SILENCE_MS: 0 (off), or 3000 to 600000. */
function silence(env: Env): number {
  const millis = integer(env, 'BASEPLANE_CATALOGUE_SILENCE_MS', 0, 0, 600000)
  if (millis > 0 && millis < 3000) throw new ConfigError(`BASEPLANE_CATALOGUE_SILENCE_MS must be 0 (off) or between 3000 and 600000, got ${millis}`)
  return millis
}

function usageConfig(env: Env): UsageConfig {
  const retentionMonths = integer(env, 'BASEPLANE_USAGE_RETENTION_MONTHS', 13, 1, 120)
  const hourlyRetentionMonths = integer(env, 'BASEPLANE_USAGE_HOURLY_RETENTION_MONTHS', Math.min(3, retentionMonths), 1, 120)
  if (hourlyRetentionMonths > retentionMonths) {
    throw new ConfigError(
      `BASEPLANE_USAGE_HOURLY_RETENTION_MONTHS must not exceed BASEPLANE_USAGE_RETENTION_MONTHS (${retentionMonths}), got ${hourlyRetentionMonths}`,
    )
  }
  return {
    enabled: flag(env, 'BASEPLANE_USAGE', true),
    flushMillis: integer(env, 'BASEPLANE_USAGE_FLUSH_MS', 60000, 100, 3600000),
    retentionMonths,
    hourlyRetentionMonths,
    sizeSampleMillis: integer(env, 'BASEPLANE_USAGE_SIZE_SAMPLE_MS', 3600000, 1000, 86400000),
  }
}

/** The longest idle time BASEPLANE_PAUSE_IDLE_DAYS may name: ten years. */
const MAX_IDLE_DAYS = 3650
const DAY_MS = 86_400_000

function lifecycleConfig(env: Env): LifecycleConfig {
  const rawDays = env.BASEPLANE_PAUSE_IDLE_DAYS?.trim() || '0'
  const days = /^\d+(\.\d+)?$/.test(rawDays) ? Number(rawDays) : NaN
  if (!(days >= 0 && days <= MAX_IDLE_DAYS)) {
    throw new ConfigError(`BASEPLANE_PAUSE_IDLE_DAYS must be a number of days from 0 (off) to ${MAX_IDLE_DAYS}, fractions allowed (0.5 is 12 hours), got "${rawDays}"`)
  }
  const idleMillis = days > 0 ? Math.max(1, Math.round(days * DAY_MS)) : undefined
  const url = env.BASEPLANE_OPERATOR_WEBHOOK_URL || undefined
  const secret = env.BASEPLANE_OPERATOR_WEBHOOK_SECRET || undefined
  if (url !== undefined && !/^https?:\/\/[^/]/.test(url)) throw new ConfigError(`BASEPLANE_OPERATOR_WEBHOOK_URL must be an http:// or https:// URL, got "${url}"`)
  if (url !== undefined && url.length > 2000) throw new ConfigError('BASEPLANE_OPERATOR_WEBHOOK_URL must be at most 2000 characters')
  if (url !== undefined && secret === undefined) {
    throw new ConfigError('BASEPLANE_OPERATOR_WEBHOOK_URL is set: set BASEPLANE_OPERATOR_WEBHOOK_SECRET too ("whsec_<base64 of at least 16 bytes>"), with which each event is signed')
  }
  if (secret !== undefined && url === undefined) throw new ConfigError('BASEPLANE_OPERATOR_WEBHOOK_SECRET is set without BASEPLANE_OPERATOR_WEBHOOK_URL')
  if (secret !== undefined && webhookSecretBytes(secret) === undefined) {
    throw new ConfigError(`BASEPLANE_OPERATOR_WEBHOOK_SECRET must be a Standard Webhooks secret "whsec_<base64 of at least ${MIN_SECRET_BYTES} bytes>"`)
  }
  return {
    pauseIdleDays: idleMillis === undefined ? undefined : days,
    pauseIdleMillis: idleMillis,
    pauseSweepMillis: idleMillis === undefined ? 600_000 : Math.min(600_000, Math.max(1000, Math.round(idleMillis / 10))),
    activityFlushMillis: idleMillis === undefined ? 60_000 : Math.min(60_000, Math.max(200, Math.round(idleMillis / 10))),
    wakeOnRequest: flag(env, 'BASEPLANE_WAKE_ON_REQUEST', false),
    wakeWaitMillis: integer(env, 'BASEPLANE_WAKE_WAIT_MS', 10000, 1000, 60000),
    operatorWebhook: url !== undefined && secret !== undefined ? { url, secret } : undefined,
  }
}

function flag(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (raw === 'true' || raw === '1') return true
  if (raw === 'false' || raw === '0') return false
  throw new ConfigError(`${name} must be true or false, got "${raw}"`)
}

function smtp(raw: string): string {
  if (!/^smtps?:\/\/[^/]+/.test(raw)) throw new ConfigError(`SMTP_URL must look like smtp://user:pass@host:587 or smtps://host:465, got "${raw.replace(/:[^:@/]*@/, ':***@')}"`)
  return raw
}

function mailbox(env: Env, name: string, fallback: string): string {
  const raw = env[name] || fallback
  if (!/@[^@\s>]+\.?[^@\s>]*>?$/.test(raw)) throw new ConfigError(`${name} must be an email address such as "App <no-reply@example.com>", got "${raw}"`)
  return raw
}

function deepFreeze<T extends object>(value: T): Readonly<T> {
  for (const inner of Object.values(value)) {
    if (inner && typeof inner === 'object') deepFreeze(inner)
  }
  return Object.freeze(value)
}
