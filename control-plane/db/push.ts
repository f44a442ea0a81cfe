// SQL the control plane runs on Push's tables in a project's database, as the
// server's admin role: the devices and the delivery log as the operator pages
// through them, and the check before a test notification. Storing keys and
// queueing messages are Push's own (workers/push/face.ts).
import type { Queryable } from './queryable.ts'

export interface DeviceRow {
  id: string
  platform: string
  user_id: string | null
  token_prefix: string
  app: string | null
  active: boolean
  deactivated_reason: string | null
  deactivated_at: Date | null
  created_at: Date
}

/** Devices newest first; a null filter matches all. */
export async function devices(
  db: Queryable,
  filter: { platform: string | null; user: string | null; active: boolean | null; limit: number; offset: number },
): Promise<DeviceRow[]> {
  const { rows } = await db.query<DeviceRow>(
    `select id, platform, user_id, left(token, 16) as token_prefix, app, active, deactivated_reason, deactivated_at, created_at
       from push.devices
      where ($1::text is null or platform = $1) and ($2::uuid is null or user_id = $2) and ($3::boolean is null or active = $3)
      order by created_at desc, id desc limit $4 offset $5`,
    [filter.platform, filter.user, filter.active, filter.limit, filter.offset],
  )
  return rows
}

export interface LogRow {
  id: string
  attempted_at: Date
  message_id: string
  /** The message's title, null when it has none or is gone. */
  title: string | null
  device_id: string
  /** The device's owner now (the log records devices, not users). */
  user_id: string | null
  provider: string
  status: string
  attempt: number
  http_status: number | null
  reason: string | null
}

/** Delivery attempts newest first, older than `before` when given; a null filter matches all. */
export async function deliveryLog(
  db: Queryable,
  filter: { status: string | null; provider: string | null; user: string | null; message: string | null; before: number | null; limit: number },
): Promise<LogRow[]> {
  const { rows } = await db.query<LogRow>(
    `select l.id, l.attempted_at, l.message_id, m.title, l.device_id, d.user_id, l.provider, l.status, l.attempt, l.http_status, l.reason
       from push.delivery_log l left join push.devices d on d.id = l.device_id left join push.messages m on m.id = l.message_id
      where ($1::text is null or l.status = $1) and ($2::text is null or l.provider = $2)
        and ($3::uuid is null or d.user_id = $3) and ($4::bigint is null or l.id < $4)
        and ($6::uuid is null or l.message_id = $6)
      order by l.id desc limit $5`,
    [filter.status, filter.provider, filter.user, filter.before, filter.limit, filter.message],
  )
  return rows
}

/** Whether a device is active (and why not); undefined when there is no such device. */
export async function deviceState(db: Queryable, id: string): Promise<{ active: boolean; deactivated_reason: string | null } | undefined> {
  const { rows } = await db.query<{ active: boolean; deactivated_reason: string | null }>('select active, deactivated_reason from push.devices where id = $1', [id])
  return rows[0]
}

/** The rest of the transaction runs as service_role, as the push API's sends do (RLS applies). */
export async function actAsServiceRole(db: Queryable): Promise<void> {
  await db.query('set local role service_role')
}
