// What a failure of a project database means for the request that met it,
// decided in one place so every service answers alike: "unavailable" (the
// server cannot be reached or refuses connections: 503 with Retry-After in the
// service's shape) or "timeout" (PostgreSQL cancelled the work: Auth and Push
// 504 request_timeout, GraphQL PostgreSQL's own text). Anything else is the
// request's own error (a constraint, a policy) or a bug. Also here: the 503 a
// failure answers as (unavailableAs) and the log of incidents, one line when
// one begins and one when it ends, rather than one per request (incidents).
import { BaseplaneError, UNAVAILABLE_RETRY_AFTER_SECONDS } from '../errors.ts'
import { describeError, log } from '../log.ts'

export type DatabaseFailure = 'unavailable' | 'timeout'

/** What unavailable answers send as Retry-After: long enough for a restart or a freed connection, short enough not to lose a user. */
export const RETRY_AFTER_SECONDS = UNAVAILABLE_RETRY_AFTER_SECONDS

export const databaseErrors = {
  /**
   * No connection became free in time (the project's pool or the server's
   * budget is spent by busy connections). The pools throw it; services answer
   * it as their own "unavailable". No server address in the text: it is internal.
   */
  busy: (waitedMillis: number) =>
    new BaseplaneError('database_busy', `No database connection became free within ${waitedMillis} ms`, 503, undefined, RETRY_AFTER_SECONDS),
  /**
   * A round trip met its deadline (round-trip-deadline.ts): the server or the
   * link hangs. Its connection is destroyed. Whether the statement committed
   * cannot be known when it was not inside an open transaction: the text says
   * which, for the log line.
   */
  noAnswer: (waitedMillis: number, mayHaveCommitted: boolean) =>
    new BaseplaneError(
      'database_no_answer',
      `The database did not answer within ${waitedMillis} ms; its connection was closed (${mayHaveCommitted ? 'the statement may have committed' : 'its transaction was not committed'})`,
      503,
      undefined,
      RETRY_AFTER_SECONDS,
    ),
}

/** The pools' own failures that mean "unavailable". */
const UNAVAILABLE_CODES = new Set(['database_busy', 'database_no_answer'])

const CONNECT_FAILURE = Symbol.for('baseplane.db.connectFailure')

/** Marks an error raised while opening a connection: whatever its code, the database could not be reached as configured. */
export function connectFailure(error: unknown): unknown {
  if (typeof error === 'object' && error !== null) (error as Record<symbol, unknown>)[CONNECT_FAILURE] = true
  return error
}

interface PgLikeError {
  code?: unknown
  message?: unknown
  severity?: unknown
  errors?: unknown
}

// Node's socket errors: the server went away or cannot be reached.
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'ENOTFOUND', 'EAI_AGAIN'])

// node-postgres's own texts for a connection that is gone (they carry no code).
const LOST_MESSAGES = [
  'Connection terminated unexpectedly',
  'Connection terminated',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
]

// SQLSTATEs of a session the server ended (PostgreSQL appendix A): admin_shutdown,
// crash_shutdown, idle_session_timeout; and class 08, connection exception.
const ENDED_SESSION = new Set(['57P01', '57P02', '57P05'])

/**
 * True when a round trip failed because the connection itself is gone (not
 * because of what was sent): the server closed it, or the socket broke. On a
 * connection that sat idle in a pool this means it was already dead when it
 * was taken, and the round trip may be sent again on another connection.
 */
export function isConnectionLost(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false
  const { code, message, errors, severity } = error as PgLikeError
  // The server answered ERROR: it refused the statement (a NUL in its text is 08P01, "invalid message format")
  // and the session goes on; only FATAL or PANIC, or no answer at all, means the connection is gone.
  if (severity === 'ERROR') return false
  if (typeof code === 'string' && (SOCKET_CODES.has(code) || ENDED_SESSION.has(code) || code.startsWith('08'))) return true
  // A name with two addresses (localhost: ::1 and 127.0.0.1) fails as an AggregateError of each attempt's error.
  if (Array.isArray(errors) && errors.length > 0 && errors.every(isConnectionLost)) return true
  return typeof message === 'string' && LOST_MESSAGES.includes(message)
}

