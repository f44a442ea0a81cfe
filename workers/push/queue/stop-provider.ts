// Records a credential-level refusal: the provider stays stopped for this
// project until its keys change (storing keys bumps `version` and clears it).
import type pg from 'pg'
import type { Platform } from '../providers/provider.ts'

export async function stopProvider(db: pg.Pool, platform: Platform, version: string, reason: string): Promise<void> {
  await db.query(
    `update push.credentials set stopped_reason = $3, stopped_at = now()
      where platform = $1 and version = $2 and stopped_reason is null`,
    [platform, version, reason],
  )
}
