// pg-logical-replication's pgoutput plugin, started as Realtime needs it: on
// the replication connection the library opens, the server's wal_level is
// checked first (a server without logical decoding is told apart from any
// other failure), the type names are read once (pgoutput names only types
// that are not built in), and the slot is created TEMPORARY, so PostgreSQL
// drops it when this connection ends, however it ends: a reader that dies
// never leaves a slot retaining WAL. Values are kept as PostgreSQL's text
// (decode.ts converts them), not parsed by node-postgres's global parsers.
import type pg from 'pg'
import { PgoutputPlugin, type Pgoutput } from 'pg-logical-replication'

/** The reader's server does not decode logically: Postgres Changes are not served there. */
export class WalLevelError extends Error {
  readonly code = 'wal_level'
  constructor(level: string) {
    super(`Postgres Changes need the database server's wal_level set to logical (it is ${level}); broadcast and presence work without it`)
    this.name = 'WalLevelError'
  }
}

/** Publications read: the owner's tables, and realtime.messages' inserts (broadcasts from SQL). */
export const PUBLICATIONS = ['supabase_realtime', 'supabase_realtime_messages_publication']

const keepText = (raw: unknown) => raw

export class TemporarySlotPlugin extends PgoutputPlugin {
  /** Type names by oid, read when the connection starts. */
  readonly typeNames = new Map<number, string>()
  readonly #onStreaming: () => void

  constructor(onStreaming: () => void) {
    super({ protoVersion: 1, publicationNames: PUBLICATIONS })
    this.#onStreaming = onStreaming
  }

  override async start(client: pg.Client, slotName: string, lastLsn: string): Promise<unknown> {
    const level = (await client.query<{ wal_level: string }>('SHOW wal_level')).rows[0]?.wal_level ?? 'unknown'
    if (level !== 'logical') throw new WalLevelError(level)
    for (const row of (await client.query<{ oid: string; typname: string }>('select oid, typname from pg_catalog.pg_type')).rows) this.typeNames.set(Number(row.oid), row.typname)
    await client.query(`CREATE_REPLICATION_SLOT "${slotName}" TEMPORARY LOGICAL pgoutput NOEXPORT_SNAPSHOT`)
    this.#onStreaming()
    return super.start(client, slotName, lastLsn)
  }

  override parse(buffer: Buffer): Pgoutput.Message {
    const message = super.parse(buffer) as Pgoutput.Message
    if (message.tag === 'relation') for (const column of message.columns) column.parser = keepText
    return message
  }
}
