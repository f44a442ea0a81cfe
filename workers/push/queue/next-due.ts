// When the next queued row is due, for the actor's timer (NOTIFY wakes it for
// new rows; retries and later sends wake it by this time).
import type pg from 'pg'
import type { Platform } from '../providers/provider.ts'

export async function nextDue(db: pg.Pool, platforms: Platform[]): Promise<Date | null> {
  const { rows } = await db.query<{ at: Date | null }>({
    text: `select min(run_at) as at from push.queue where platform = any($1::text[]) or expires_at < now()`,
    values: [platforms],
  })
  return rows[0]?.at ?? null
}
