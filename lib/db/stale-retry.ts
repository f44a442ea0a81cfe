// A pooled connection that sat idle may have been closed by the server in the
// meantime (a restart, pg_terminate_backend, idle_session_timeout, a NAT that
// forgot the flow) before the pool heard of it. Every service's first round
// trip goes through firstRoundTrip(): when it fails on such a connection with
// a connection-level error, the connection is discarded and the round trip is
// sent once more on another one, instead of surfacing a 500.
//
// Sending it again is safe because a first round trip commits nothing the
// caller cannot see failed: it is a BEGIN (with the caller's settings), a
// GraphQL probe or query, or one statement the dead connection could not carry.
// The one case left is a single autocommitted statement whose connection broke
// after the server committed it and before the answer arrived; PostgreSQL
// cannot tell us, and it is the same case a client retrying a 503 would meet.
import type pg from 'pg'
import { log } from '../log.ts'
import { isConnectionLost } from './database-errors.ts'

const fromIdle = new WeakSet<pg.ClientBase>()

/** The pools say whether the client they hand out was taken from idle (lib/db/project-pools.ts). */
export function markFromIdle(client: pg.ClientBase, idle: boolean): void {
  if (idle) fromIdle.add(client)
  else fromIdle.delete(client)
}

/**
 * Checks a client out with `connect` and runs the request's first round trip
 * on it; returns the client (still checked out: the caller releases it) and
 * what `first` returned. If `first` fails, the client is released (rolled
 * back first when the connection still works) and the error is thrown, except
 * for a connection taken from idle that turns out to be gone: then once more
 * on the connection `connect` gives next.
 */
export async function firstRoundTrip<T>(
  connect: () => Promise<pg.PoolClient>,
  first: (client: pg.PoolClient) => Promise<T>,
): Promise<{ client: pg.PoolClient; result: T }> {
  for (let attempt = 1; ; attempt++) {
    const client = await connect()
    try {
      return { client, result: await first(client) }
    } catch (error) {
      const lost = isConnectionLost(error)
      const retry = lost && attempt === 1 && fromIdle.has(client)
      await giveBack(client, error, lost)
      if (!retry) throw error
      log.info('stale pooled connection replaced', { error: (error as Error).message })
    }
  }
}

async function giveBack(client: pg.PoolClient, error: unknown, lost: boolean): Promise<void> {
  if (lost) {
    client.release(error instanceof Error ? error : true)
    return
  }
  // `first` may have left a transaction open (a BEGIN whose settings failed).
  let broken: Error | undefined
  try {
    await client.query('rollback')
  } catch (rollbackError) {
    broken = rollbackError as Error
  }
  client.release(broken)
}
