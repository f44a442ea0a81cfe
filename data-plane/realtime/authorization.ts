// Private channels, authorized by the project's own RLS policies on
// realtime.messages exactly as Supabase Realtime does it, so its policies work
// unchanged: `realtime.topic()` is the channel's name; reading is checked by
// inserting a probe row per extension (broadcast, presence) and selecting them
// back as the caller; writing by inserting as the caller; both rolled back.
// The same connection also stores a message kept for replay, and reads a
// replay back, as the caller. Statements run on this node's main thread: they
// wait on PostgreSQL, they do not compute.
import { escapeLiteral } from 'pg'
import type pg from 'pg'
import { apiDatabaseOf, type ProjectRecord } from '../../lib/catalogue.ts'
import type { ProjectPools } from '../../lib/db/project-pools.ts'
import { identityStatement } from '../../lib/db/request-transaction.ts'
import type { RequestIdentity } from '../../lib/roles.ts'

/** What the caller may do on a private channel, per extension. */
export interface ChannelReads {
  broadcast: boolean
  presence: boolean
}

/** A message kept in realtime.messages, as a replay sends it. */
export interface StoredMessage {
  id: string
  event: string
  payload: unknown
  binary: Uint8Array | undefined
}

/** PostgreSQL's insufficient_privilege: an RLS policy (or a missing grant) refused the insert. */
const INSUFFICIENT_PRIVILEGE = '42501'

/** Supabase Realtime's replay limit (`config.broadcast.replay.limit`, at most 25). */
export const MAX_REPLAY = 25

export class RealtimeAuthorization {
  readonly #pools: ProjectPools

  constructor(pools: ProjectPools) {
    this.#pools = pools
  }

  /** Which extensions the caller may read on the private channel `topic` (the name without `realtime:`). */
  async reads(project: ProjectRecord, identity: RequestIdentity, topic: string): Promise<ChannelReads> {
    const broadcast = crypto.randomUUID()
    const presence = crypto.randomUUID()
    const rows = await this.#inCallerTransaction(project, identity, topic, async (client) => {
      await client.query(`select realtime.baseplane_probe(${escapeLiteral(topic)}, '${broadcast}', '${presence}')`)
      return undefined
    }, async (client) => {
      const seen = await client.query<{ id: string }>(`select id::text from realtime.messages where topic = ${escapeLiteral(topic)} and id in ('${broadcast}', '${presence}')`)
      return seen.rows
    })
    return { broadcast: rows.some((row) => row.id === broadcast), presence: rows.some((row) => row.id === presence) }
  }

  /** Whether the caller may send on the private channel `topic` for `extension`: its insert passes the policies. */
  async mayWrite(project: ProjectRecord, identity: RequestIdentity, topic: string, extension: 'broadcast' | 'presence'): Promise<boolean> {
    return this.#inCallerTransaction(project, identity, topic, undefined, async (client) => {
      try {
        await client.query(`insert into realtime.messages (topic, extension, private) values (${escapeLiteral(topic)}, '${extension}', true)`)
        return true
      } catch (error) {
        if ((error as { code?: string }).code === INSUFFICIENT_PRIVILEGE) return false
        throw error
      }
    })
  }

  /**
   * Keeps a broadcast for replay, inserted as the caller (so the policies
   * decide, as for any write); answers its id, or undefined when the policies refuse it.
   */
  async store(project: ProjectRecord, identity: RequestIdentity, topic: string, event: string, payload: unknown, binary: Uint8Array | undefined): Promise<string | undefined> {
    return this.#inCallerTransaction(project, identity, topic, undefined, async (client) => {
      try {
        const stored = await client.query<{ id: string }>(
          `insert into realtime.messages (topic, extension, private, event, payload, binary_payload) values ($1, 'broadcast', true, $2, $3, $4) returning id::text`,
          [topic, event, binary ? null : JSON.stringify(payload ?? null), binary ? Buffer.from(binary) : null],
        )
        return stored.rows[0]!.id
      } catch (error) {
        if ((error as { code?: string }).code === INSUFFICIENT_PRIVILEGE) return undefined
        throw error
      }
    }, true)
  }

  /** The broadcasts kept for `topic` since `sinceMs` (epoch milliseconds), oldest first, that the caller may read. */
  async replay(project: ProjectRecord, identity: RequestIdentity, topic: string, sinceMs: number, limit: number): Promise<StoredMessage[]> {
    return this.#inCallerTransaction(project, identity, topic, undefined, async (client) => {
      const kept = await client.query<{ id: string; event: string | null; payload: unknown; binary_payload: Buffer | null }>(
        `select id::text, event, payload, binary_payload from realtime.messages
          where topic = $1 and private and extension = 'broadcast' and event is not null
            and inserted_at >= timezone('utc', to_timestamp($2::float8 / 1000))
          order by inserted_at, id limit $3`,
        [topic, sinceMs, Math.min(Math.max(1, Math.floor(limit)), MAX_REPLAY)],
      )
      return kept.rows.map((row) => ({
        id: row.id,
        event: row.event ?? '',
        payload: row.payload,
        binary: row.binary_payload ? new Uint8Array(row.binary_payload) : undefined,
      }))
    })
  }

  /**
   * One transaction: `before` as the platform's login role, then the caller's
   * role and claims with `realtime.topic` set, then `work`; rolled back unless `commit`.
   */
  async #inCallerTransaction<T>(
    project: ProjectRecord,
    identity: RequestIdentity,
    topic: string,
    before: ((client: pg.PoolClient) => Promise<undefined>) | undefined,
    work: (client: pg.PoolClient) => Promise<T>,
    commit = false,
  ): Promise<T> {
    const client = await this.#pools.get(apiDatabaseOf(project)).connect()
    let broken: Error | undefined
    try {
      await client.query('begin')
      if (before) await before(client)
      await client.query(`${identityStatement(identity, project.roleTimeouts)}, set_config('realtime.topic', ${escapeLiteral(topic)}, true)`)
      const result = await work(client)
      await client.query(commit ? 'commit' : 'rollback')
      return result
    } catch (error) {
      await client.query('rollback').catch((lost: unknown) => (broken = lost as Error))
      throw error
    } finally {
      client.release(broken)
    }
  }
}
