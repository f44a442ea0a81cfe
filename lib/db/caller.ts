// What a data concern (GraphQL, REST) answers a request with: who asks, and
// where the request runs. Both concerns take them from their worker (a pool)
// or from a caller holding its own connection (GraphQL's face).
import type pg from 'pg'
import type { QuotaCaps, RoleTimeouts } from '../plans.ts'
import type { RequestIdentity } from '../roles.ts'
import type { DatabaseLocation } from './database-errors.ts'

/** Who asks, and of which project: the role and claims the request runs with, and the project's timeouts. */
export interface Caller {
  identity: RequestIdentity
  /**
   * `readOnly` past the project's database size cap: reads answer, writes are refused with the quota's sentence.
   * `database`, where the project's database lives, names the incident an outage belongs to (a caller on a
   * connection of its own has none: its outages are the project's).
   */
  project: { ref: string; roleTimeouts: RoleTimeouts; readOnly?: boolean; caps?: QuotaCaps; database?: DatabaseLocation }
}

/** Where the request runs: a connection for its first round trip, given back afterwards. */
export interface Connection<C extends pg.ClientBase> {
  /**
   * Runs `first` (the request's first round trips) on a connection with no
   * open transaction and answers that connection, still held, with what
   * `first` answered. A pool replaces a connection found dead once
   * (lib/db/stale-retry.ts firstRoundTrip).
   */
  firstRoundTrip<T>(first: (client: C) => Promise<T>): Promise<{ client: C; result: T }>
  /** Gives the connection back; `broken` when it broke mid-request. */
  release(client: C, broken?: Error): void
}
