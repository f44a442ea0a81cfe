// Every round trip to PostgreSQL has a client-side deadline (DESIGN "Bounded
// waits"): a server or a link that hangs (accepts bytes, answers nothing,
// closes nothing) would otherwise hold the request, its fair-share slot and
// its connection for as long as the client waits. PostgreSQL's own
// statement_timeout only helps a server that still runs: the deadline is that
// timeout plus a margin, so a statement PostgreSQL cancels is still answered
// by PostgreSQL (57014), and only silence meets the deadline. On expiry the
// socket is destroyed, so the connection can never be handed out again (pg's
// own query_timeout leaves the query active and the client in use), and the
// caller gets database_no_answer (a 503 with Retry-After in every service).
//
// TCP: keep-alive starts after KEEPALIVE_IDLE_MS of silence on an idle
// connection (libuv then probes every second, ten times), so a peer that died
// while its connection sat idle is noticed in seconds. Node has no
// TCP_USER_TIMEOUT: a request whose bytes go unacknowledged is bounded by the
// deadline here, not by the kernel.
import type { EventEmitter } from 'node:events'
import type net from 'node:net'
import type pg from 'pg'
import type { RoleTimeouts } from '../plans.ts'
import { databaseErrors } from './database-errors.ts'

/** Past the statement timeout: PostgreSQL's cancel and its answer travel within it, on a loaded machine too. */
export const DEADLINE_MARGIN_MS = 2000

/** Statements with no timeout of their own ("0: no limit") still end: as the longest timeout an operator may set (an hour). */
const NO_LIMIT_MS = 3_600_000

/**
 * The platform's own statements (Auth's, Push's, the catalogue's): Auth's
 * statement_timeout (GoTrue's 10 s, lib/db/auth-transaction.ts) plus the margin.
 */
export const PLATFORM_DEADLINE_MS = 10_000 + DEADLINE_MARGIN_MS

/** Idle time before the first keep-alive probe (pg's keepAliveInitialDelayMillis). */
export const KEEPALIVE_IDLE_MS = 5000

/** A round trip's deadline as `role`: its statement timeout plus the margin (a role of the project's own has authenticated's). */
export function roleDeadlineMs(timeouts: RoleTimeouts, role: string): number {
  const limits = timeouts.statementTimeoutMs
  const ms = Object.hasOwn(limits, role) ? limits[role as keyof typeof limits] : limits.authenticated
  return (ms > 0 ? ms : NO_LIMIT_MS) + DEADLINE_MARGIN_MS
}

interface Bounds {
  /** The client's own deadline. */
  base: number
  /** The deadline of the round trips sent now (a checkout's role may widen or narrow it). */
  current: number
  /** The server's last transaction status: 'I' idle, 'T' in a transaction, 'E' in a failed one. */
  status: string
  /** Set once a round trip met its deadline: the client's other round trips fail with it too, not as a lost connection to replace. */
  expired?: Error
}

const bounds = new WeakMap<pg.ClientBase, Bounds>()

interface Wire extends EventEmitter {
  stream: net.Socket
}

/**
 * Bounds each of `client`'s round trips (a submittable such as a cursor keeps
 * its own pace) to `deadlineMs`, or to what holdDeadline() set.
 * Also keeps a socket error of a client that is checked out of a pg.Pool from
 * crashing the process: the error reaches its queries.
 */
export function boundRoundTrips(client: pg.Client, deadlineMs: number): void {
  const state: Bounds = { base: deadlineMs, current: deadlineMs, status: 'I' }
  bounds.set(client, state)
  const wire = (client as unknown as { connection: Wire }).connection
  wire.on('readyForQuery', (message: { status?: string }) => {
    if (typeof message.status === 'string') state.status = message.status
  })
  client.on('error', () => {})
  const send = client.query.bind(client) as (config: unknown, values?: unknown, callback?: unknown) => unknown
  const expire = (ms: number, config: unknown, status: string) => {
    const error = databaseErrors.noAnswer(ms, mayHaveCommitted(config, status))
    state.expired ??= error
    wire.stream.destroy()
    return error
  }
  const bounded = (config: unknown, values?: unknown, callback?: unknown): unknown => {
    if (typeof (config as { submit?: unknown } | null)?.submit === 'function') return send(config, values, callback)
    const ms = state.current
    const status = state.status
    // The callback form: pg.Pool's own query() sends through it.
    const told = typeof values === 'function' ? values : typeof callback === 'function' ? callback : undefined
    if (told !== undefined) {
      let done = false
      const timer = setTimeout(() => {
        done = true
        told(expire(ms, config, status))
      }, ms)
      const answered = (error: unknown, result: unknown) => {
        if (done) return
        done = true
        clearTimeout(timer)
        told(error && (state.expired ?? error), result)
      }
      return typeof values === 'function' ? send(config, answered) : send(config, values, answered)
    }
    const answer = send(config, values) as Promise<unknown>
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(expire(ms, config, status)), ms)
      answer.then(
        (result) => {
          clearTimeout(timer)
          resolve(result)
        },
        (error: unknown) => {
          clearTimeout(timer)
          reject(state.expired ?? error)
        },
      )
    })
  }
  client.query = bounded as pg.Client['query']
}

/**
 * Whether a round trip that never answered may have committed: not when it
 * ran inside a transaction it did not commit (the server rolls that back when
 * the connection goes); otherwise, as with Supabase and PostgREST, nobody can
 * know, and the log says so.
 */
function mayHaveCommitted(config: unknown, status: string): boolean {
  const text = typeof config === 'string' ? config : typeof (config as { text?: unknown })?.text === 'string' ? (config as { text: string }).text : ''
  if (/\bcommit\b/i.test(text)) return true
  return !(status === 'T' || status === 'E' || /^\s*begin\b/i.test(text))
}

/** From now until released, `client`'s round trips have `deadlineMs` (a request's role); a client not bounded here is left as it is. */
export function holdDeadline(client: pg.ClientBase, deadlineMs: number): void {
  const state = bounds.get(client)
  if (state !== undefined) state.current = deadlineMs
}

/** Back to the client's own deadline (its pool calls it when the client is released). */
export function releaseDeadline(client: pg.ClientBase): void {
  const state = bounds.get(client)
  if (state !== undefined) state.current = state.base
}

/** `connect`, its clients' round trips bounded by `role`'s statement timeout plus the margin until they are released. */
export function connectAs(connect: () => Promise<pg.PoolClient>, timeouts: RoleTimeouts, role: string): () => Promise<pg.PoolClient> {
  const deadline = roleDeadlineMs(timeouts, role)
  return async () => {
    const client = await connect()
    holdDeadline(client, deadline)
    return client
  }
}

/** The settings of a pg.Pool of the platform's own (the catalogue): bounded connects, keep-alive; then boundPool(). */
export const PLATFORM_POOL_SETTINGS = Object.freeze({
  connectionTimeoutMillis: PLATFORM_DEADLINE_MS,
  keepAlive: true,
  keepAliveInitialDelayMillis: KEEPALIVE_IDLE_MS,
})

/** Bounds every round trip of `pool`'s connections to `deadlineMs` (the platform's own statements by default). */
export function boundPool(pool: pg.Pool, deadlineMs = PLATFORM_DEADLINE_MS): pg.Pool {
  pool.on('connect', (client) => boundRoundTrips(client as pg.Client, deadlineMs))
  return pool
}
