// SQL on the catalogue's events (baseplane.events, sql/catalogue/0014_events.sql):
// appending one in the transaction of its change, reading them newest first,
// and the operator webhook's outbox (claiming a due event, recording an attempt).
import type { Queryable } from './queryable.ts'

export interface EventRow {
  id: string
  kind: string
  ref: string
  at: Date
  actor: string | null
  data: Record<string, unknown>
  delivery: 'none' | 'pending' | 'delivered' | 'failed'
  attempts: number
  next_attempt_at: Date | null
  last_attempt_at: Date | null
  last_error: string | null
  delivered_at: Date | null
}

const COLUMNS = 'id, kind, ref, at, actor, data, delivery, attempts, next_attempt_at, last_attempt_at, last_error, delivered_at'

/**
 * Appends an event; answers its id. It is for the webhook (`pending`, due at
 * once) when the fleet has one (the fleet setting operator_webhook_url, which
 * every node wrote at its start): whoever appends (a node, the CLI) need not
 * be configured with it.
 */
export async function insertEvent(db: Queryable, kind: string, ref: string, data: Record<string, unknown>, actor: string | null = null): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `with hook as (
       select exists (select 1 from baseplane.fleet_settings where name = 'operator_webhook_url' and value <> '') as enabled
     )
     insert into baseplane.events (kind, ref, data, actor, delivery, next_attempt_at)
     select $1, $2, $3::jsonb, $4, case when hook.enabled then 'pending' else 'none' end, case when hook.enabled then now() end from hook
     returning id`,
    [kind, ref, JSON.stringify(data), actor],
  )
  return rows[0]!.id
}

export interface EventFilter {
  ref: string | null
  kind: string | null
  since: Date | null
  /** Only events with a smaller id (the next page). */
  before: number | null
  limit: number
}

/** Events newest first; a null filter matches all. */
export async function events(db: Queryable, filter: EventFilter): Promise<EventRow[]> {
  const { rows } = await db.query<EventRow>(
    `select ${COLUMNS} from baseplane.events
      where ($1::text is null or ref = $1) and ($2::text is null or kind = $2)
        and ($3::timestamptz is null or at >= $3) and ($4::bigint is null or id < $4)
      order by id desc limit $5`,
    [filter.ref, filter.kind, filter.since, filter.before, filter.limit],
  )
  return rows
}

/**
 * The oldest due event no other node is posting, locked until the caller's
 * transaction ends (`skip locked`: each node takes another): the lock is the
 * claim, so a node that dies mid-post releases it with its connection.
 */
export async function claimDueEvent(db: Queryable): Promise<EventRow | undefined> {
  const { rows } = await db.query<EventRow>(
    `select ${COLUMNS} from baseplane.events
      where delivery = 'pending' and next_attempt_at <= now()
      order by next_attempt_at, id limit 1
      for update skip locked`,
  )
  return rows[0]
}

export async function recordDelivered(db: Queryable, id: string): Promise<void> {
  await db.query(
    `update baseplane.events set delivery = 'delivered', attempts = attempts + 1, last_attempt_at = now(), delivered_at = now(),
            next_attempt_at = null, last_error = null
      where id = $1`,
    [id],
  )
}

/** A failed attempt: tried again `retryInSeconds` later, or, without it, given up (`failed`). */
export async function recordFailedAttempt(db: Queryable, id: string, error: string, retryInSeconds: number | undefined): Promise<void> {
  await db.query(
    `update baseplane.events
        set attempts = attempts + 1, last_attempt_at = now(), last_error = $2,
            delivery = case when $3::float8 is null then 'failed' else 'pending' end,
            next_attempt_at = now() + make_interval(secs => $3::float8)
      where id = $1`,
    [id, error, retryInSeconds ?? null],
  )
}
