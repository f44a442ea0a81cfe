// A request's SQL as the engine sends it, replayed with plain `pg` (issue 23):
// the bound a benchmark case cannot beat when PostgreSQL is what limits it.
//
// The capture is taken on the wire, not rebuilt: `pg`'s `query` is wrapped on
// one connection and the engine answers the request on it, so what is
// recorded is every round trip it sent, byte for byte, with its parameters.
// For Baseplane's GraphQL that is, once the schema is cached, one
// simple-protocol message: the identity statement of
// lib/db/request-transaction.ts (role, claims and timeouts, all
// transaction-local) and `execute` of the query's prepared statement with
// its parameters as literals, both in the message's one implicit transaction
// (workers/graphql/index.ts, `speculate`). The first request on a connection
// also sends the probe and the `prepare`; replaying those once per connection
// leaves the server in the state the engine's own connections are in.
import { isDeepStrictEqual } from 'node:util'
import pg from 'pg'

/** One call of `client.query`: its text and, when it had any, its parameters. */
export interface RoundTrip {
  text: string
  values?: unknown[]
}

/** What one request sends to PostgreSQL, in order. */
export interface CapturedRequest {
  /** On a connection the request has not run on: what it sets up there (probe, PREPARE) and the request. */
  first: RoundTrip[]
  /** On a connection it has run on: what every later request sends. */
  steady: RoundTrip[]
}

type QueryFn = (text: string, values?: unknown[]) => Promise<pg.QueryResult | pg.QueryResult[]>

/** The rows of an answer (pg answers one statement with a result, a message of several with an array). */
function rowsOf(answer: pg.QueryResult | pg.QueryResult[]): unknown[][] {
  return Array.isArray(answer) ? answer.map((result) => result.rows) : [answer.rows]
}

/** Runs round trips in order on `client`; the rows of each. */
async function send(client: pg.ClientBase, trips: readonly RoundTrip[]): Promise<unknown[][][]> {
  const answers: unknown[][][] = []
  for (const trip of trips) answers.push(rowsOf(await (client.query as QueryFn).call(client, trip.text, trip.values)))
  return answers
}

/**
 * Captures what `request` sends when run on a connection of its own to
 * `connectionString`: three runs, the first on the fresh connection, the
 * second and third required to send the same (the steady state every later
 * request is in). Then checks the capture on another fresh connection: the
 * replayed steady round trips must answer the rows the engine got.
 */
export async function captureRequest(connectionString: string, request: (client: pg.ClientBase) => Promise<unknown>): Promise<CapturedRequest> {
  const client = new pg.Client({ connectionString })
  await client.connect()
  const runs: { trips: RoundTrip[]; rows: unknown[][][] }[] = []
  try {
    const query = client.query.bind(client) as unknown as QueryFn
    const wrapped = async (text: unknown, values?: unknown) => {
      // Strings (and values) are all the engine sends; anything else could not be replayed as recorded.
      if (typeof text !== 'string' || (values !== undefined && !Array.isArray(values))) throw new Error('captureRequest: only query(text[, values]) can be recorded')
      const answer = await query(text, values)
      const run = runs[runs.length - 1]!
      run.trips.push(values === undefined ? { text } : { text, values: [...values] })
      run.rows.push(rowsOf(answer))
      return answer
    }
    ;(client as unknown as { query: typeof wrapped }).query = wrapped
    for (let i = 0; i < 3; i++) {
      runs.push({ trips: [], rows: [] })
      await request(client)
    }
  } finally {
    await client.end()
  }
  const [first, second, third] = runs as [(typeof runs)[0], (typeof runs)[0], (typeof runs)[0]]
  if (!isDeepStrictEqual(second.trips, third.trips)) throw new Error('captureRequest: the request sent different statements on its second and third runs, so there is no steady state to replay')
  const captured = { first: first.trips, steady: second.trips }

  const check = new pg.Client({ connectionString })
  await check.connect()
  try {
    await send(check, captured.first)
    if (!isDeepStrictEqual(await send(check, captured.steady), second.rows)) throw new Error('captureRequest: the replayed statements answered other rows than the engine got')
  } finally {
    await check.end()
  }
  return captured
}

/**
 * One replayed request per call, on a connection of `pool`: the captured
 * `first` round trips on a connection this replay has not used yet, `steady`
 * on one it has. A connection that failed is discarded. Give each captured
 * request (each case and role) its own `replay`; they may share a pool, their
 * prepared statements being named after their text and role.
 */
export function replay(pool: pg.Pool, captured: CapturedRequest): () => Promise<void> {
  const primed = new WeakSet<pg.PoolClient>()
  return async () => {
    const client = await pool.connect()
    try {
      await send(client, primed.has(client) ? captured.steady : captured.first)
      primed.add(client)
      client.release()
    } catch (error) {
      client.release(error as Error)
      throw error
    }
  }
}
