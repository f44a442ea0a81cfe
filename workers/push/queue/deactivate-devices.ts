// Deactivates devices the provider reported gone (APNs 410, FCM UNREGISTERED,
// Web Push 404/410). With APNs' timestamp, only a device not registered again
// since then (Apple: "stop pushing until the device registers a token with a
// later timestamp").
import type pg from 'pg'

export interface Gone {
  deviceId: string
  reason: string
  at: Date | null
}

// The owner's table: the update runs as baseplane_push_devices (sql/push/0004), never as the platform's login role.
const text = 'select push.deactivate_devices($1::uuid[], $2::text[], $3::timestamptz[])'

export async function deactivateDevices(db: pg.ClientBase, gone: Gone[]): Promise<void> {
  if (gone.length === 0) return
  await db.query({
    text,
    values: [gone.map((g) => g.deviceId), gone.map((g) => g.reason), gone.map((g) => g.at)],
  })
}
