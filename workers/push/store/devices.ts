// SQL of the device endpoints. Every statement runs inside the caller's
// request transaction, so the policies on push.devices apply.
import type pg from 'pg'

export interface DeviceInput {
  platform: 'apns' | 'fcm' | 'web'
  token: string
  p256dh: string | null
  auth: string | null
  app: string | null
  /** Only the service_role may name the owner; for a user it is auth.uid(). */
  userId: string | null | undefined
}

export interface DeviceRow {
  id: string
  user_id: string | null
  platform: string
  token: string
  app: string | null
  active: boolean
  deactivated_at: Date | null
  deactivated_reason: string | null
  created_at: Date
  updated_at: Date
}

const columns = 'id, user_id, platform, token, app, active, deactivated_at, deactivated_reason, created_at, updated_at'

/** Registers (or re-registers) a device; a token another user registered moves to this caller. */
export async function registerDevice(client: pg.ClientBase, input: DeviceInput): Promise<DeviceRow> {
  await client.query('select push.release_token($1, $2)', [input.platform, input.token])
  const { rows } = await client.query<DeviceRow>(
    `insert into push.devices (platform, token, p256dh, auth, app, user_id)
     values ($1, $2, $3, $4, $5, case when $7 then $6::uuid else auth.uid() end)
     on conflict (platform, token) do update set
       p256dh = excluded.p256dh, auth = excluded.auth, app = excluded.app, user_id = excluded.user_id,
       active = true, deactivated_at = null, deactivated_reason = null, updated_at = now()
     returning ${columns}`,
    [input.platform, input.token, input.p256dh, input.auth, input.app, input.userId ?? null, input.userId !== undefined],
  )
  return rows[0]!
}

export async function listDevices(client: pg.ClientBase, userId: string | undefined): Promise<DeviceRow[]> {
  const { rows } = await client.query<DeviceRow>(
    `select ${columns} from push.devices where ($1::uuid is null or user_id = $1::uuid) order by created_at, id limit 1000`,
    [userId ?? null],
  )
  return rows
}

export async function deleteDevice(client: pg.ClientBase, id: string): Promise<boolean> {
  const result = await client.query('delete from push.devices where id = $1', [id])
  return (result.rowCount ?? 0) > 0
}