/** query_canceled (57014) answered by the server: statement_timeout, or pg_cancel_backend. */
export function isCancelled(error: unknown): error is Error {
  return error instanceof Error && 'severity' in error && (error as { code?: unknown }).code === '57014'
}

/** What `error` means for the request, or undefined when it is not a database failure. */
/**
 * What the caller knows of the transaction that failed. `readOnlyByPlatform`:
 * whether the platform itself made it read-only (a read, a project past its
 * size cap); given false, a read-only refusal (25006) is the server's (a
 * standby, or one being promoted, which HAProxy may route writes to for a
 * moment): unavailable, answered 503 with Retry-After like any outage.
 */
export interface FailureContext {
  readOnlyByPlatform: boolean
}

/** SQLSTATE read_only_sql_transaction. */
export const READ_ONLY_TRANSACTION = '25006'

export function classifyDatabaseError(error: unknown, context?: FailureContext): DatabaseFailure | undefined {
  if (typeof error !== 'object' || error === null) return undefined
  if (context !== undefined && !context.readOnlyByPlatform && (error as PgLikeError).code === READ_ONLY_TRANSACTION) return 'unavailable'
  if (BaseplaneError.is(error)) return UNAVAILABLE_CODES.has(error.code) ? 'unavailable' : undefined
  const { code, message } = error as PgLikeError
  // query_canceled is also a user's pg_cancel_backend; only the timeout is the request's time running out.
  if (code === '57014') return typeof message === 'string' && message.includes('statement timeout') ? 'timeout' : undefined
  // idle_in_transaction_session_timeout, transaction_timeout (PostgreSQL 17).
  if (code === '25P03' || code === '25P04') return 'timeout'
  if ((error as Record<symbol, unknown>)[CONNECT_FAILURE] === true) return 'unavailable'
  // cannot_connect_now (starting up or shutting down), too_many_connections.
  if (code === '57P03' || code === '53300') return 'unavailable'
  if (isConnectionLost(error)) return 'unavailable'
  // invalid_catalog_name: the database is gone (dropped, renamed) or not made yet.
  if (code === '3D000') return 'unavailable'
  // ALTER DATABASE ... ALLOW_CONNECTIONS false answers object_not_in_prerequisite_state,
  // a code other statements use too: only this text means the database refuses connections.
  if (code === '55000' && typeof message === 'string' && message.includes('not currently accepting connections')) return 'unavailable'
  if (typeof message === 'string' && TIMED_OUT.some((text) => message.startsWith(text))) return 'unavailable'
  return undefined
}

// node-postgres's texts for a connection attempt (Client, Pool; a bare Client's connectionTimeoutMillis says
// "timeout expired") or an answer (query_timeout) that did not come in time.
const TIMED_OUT = ['Connection terminated due to connection timeout', 'timeout exceeded when trying to connect', 'timeout expired', 'Query read timeout']

/**
 * The 503 (with Retry-After) that `error` answers as when a database did not
 * answer or ran out of time, made by `answer`; undefined for any other error.
 * A catalogue error that already says so (status 503) is kept as it is.
 */
export function unavailableAs(error: unknown, answer: () => BaseplaneError): BaseplaneError | undefined {
  // A product that is off (product_disabled, also 503) is a setting, not something unavailable.
  if (BaseplaneError.is(error)) return error.status === 503 && error.code !== 'product_disabled' ? error : undefined
  return classifyDatabaseError(error) === undefined ? undefined : answer()
}

/**
 * One log line per incident: the first failure of a source (the catalogue,
 * the admin API's database, a project's database) is logged, without a stack
 * (a connection error's stack says nothing), the failures after it are only
 * counted until the source works again, which is logged once too. Per thread:
 * each thread tells of what it met.
 */
export class Incidents {
  readonly #open = new Map<string, { since: number; failures: number; toldAt: number; toldFailures: number }>()
  readonly #progressMs: number

  /** `progressMs`: how often a lasting incident says it still lasts, on its next failure (a count, never a line per failure). */
  constructor(progressMs = INCIDENT_PROGRESS_MS) {
    this.#progressMs = progressMs
  }

