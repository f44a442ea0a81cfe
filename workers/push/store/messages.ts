// SQL of the message endpoints, run inside the caller's request transaction:
// the insert is the send, so the policies on push.messages decide.
import type pg from 'pg'

export interface MessageInput {
  id: string
  user_id: string | null
  device_id: string | null
  title: string | null
  body: string | null
  data: Record<string, unknown> | null
  ttl: number | null
  collapse_key: string | null
  priority: 'high' | 'normal' | null
  send_at: string | null
}

/**
 * One statement for one or many messages, so the fan-out trigger runs once.
 * Ids are made by the caller: a RETURNING clause would also need a select
 * policy, and sending should need only an insert policy.
 */
export async function insertMessages(client: pg.ClientBase, messages: MessageInput[]): Promise<void> {
  await client.query(
    `insert into push.messages (id, user_id, device_id, title, body, data, ttl, collapse_key, priority, send_at)
     select r.id, r.user_id, r.device_id, r.title, r.body, coalesce(r.data, '{}'), coalesce(r.ttl, 2419200),
            r.collapse_key, coalesce(r.priority, 'high'), coalesce(r.send_at, now())
       from jsonb_to_recordset($1::jsonb) as r(id uuid, user_id uuid, device_id uuid, title text, body text, data jsonb,
            ttl integer, collapse_key text, priority text, send_at timestamptz)`,
    [JSON.stringify(messages)],
  )
}

/**
 * The first of `deviceIds` the caller's policies do not show (or that does not
 * exist), so a send to it is refused instead of queueing nothing. A role
 * without select on push.devices (anon, by default) sees none of them.
 */
export async function firstUnseenDevice(client: pg.ClientBase, deviceIds: string[]): Promise<string | undefined> {
  if (deviceIds.length === 0) return undefined
  try {
    const { rows } = await client.query<{ id: string }>(
      `select w.id::text as id from unnest($1::uuid[]) with ordinality as w(id, n)
        where not exists (select 1 from push.devices d where d.id = w.id) order by w.n limit 1`,
      [deviceIds],
    )
    return rows[0]?.id
  } catch (err) {
    if ((err as { code?: string }).code === '42501') return deviceIds[0]
    throw err
  }
}

export interface MessageView {
  id: string
  user_id: string | null
  device_id: string | null
  title: string | null
  body: string | null
  data: Record<string, unknown>
  ttl: number
  collapse_key: string | null
  priority: string
  send_at: Date
  created_at: Date
  deliveries: {
    device_id: string
    platform: string
    /** queued, retrying, sent, failed or expired */
    status: string
    attempts: number
    last_http_status: number | null
    last_reason: string | null
    next_attempt_at: string | null
    updated_at: string
  }[]
}

/**
 * The message and its deliveries, as far as the caller's policies show them:
 * pending rows from the queue (`queued`, or `retrying` after a failed try),
 * settled ones from the last delivery_log row of each device.
 */
export async function readMessage(client: pg.ClientBase, id: string): Promise<MessageView | undefined> {
  const { rows } = await client.query<MessageView>(
    `select m.id, m.user_id, m.device_id, m.title, m.body, m.data, m.ttl, m.collapse_key, m.priority, m.send_at, m.created_at,
            coalesce((select jsonb_agg(to_jsonb(x) order by x.device_id) from (
               select q.device_id, q.platform, case when q.attempts > 0 then 'retrying' else 'queued' end as status,
                      q.attempts, q.last_http_status, q.last_reason, q.run_at as next_attempt_at, q.updated_at
                 from push.queue q where q.message_id = m.id
               union all
               select * from (
                 select distinct on (l.device_id) l.device_id, l.provider, l.status, l.attempt, l.http_status, l.reason,
                        null::timestamptz, l.attempted_at
                   from push.delivery_log l
                  where l.message_id = m.id and l.status in ('sent', 'failed', 'expired')
                    and not exists (select 1 from push.queue q where q.message_id = m.id and q.device_id = l.device_id)
                  order by l.device_id, l.id desc) settled
             ) x), '[]') as deliveries
       from push.messages m where m.id = $1`,
    [id],
  )
  return rows[0]
}
