// Claims due queue rows for the actor: SELECT ... FOR UPDATE SKIP LOCKED in
// the batch's own open transaction (the caller began it), each row with its
// message and device in one round trip. The row locks are the claim: they
// last until the batch is settled and committed, or vanish with the session
// if the actor dies, so nothing is marked and nothing needs cleaning up.
// Rows of a platform that cannot send (no keys, or stopped) stay put unless
// they have expired. Message and device come by index lookups per row.
//
// The plan is pinned rather than left to statistics: the queue changes faster
// than ANALYZE follows it, and with stale statistics PostgreSQL sorted every
// due row to return the first 500, and hashed the whole of push.messages and
// push.devices to join 500 rows (30 ms a batch at 20k rows, growing with the
// tables). test/push/queue-plans.test.ts reads the plan on stale statistics.
import type pg from 'pg'
import type { Delivery, Platform } from '../providers/provider.ts'

/** Where the previous claim ended, in (run_at, id) order. */
export interface ClaimCursor {
  /** run_at as PostgreSQL wrote it (microseconds; a JavaScript Date would round it). */
  runAt: string
  id: string
}

export interface ClaimedRow extends Delivery {
  /** run_at as PostgreSQL wrote it, for the cursor. */
  runAt: string
  /** Milliseconds since the epoch, or null before the first attempt. */
  firstAttemptAtMs: number | null
  /** False when the device was deactivated or deleted after fan-out. */
  deviceActive: boolean
  /** False when the message row is gone. */
  messageFound: boolean
}

/**
 * Opens a batch's transaction. Without waiting for the WAL flush at commit: a
 * settled batch lost in a database crash is only queued again and resent (at
 * least once), never lost. Sorts and bitmap scans are off for the transaction
 * so that the claim walks queue_due in order and stops at its limit (see the
 * top of this file); the batch's later statements need neither. JIT is off
 * too: a disabled node's cost (the claim's final sort of its own few hundred
 * rows still happens) would cross the JIT threshold, and compiling costs
 * 100 ms where the query takes 2.
 */
export async function beginBatch(client: pg.ClientBase): Promise<void> {
  await client.query('begin; set local synchronous_commit to off; set local enable_sort to off; set local enable_bitmapscan to off; set local jit to off')
}

// The LIMIT 1 subqueries keep PostgreSQL from turning the lookups into hash
// joins. The columns are named and shaped as ClaimedRow, so each row object
// node-postgres builds is the delivery itself (thousands a second, no copy);
// times come as milliseconds since the epoch, far cheaper to read than text.
const text = `
with c as (
  select q.id, q.run_at, q.message_id, q.device_id, q.platform, q.attempts, q.first_attempt_at, q.expires_at, q.apns_id
    from push.queue q
   where (q.run_at, q.id) > ($3::timestamptz, $4::bigint) and q.run_at <= now()
     and (q.platform = any($1::text[]) or q.expires_at < now())
   order by q.run_at, q.id
   limit $2
   for update skip locked
)
select c.id as "queueId", c.run_at::text as "runAt", c.message_id as "messageId", c.device_id as "deviceId",
       c.platform, c.attempts + 1 as attempt, c.apns_id as "apnsId",
       (extract(epoch from c.expires_at) * 1000)::float8 as "expiresAtMs",
       (extract(epoch from c.first_attempt_at) * 1000)::float8 as "firstAttemptAtMs",
       coalesce(d.token, '') as token, d.p256dh, d.auth,
       m.title, m.body, coalesce(m.data, '{}') as data, coalesce(m.ttl, 0) as ttl, m.collapse_key as "collapseKey",
       coalesce(m.priority, 'high') as priority, coalesce(d.active, false) as "deviceActive", m.id is not null as "messageFound"
  from c
  left join lateral (select * from push.messages m where m.id = c.message_id limit 1) m on true
  left join lateral (select * from push.devices d where d.id = c.device_id limit 1) d on true
 order by c.run_at, c.id`

/**
 * `after`: continue after the previous claim's last row (undefined: from the
 * start). Rows the actor settles are deleted, and stay in the index as dead
 * entries until vacuum; starting after them keeps each claim short. Runs in
 * a transaction opened by beginBatch.
 */
export async function claimDeliveries(client: pg.ClientBase, platforms: Platform[], limit: number, after?: ClaimCursor): Promise<ClaimedRow[]> {
  // Unnamed on purpose: a named statement may switch to a generic plan, and with LIMIT
  // unknown that plan sorts the whole queue.
  const { rows } = await client.query<ClaimedRow>(text, [platforms, limit, after?.runAt ?? '-infinity', after?.id ?? '0'])
  return rows
}
