// The run protocol of every concern that plans its statements from the
// project's catalogue (REST, GraphQL; Storage and Realtime next). The plan
// depends on the schema key (lib/pg-catalog/schema-version.ts: database,
// schema version, role, search path), which only the database knows, so:
//
// - fast path (`speculate`): plan against the key this thread saw last for the
//   request's scope, send the identity set-up and the statement in one
//   message, the statement reading the key back; answer only if the key did
//   not move, otherwise drop the answer (a read changed nothing; a write runs
//   in a block that is rolled back, or behind a guard that stops it) and take
//   the ordinary path. A statement mismatch (prepared-statements.ts) resyncs
//   and falls back; a cancelled statement is the answer (running it again
//   would cost the caller's timeout twice).
// - ordinary path (`runOrdinary`): open the transaction with the set-up and the
//   key in one round trip, let the concern build its model for that key and run,
//   roll back on failure; a statement mismatch resyncs and runs once more.
//
// Each concern supplies its plan (the message, how to read the key and the
// answer) and its error mapping as one record; this module owns the round
// trips, the key memory and the transaction's ends.
import type pg from 'pg'
import { isCancelled } from './database-errors.ts'
import { isStatementMismatch, resync } from './prepared-statements.ts'
import { OWN_TRANSACTION, type TransactionFrame } from './request-transaction.ts'
import { metaColumns, PROBE_SQL, type Meta, type Probe } from '../pg-catalog/schema-version.ts'

/** The database server a client is connected to (host and port): part of every cache key, as two servers' schemas differ. */
export function serverOf(client: pg.ClientBase): string {
  const c = client as unknown as { host?: string; port?: number }
  return `${c.host ?? ''}:${c.port ?? ''}`
}

export function sameMeta(a: Meta, b: Meta): boolean {
  return a.version === b.version && a.role === b.role && a.search_path === b.search_path && a.db === b.db
}

const probes = new WeakMap<pg.ClientBase, Probe>()

/** What a connection's database is (read once per connection). */
export async function probeOf(client: pg.ClientBase): Promise<Probe> {
  let probe = probes.get(client)
  if (probe === undefined) {
    probe = (await client.query<Probe>(PROBE_SQL)).rows[0]!
    probes.set(client, probe)
  }
  return probe
}

/** The schema key a concern's thread saw last per server and scope (project and role): what the fast path plans against. */
export class SchemaKeys {
  readonly #last = new Map<string, Meta>()

  /** The memory's key for `scope` (what the schema depends on besides the database) on `client`'s server. */
  keyOf(client: pg.ClientBase, scope: string): string {
    return `${serverOf(client)}\0${scope}`
  }

  last(key: string): Meta | undefined {
    return this.#last.get(key)
  }

  saw(key: string, meta: Meta): void {
    this.#last.set(key, meta)
  }
}

/** Where the key is remembered: the concern's memory and the request's key in it. */
export interface KeyMemory {
  keys: SchemaKeys
  key: string
}

/** A simple-protocol message's results, always as a list (one statement answers a single result). */
export function resultsOf(answer: pg.QueryResult | pg.QueryResult[]): pg.QueryResult[] {
  return Array.isArray(answer) ? answer : [answer]
}

/** The first row of a message's last result. */
export const lastRow = <T>(results: readonly pg.QueryResult[]): T => results[results.length - 1]!.rows[0] as T

/** What makes a transaction the caller's and how the key is read. */
export interface Opening {
  client: pg.ClientBase
  frame: TransactionFrame
  /** The set-up statements, made again on each attempt (their PREPAREs depend on the connection's list). */
  setup: () => readonly string[]
  probe: Probe
  /** The schemas the concern serves, standing for the search path in the key (metaColumns). */
  served?: readonly string[]
}

/**
 * Opens the transaction, makes it the caller's and reads the key, in one
 * round trip. On failure the frame is rolled back; a statement mismatch is
 * resynced and the opening sent once more.
 */
export async function openKeyed(opening: Opening): Promise<Meta> {
  const { client, frame, probe, served } = opening
  for (let attempt = 0; ; attempt++) {
    try {
      const results = resultsOf(await client.query([frame.open, ...opening.setup(), `select ${metaColumns(probe.versioned, served)}`].join('; ')))
      return { ...lastRow<Omit<Meta, 'db'>>(results), db: probe.db }
    } catch (error) {
      await client.query(frame.rollback).catch(() => {})
      if (attempt > 0 || !isStatementMismatch(error)) throw error
      await resync(client)
    }
  }
}

