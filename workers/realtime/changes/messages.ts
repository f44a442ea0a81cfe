// What crosses between the change reader's thread and the data plane's main
// thread (and, as JSON, between nodes on the bus): plain data only.

/** A column of a changed table, as Postgres Changes' `columns` names it (`int4`, `text`, `_int4`, ...). */
export interface ChangeColumn {
  name: string
  type: string
}

/** One row changed in a table of the `supabase_realtime` publication. */
export interface RowChange {
  kind: 'row'
  schema: string
  table: string
  type: 'INSERT' | 'UPDATE' | 'DELETE'
  columns: ChangeColumn[]
  /** The new row (INSERT, UPDATE), values as JSON: numbers, booleans and json as such, the rest as PostgreSQL's text. */
  record?: Record<string, unknown>
  /** The old row (UPDATE, DELETE): all of it under REPLICA IDENTITY FULL, else its primary key. */
  oldRecord?: Record<string, unknown>
}

/** A row of realtime.messages (realtime.send(), send_binary(), broadcast_changes()). */
export interface SqlBroadcast {
  kind: 'broadcast'
  id: string
  topic: string
  event: string
  private: boolean
  /** JSON payload, or the bytes of send_binary() as base64. */
  payload: unknown
  binary: boolean
}

export type Change = RowChange | SqlBroadcast

/** One committed transaction's changes, in commit order. */
export interface ChangeBatch {
  ref: string
  /** ISO 8601, the transaction's commit time. */
  commitTimestamp: string
  /** The transaction's id (32 bits, as pgoutput gives it): the visibility check waits until it is visible. */
  xid: number
  changes: Change[]
}

/** How a project's reader stands: streaming (changes flow), or unavailable and why. */
export type ReaderStatus =
  | { ref: string; state: 'streaming' }
  | { ref: string; state: 'stopped' }
  | { ref: string; state: 'unavailable'; code: 'wal_level'; message: string }

/** From the thread to the main thread. */
export type ReaderThreadMessage =
  | { kind: 'ready' }
  | { kind: 'failed'; message: string }
  | { kind: 'batch'; batch: ChangeBatch }
  | { kind: 'status'; status: ReaderStatus }

/** From the main thread to the thread. */
export type ReaderThreadRequest = { kind: 'want'; ref: string } | { kind: 'unwant'; ref: string } | { kind: 'stop' }
