// The limit of a bench:rest case where PostgreSQL bounds it: plain `pg`, no
// HTTP, running the least a REST engine must send for the case, the way
// Baseplane's engines send it (lib/db/request-transaction.ts): the caller's
// identity statement and `execute` of a prepared statement that builds the
// whole answer's JSON, in one simple-protocol message, one implicit
// transaction. Prepared once per connection, named per case and role (as
// Baseplane's GraphQL keys them), so a plan made under one role's policies is
// never replanned for the other.
//
// These are written by hand, not captured from the REST engine's connection as
// bench/graphql.ts captures GraphQL's (lib/statement-replay.ts): the engine has
// no in-process face yet to run a request on a connection of the bench's.
import { performance } from 'node:perf_hooks'
import pg from 'pg'
import { identityStatement } from '../../lib/db/request-transaction.ts'
import { type RequestIdentity } from '../../lib/roles.ts'
import type { RoleTimeouts } from '../../lib/plans.ts'
import type { Answer, CaseName } from './rest-cases.ts'
import { INSERT_POST_ID, PAGE, type EmbeddedPost, type PostRow } from './rest-data.ts'

const STATEMENTS: Record<CaseName, { prepare: string; args: (marker: string) => string }> = {
  'filtered page': {
    prepare: `(boolean, int) as
      select coalesce(json_agg(t), '[]') as body from (select id, title, author_id from posts where published = $1 order by id desc limit $2) t`,
    args: () => `(true, ${PAGE})`,
  },
  'embedded page': {
    prepare: `(boolean, int) as
      select coalesce(json_agg(t), '[]') as body from (
        select p.id, p.title,
               (select json_build_object('name', a.name) from authors a where a.id = p.author_id) as author,
               (select coalesce(json_agg(json_build_object('id', c.id, 'body', c.body)), '[]') from comments c where c.post_id = p.id) as comments
          from posts p where p.published = $1 order by p.id desc limit $2
      ) t`,
    args: () => `(true, ${PAGE})`,
  },
  insert: {
    prepare: `(int, text) as insert into comments (post_id, body) values ($1, $2)`,
    args: (marker) => `(${INSERT_POST_ID}, ${pg.escapeLiteral(marker)})`,
  },
}

/** The statements prepared on each connection (several requests of one case and role, a probe's and the load's, share them). */
const prepared = new WeakMap<pg.ClientBase, Set<string>>()

export interface LimitRequest<T = Answer> {
  /** Runs the case once; resolves to what it answered, read as the HTTP sides' answers are. */
  (): Promise<T>
}

export function limitRequest(pool: pg.Pool, name: CaseName, identity: RequestIdentity, timeouts: RoleTimeouts, marker: string): LimitRequest {
  const run = preparedLimit(pool, `bench_rest_${name.replace(/\W/g, '_')}_${identity.role}`, STATEMENTS[name].prepare, STATEMENTS[name].args(marker), identity, timeouts)
  return async () => {
    const last = await run()
    if (name === 'insert') {
      if (last.rowCount !== 1) throw new Error(`${last.rowCount} rows inserted`)
      return 'inserted'
    }
    const rows = (last.rows[0] as { body: (PostRow & { author: { name: string }; comments: { id: number; body: string }[] })[] }).body
    if (name === 'filtered page') return rows
    return rows.map((r): EmbeddedPost => ({
      id: r.id,
      title: r.title,
      author: r.author.name,
      comments: r.comments.map((c): [number, string] => [c.id, c.body]).sort((a, b) => a[0] - b[0]),
    }))
  }
}

/**
 * The caller's identity statement and `execute statement args` in one message, `statement` prepared
 * (`prepare statement` + `prepare`) on first use on each connection; resolves to the execute's result.
 * `statement` names one statement and role: a plan made under one role's policies is never used for another.
 */
export function preparedLimit(pool: pg.Pool, statement: string, prepare: string, args: string, identity: RequestIdentity, timeouts: RoleTimeouts): () => Promise<pg.QueryResult> {
  const message = `${identityStatement(identity, timeouts)}; execute ${statement}${args}`
  return async () => {
    const client = await pool.connect()
    let results: pg.QueryResult[]
    try {
      const names = prepared.get(client) ?? new Set<string>()
      if (!names.has(statement)) {
        await client.query(`prepare ${statement}${prepare}`)
        names.add(statement)
        prepared.set(client, names)
      }
      results = (await client.query(message)) as unknown as pg.QueryResult[]
      client.release()
    } catch (error) {
      client.release(error as Error)
      throw error
    }
    return results[results.length - 1]!
  }
}

export interface LimitFigures {
  requestsPerSecond: number
  p50Ms: number
  p99Ms: number
  errors: number
  /** The first error's message, when there was one. */
  firstError?: string
}

/** `request` from `concurrency` loops at once for `seconds`. */
export async function loadLimit(request: LimitRequest<unknown>, seconds: number, concurrency: number): Promise<LimitFigures> {
  const latencies: number[] = []
  let errors = 0
  let firstError: string | undefined
  const started = performance.now()
  const end = started + seconds * 1000
  const loop = async () => {
    while (performance.now() < end) {
      const start = performance.now()
      try {
        await request()
        latencies.push(performance.now() - start)
      } catch (error) {
        errors++
        firstError ??= (error as Error).message
      }
    }
  }
  await Promise.all(Array.from({ length: concurrency }, loop))
  const elapsed = (performance.now() - started) / 1000
  latencies.sort((a, b) => a - b)
  return {
    requestsPerSecond: latencies.length / elapsed,
    p50Ms: latencies[Math.floor(latencies.length * 0.5)] ?? NaN,
    p99Ms: latencies[Math.floor(latencies.length * 0.99)] ?? NaN,
    errors,
    firstError,
  }
}
