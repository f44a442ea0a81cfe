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

const text = `
update push.devices d
   set active = false, deactivated_at = now(), deactivated_reason = g.reason
  from unnest($1::uuid[], $2::text[], $3::timestamptz[]) as g(id, reason, at)
 where d.id = g.id and d.active and (g.at is null or d.updated_at <= g.at)`

export async function deactivateDevices(db: pg.ClientBase, gone: Gone[]): Promise<void> {
  if (gone.length === 0) return
  await db.query({
    text,
    values: [gone.map((g) => g.deviceId), gone.map((g) => g.reason), gone.map((g) => g.at)],
  })
}
