// Query statements as prepared statements. Planning a GraphQL query's SQL (or
// a REST request's) costs PostgreSQL about as much as running it, and a
// query's text depends only on the request's shape (its values are
// parameters), so each connection prepares a shape once and executes it from
// then on. In lib/ so that both concerns run statements the same way (each
// concern's threads have their own connections, so their lists never mix). PREPARE and
// EXECUTE are SQL statements, so they travel in the request's one
// simple-protocol round trip with its transaction and identity setup.
//
// A statement is named after its text and the role it runs as: PostgreSQL
// re-plans a statement that row level security applies to whenever the role
// differs from the one it was planned for, and one name per role keeps each
// plan valid. PREPARE outlives the transaction it runs in, even a rolled-back
// one. Each connection keeps its newest statements (deallocating the oldest
// in a later round trip); if the server's list and ours ever differ (someone
// ran DEALLOCATE or DISCARD, or a round trip failed before its PREPARE),
// `isStatementMismatch` recognises the error and `resync` reads the truth back.
import crypto from 'node:crypto'
import { escapeLiteral } from 'pg'
import type pg from 'pg'
import { LRUCache } from 'lru-cache'

/** Prepared statements kept per connection (PostGraphile keeps 100 too). */
const PER_CONNECTION = 100
const PREFIX = 'baseplane_q_'

interface Registry {
  names: LRUCache<string, true>
  /** Names evicted from `names`, deallocated at the start of the next call. */
  retired: string[]
}

const registries = new WeakMap<pg.ClientBase, Registry>()

function registryOf(client: pg.ClientBase): Registry {
  let registry = registries.get(client)
  if (registry === undefined) {
    const retired: string[] = []
    registry = {
      retired,
      names: new LRUCache<string, true>({ max: PER_CONNECTION, dispose: (_value, name, reason) => { if (reason === 'evict') retired.push(name) } }),
    }
    registries.set(client, registry)
  }
  return registry
}

export interface PreparedCall {
  /** Statements to run before `execute` in the same round trip (DEALLOCATE, PREPARE); possibly none. */
  before: string[]
  /** EXECUTE with the parameters written as literals; its result is the statement's. */
  execute: string
}

/**
 * Statement names by role and text, so the digest is made once per text
 * rather than on every request (three statements a REST request). Shared by
 * the thread's connections and projects, so bounded by the texts' total
 * length, not their number: texts come from requests, and one tenant's large
 * ones must not grow the thread's memory for all.
 */
const statementNames = new LRUCache<string, string>({ maxSize: 4 * 1024 * 1024, sizeCalculation: (_name, key) => key.length + 64 })

function statementName(role: string, sql: string): string {
  const key = `${role}\0${sql}`
  let name = statementNames.get(key)
  if (name === undefined) {
    name = PREFIX + crypto.createHash('sha1').update(key).digest('hex').slice(0, 32)
    statementNames.set(key, name)
  }
  return name
}

/** How to run `sql` with `params` (text forms, $1 first) on `client` as `role`. */
export function preparedCall(client: pg.ClientBase, role: string, sql: string, params: readonly (string | null)[]): PreparedCall {
  const registry = registryOf(client)
  const name = statementName(role, sql)
  const before = registry.retired.splice(0).map((old) => `deallocate ${old}`)
  // get() also marks the name most recently used.
  if (registry.names.get(name) === undefined) {
    before.push(`prepare ${name} as ${sql}`)
    registry.names.set(name, true)
  }
  const args = params.map((p) => (p === null ? 'null' : escapeLiteral(p)))
  return { before, execute: args.length > 0 ? `execute ${name}(${args.join(', ')})` : `execute ${name}` }
}

/** Makes a value part of a statement being written: a literal, or a parameter of a prepared one (its `$n`). */
export type Bind = (value: string) => string

/** How to run the statement `build` writes, the values it binds as its parameters, on `client` as `role`. */
export function boundCall(client: pg.ClientBase, role: string, build: (bind: Bind) => string): PreparedCall {
  const params: string[] = []
  const sql = build((value) => `$${params.push(value)}`)
  return preparedCall(client, role, sql, params)
}

/** A failure that says our list of the connection's prepared statements is wrong. */
export function isStatementMismatch(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  // invalid_sql_statement_name, duplicate_prepared_statement
  return code === '26000' || code === '42P05'
}

/** Replaces our list of `client`'s prepared statements with the server's. */
export async function resync(client: pg.ClientBase): Promise<void> {
  const registry = registryOf(client)
  registry.names.clear()
  registry.retired.length = 0
  const { rows } = await client.query<{ name: string }>(
    `select name from pg_catalog.pg_prepared_statements where starts_with(name, ${escapeLiteral(PREFIX)})`,
  )
  for (const { name } of rows) registry.names.set(name, true)
}