/** One request's ordinary path, as its concern runs it. */
export interface OrdinaryRun<A> extends Opening {
  /** Where the key read is remembered for the fast path; none: not remembered. */
  memory?: KeyMemory
  /** The request's work on the transaction opened for `meta`; it ends the transaction with the frame's commit. */
  work: (meta: Meta) => Promise<A>
  /** The answer to a failure of the work (the transaction already rolled back); may rethrow. */
  failed: (error: unknown) => A
}

/** The ordinary path: open with the key, work, and on a statement mismatch resync and run once more. */
export async function runOrdinary<A>(run: OrdinaryRun<A>, mayRetry = true): Promise<A> {
  const meta = await openKeyed(run)
  run.memory?.keys.saw(run.memory.key, meta)
  try {
    return await run.work(meta)
  } catch (error) {
    await run.client.query(run.frame.rollback).catch(() => {})
    if (mayRetry && isStatementMismatch(error)) {
      await resync(run.client)
      return runOrdinary(run, false)
    }
    return run.failed(error)
  }
}

/** One request's fast path: its message planned against `memory`'s last key, and how its answer is read. */
export interface Speculation<A> {
  client: pg.ClientBase
  memory: KeyMemory
  /** The key the message was planned against. */
  last: Meta
  probe: Probe
  /** The whole message: set-up, the statement and what rides with it. */
  text: string
  /** Whether the message opens a block (a write whose result is checked before its commit). */
  inBlock: boolean
  /** What ends the block once its answer is checked: COMMIT unless given (REST's `Prefer: tx=rollback` ends it in ROLLBACK). */
  end?: string
  /** The key the statement read back; undefined when a guard in the set-up already held it. */
  keyRead: (results: pg.QueryResult[]) => Omit<Meta, 'db'> | undefined
  /** Checks the answer before the block commits; throws to refuse it. */
  check?: (results: pg.QueryResult[]) => void
  answer: (results: pg.QueryResult[]) => A
  /**
   * Decides a failure that is neither a mismatch nor a cancel: the request's
   * own answer, or undefined to take the ordinary path (the schema moved).
   */
  statementFailed: (error: unknown) => Promise<A | undefined>
  /** The answer to a cancelled statement or a refused check (the block already rolled back); may rethrow. */
  failed: (error: unknown) => A
}

/** The fast path: the answer, or undefined when the key moved or the message failed for a reason the ordinary path decides. */
export async function speculate<A>(s: Speculation<A>): Promise<A | undefined> {
  const { client, inBlock } = s
  let results: pg.QueryResult[]
  try {
    results = resultsOf(await client.query(s.text))
  } catch (error) {
    // Outside a block the message was one implicit transaction, ended by the error.
    if (inBlock) await client.query(OWN_TRANSACTION.rollback).catch(() => {})
    if (isStatementMismatch(error)) {
      await resync(client).catch(() => {})
      return undefined
    }
    if (isCancelled(error)) return s.failed(error)
    return s.statementFailed(error)
  }
  const read = s.keyRead(results)
  if (read !== undefined) {
    const meta: Meta = { role: read.role, search_path: read.search_path, version: read.version, db: s.probe.db }
    if (!sameMeta(meta, s.last)) {
      s.memory.keys.saw(s.memory.key, meta)
      if (inBlock) await client.query(OWN_TRANSACTION.rollback)
      return undefined
    }
  }
  try {
    s.check?.(results)
    if (inBlock) await client.query(s.end ?? OWN_TRANSACTION.commit)
    return s.answer(results)
  } catch (error) {
    if (inBlock) await client.query(OWN_TRANSACTION.rollback).catch(() => {})
    return s.failed(error)
  }
}

/**
 * After a failed fast path, whether the schema moved: the set-up and the key
 * in one cheap message (an implicit transaction). Remembers a moved key and
 * answers true; false means the failure was the request's own.
 */
export async function keyMoved(s: Pick<Speculation<unknown>, 'client' | 'memory' | 'last' | 'probe'>, setup: readonly string[], served?: readonly string[]): Promise<boolean> {
  const results = resultsOf(await s.client.query([...setup, `select ${metaColumns(true, served)}`].join('; ')))
  const now = lastRow<Omit<Meta, 'db'>>(results)
  const read: Meta = { role: now.role, search_path: now.search_path, version: now.version, db: s.probe.db }
  if (sameMeta(read, s.last)) return false
  s.memory.keys.saw(s.memory.key, read)
  return true
}
