// The project's provider keys and VAPID key pair, read by the actor (the api
// role is the only API-side role that may read them).
import type pg from 'pg'

export interface StoredCredentials {
  apns?: { version: string; topic: string; teamId: string; environment: 'production' | 'sandbox'; keys: { key_id: string; p8: string }[]; stopped: string | null }
  fcm?: { version: string; account: { project_id: string; client_email: string; private_key: string; private_key_id?: string }; stopped: string | null }
  vapid?: { publicKey: string; privateKey: string; subject: string }
}

export async function loadCredentials(db: pg.Pool): Promise<StoredCredentials> {
  const creds = await db.query<{ platform: string; version: string; topic: string; team_id: string; environment: string; secret: { keys?: { key_id: string; p8: string }[] } & Record<string, unknown>; stopped_reason: string | null }>(
    `select platform, version, topic, team_id, environment, secret, stopped_reason from push.credentials`,
  )
  const vapid = await db.query<{ public_key: string; private_key: string; subject: string }>(
    'select public_key, private_key, subject from push.vapid_keys',
  )
  const out: StoredCredentials = {}
  for (const row of creds.rows) {
    if (row.platform === 'apns') {
      out.apns = {
        version: row.version,
        topic: row.topic,
        teamId: row.team_id,
        environment: row.environment === 'sandbox' ? 'sandbox' : 'production',
        keys: row.secret.keys ?? [],
        stopped: row.stopped_reason,
      }
    } else if (row.platform === 'fcm') {
      out.fcm = { version: row.version, account: row.secret as unknown as NonNullable<StoredCredentials['fcm']>['account'], stopped: row.stopped_reason }
    }
  }
  const v = vapid.rows[0]
  if (v) out.vapid = { publicKey: v.public_key, privateKey: v.private_key, subject: v.subject }
  return out
}
