// Settles a claimed batch in one statement, inside the batch's transaction:
// settled rows leave the queue, retried and held rows get their next run, and
// every attempt gets one delivery_log row.
import type pg from 'pg'

export type LogStatus = 'sent' | 'failed' | 'retry' | 'held' | 'expired'

export interface Ack {
  queueId: string
  deviceId: string
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

// Message, device, provider and attempt of each logged row come from the
// queue rows the statement deletes or updates (RETURNING), not from the client.
const text = `
with r as (
  select * from unnest($1::bigint[], $2::text[], $3::text[], $4::integer[], $5::text[], $6::text[], $7::timestamptz[], $8::boolean[])
    as r(id, disposition, log, http_status, reason, provider_id, run_at, counts)
), done as (
  delete from push.queue q using r where q.id = r.id and r.disposition = 'done'
  returning q.id, q.message_id, q.device_id, q.platform, q.attempts + 1 as attempt
), again as (
  update push.queue q
     set run_at = r.run_at, attempts = q.attempts + case when r.counts then 1 else 0 end,
         first_attempt_at = coalesce(q.first_attempt_at, now()), last_http_status = r.http_status,
         last_reason = r.reason, updated_at = now()
    from r where q.id = r.id and r.disposition = 'again'
  returning q.id, q.message_id, q.device_id, q.platform, q.attempts + case when r.counts then 0 else 1 end as attempt
)
insert into push.delivery_log (queue_id, message_id, device_id, provider, attempt, status, http_status, reason, provider_id)
select t.id, t.message_id, t.device_id, t.platform, t.attempt, r.log, r.http_status, r.reason, r.provider_id
  from (select * from done union all select * from again) t join r on r.id = t.id
 where r.log is not null`

export async function acknowledge(client: pg.ClientBase, acks: Ack[]): Promise<void> {
  const n = acks.length
  const ids: string[] = [], dispositions: string[] = [], logs: (string | null)[] = [], statuses: (number | null)[] = []
  const reasons: (string | null)[] = [], providerIds: (string | null)[] = [], runAts: (Date | null)[] = [], counts: boolean[] = []
  for (let i = 0; i < n; i++) {
    const a = acks[i]!
    if (a.disposition === 'untouched') continue
    ids.push(a.queueId)
    dispositions.push(a.disposition)
    logs.push(a.log)
    statuses.push(a.httpStatus)
    reasons.push(a.reason)
    providerIds.push(a.providerId)
    runAts.push(a.runAt)
    counts.push(a.counts)
  }
  if (ids.length === 0) return
  // Unnamed, so each batch is planned with its own arrays (index lookups by id).
  await client.query({ text, values: [ids, dispositions, logs, statuses, reasons, providerIds, runAts, counts] })
}
