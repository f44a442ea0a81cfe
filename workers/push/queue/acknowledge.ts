// Settles a claimed batch in one statement, inside the batch's transaction:
// settled rows leave the queue, retried and held rows get their next run, and
// every attempt gets one delivery_log row.
import type pg from 'pg'

export type LogStatus = 'sent' | 'failed' | 'retry' | 'held' | 'expired'

export interface Ack {
  queueId: string
  messageId: string
  deviceId: string
  platform: string
  /** Attempt number of this try. */
  attempt: number
  /** `done`: leaves the queue; `again`: stays with a new run_at; `untouched`: handed back as it was. */
  disposition: 'done' | 'again' | 'untouched'
  /** Null when nothing was attempted. */
  log: LogStatus | null
  httpStatus: number | null
  reason: string | null
  providerId: string | null
  runAt: Date | null
  /** Whether this try counts as an attempt (a held one does not). */
  counts: boolean
  /** The provider said the device is gone (deactivated in the same transaction). */
  gone?: { at: Date | null }
}

const text = `
with r as (
  select * from unnest($1::bigint[], $2::text[], $3::text[], $4::integer[], $5::text[], $6::text[], $7::timestamptz[],
                       $8::boolean[], $9::uuid[], $10::uuid[], $11::text[], $12::integer[])
    as r(id, disposition, log, http_status, reason, provider_id, run_at, counts, message_id, device_id, platform, attempt)
), done as (
  delete from push.queue q using r where q.id = r.id and r.disposition = 'done'
), again as (
  update push.queue q
     set run_at = r.run_at, attempts = q.attempts + case when r.counts then 1 else 0 end,
         first_attempt_at = coalesce(q.first_attempt_at, now()), last_http_status = r.http_status,
         last_reason = r.reason, updated_at = now()
    from r where q.id = r.id and r.disposition = 'again'
)
insert into push.delivery_log (queue_id, message_id, device_id, provider, attempt, status, http_status, reason, provider_id)
select r.id, r.message_id, r.device_id, r.platform, r.attempt, r.log, r.http_status, r.reason, r.provider_id
  from r where r.log is not null`

export async function acknowledge(client: pg.ClientBase, acks: Ack[]): Promise<void> {
  const settled = acks.filter((a) => a.disposition !== 'untouched')
  if (settled.length === 0) return
  // Unnamed, so each batch is planned with its own arrays (index lookups by id).
  await client.query({
    text,
    values: [
      settled.map((a) => a.queueId),
      settled.map((a) => a.disposition),
      settled.map((a) => a.log),
      settled.map((a) => a.httpStatus),
      settled.map((a) => a.reason),
      settled.map((a) => a.providerId),
      settled.map((a) => a.runAt),
      settled.map((a) => a.counts),
      settled.map((a) => a.messageId),
      settled.map((a) => a.deviceId),
      settled.map((a) => a.platform),
      settled.map((a) => a.attempt),
    ],
  })
}
