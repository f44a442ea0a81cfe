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
// queue rows the statement deletes or updates, and the outcome from the
// batch's row it joined: both through RETURNING, so nothing is joined twice.
// The batch arrives as one JSON array of Ack objects: JSON.stringify is one
// native call, where eight parameter arrays cost an escaping pass per value.
const text = `
with r as (
  select * from json_to_recordset($1::json)
    as r("queueId" bigint, disposition text, log text, "httpStatus" integer, reason text, "providerId" text, "runAt" timestamptz, counts boolean)
   where r.disposition <> 'untouched'
), done as (
  delete from push.queue q using r where q.id = r."queueId" and r.disposition = 'done'
  returning q.id, q.message_id, q.device_id, q.platform, q.attempts + 1 as attempt, r.log, r."httpStatus", r.reason, r."providerId"
), again as (
  update push.queue q
     set run_at = r."runAt", attempts = q.attempts + case when r.counts then 1 else 0 end,
         first_attempt_at = coalesce(q.first_attempt_at, now()), last_http_status = r."httpStatus",
         last_reason = r.reason, updated_at = now()
    from r where q.id = r."queueId" and r.disposition = 'again'
  returning q.id, q.message_id, q.device_id, q.platform, q.attempts + case when r.counts then 0 else 1 end as attempt,
            r.log, r."httpStatus", r.reason, r."providerId"
)
insert into push.delivery_log (queue_id, message_id, device_id, provider, attempt, status, http_status, reason, provider_id)
select * from done where log is not null
union all
select * from again where log is not null`

export async function acknowledge(client: pg.ClientBase, acks: Ack[]): Promise<void> {
  if (!acks.some((a) => a.disposition !== 'untouched')) return
  // Unnamed, so each batch is planned with its own rows (index lookups by id). No replacer:
  // with one, JSON.stringify leaves V8's fast path; members the statement does not name are ignored.
  await client.query({ text, values: [JSON.stringify(acks)] })
}