  /** `source` failed; logs "<source> is unavailable" if it was not failing already, and a count every `progressMs` while it lasts. */
  failed(source: string, error: unknown, fields: Record<string, unknown> = {}): void {
    const open = this.#open.get(source)
    const now = Date.now()
    if (open !== undefined) {
      open.failures += 1
      if (now - open.toldAt >= this.#progressMs) {
        log.info(`${source} is still unavailable`, { ...fields, unavailableMs: now - open.since, since: new Date(open.since).toISOString(), failures: open.failures, failuresSinceLastLine: open.failures - open.toldFailures })
        open.toldAt = now
        open.toldFailures = open.failures
      }
      return
    }
    this.#open.set(source, { since: now, failures: 1, toldAt: now, toldFailures: 1 })
    const code = (error as { code?: unknown } | undefined)?.code
    log.error(`${source} is unavailable`, undefined, {
      ...fields,
      error: describeError(error),
      ...(typeof code === 'string' ? { code } : {}),
    })
  }

  /** `source` worked; logs "<source> answers again" if it was failing. Cheap when it was not. */
  recovered(source: string, fields: Record<string, unknown> = {}): void {
    if (this.#open.size === 0) return
    const open = this.#open.get(source)
    if (open === undefined) return
    this.#open.delete(source)
    log.info(`${source} answers again`, { ...fields, unavailableMs: Date.now() - open.since, failures: open.failures })
  }

  /** Whether any incident is open (a success then checks its sources; otherwise it costs nothing). */
  get anyOpen(): boolean {
    return this.#open.size > 0
  }

  /** Whether `source` is failing now. */
  failing(source: string): boolean {
    return this.#open.has(source)
  }
}

/** How often a lasting incident logs its count (on a failure, so a quiet outage logs nothing more). */
export const INCIDENT_PROGRESS_MS = 30_000

/** This thread's incidents. */
export const incidents = new Incidents()

/** Where a project database lives, as its failures are told. */
export interface DatabaseLocation {
  ref: string
  /** The server, when known; without it an outage is the project's own incident. */
  host?: string
  port?: number
}

/**
 * Failures of one database or one project's own connections, not its server's: the database is gone
 * (3D000) or closed to connections (55000), the project's role is at its CONNECTION LIMIT (53300), its
 * pool had no connection free in time. Their incident is the project's; any other is its server's, so
 * a server that goes away with a thousand projects on it is one incident, not a thousand.
 */
const PROJECT_OWN_FAILURES: ReadonlySet<string> = new Set(['3D000', '55000', '53300', 'database_busy'])

const serverSource = (db: DatabaseLocation) => `the database server ${db.host}:${db.port}`
/** The incident of one project's own database (also its health probe's, project-pool-probe.ts). */
export const projectSource = (db: Pick<DatabaseLocation, 'ref'>) => `the database of project ${db.ref}`

/**
 * Tells of a failure a project's request met, once, whatever the service:
 * an outage as its incident (one line when it begins, a count while it
 * lasts, one when it heals; no stack, which says nothing of an outage), a
 * cancelled statement as one short line (the request's own time ran out), and
 * anything else, which is not a known outage, with its stack. Returns how the
 * failure classifies, for the answer.
 */
export function reportDatabaseFailure(error: unknown, db: DatabaseLocation, what: string, context?: FailureContext): DatabaseFailure | undefined {
  const failure = classifyDatabaseError(error, context)
  if (failure === 'unavailable') {
    const code = (error as { code?: unknown } | undefined)?.code
    const own = db.host === undefined || (typeof code === 'string' && PROJECT_OWN_FAILURES.has(code))
    incidents.failed(own ? projectSource(db) : serverSource(db), error, { ref: db.ref })
  } else if (failure === 'timeout') log.info(`${what}: a statement ran out of time`, { ref: db.ref, error: describeError(error) })
  else log.error(`${what} failed`, error, { ref: db.ref })
  return failure
}

/** A request of the project's was answered by its database: closes its server's and its own incidents, if open. */
export function databaseAnswered(db: DatabaseLocation): void {
  if (!incidents.anyOpen) return
  if (db.host !== undefined) incidents.recovered(serverSource(db), { ref: db.ref })
  incidents.recovered(projectSource(db), { ref: db.ref })
}
