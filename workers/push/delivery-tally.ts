// Push deliveries for the metrics, by project, provider and outcome: each
// batch counts its logged rows as they are answered, and they join the
// thread's tally (lib/metrics/thread-tallies.ts) only once the batch has
// committed, so a batch rolled back (and sent again) is not counted twice.
import { pushDeliveryTally } from '../../lib/metrics/thread-tallies.ts'
import type { Platform } from './providers/provider.ts'
import type { LogStatus } from './queue/acknowledge.ts'

const PLATFORMS: readonly Platform[] = ['apns', 'fcm', 'web']
const STATUSES: readonly LogStatus[] = ['sent', 'failed', 'retry', 'held', 'expired']

/** A batch's counts, indexed platform × status. */
export function batchTally(): Uint32Array {
  return new Uint32Array(PLATFORMS.length * STATUSES.length)
}

export function countDelivery(tally: Uint32Array, platform: Platform, status: LogStatus | null): void {
  if (status === null) return
  const p = PLATFORMS.indexOf(platform)
  const s = STATUSES.indexOf(status)
  if (p !== -1 && s !== -1) tally[p * STATUSES.length + s]! += 1
}

/** After the batch's commit. */
export function commitDeliveries(ref: string, tally: Uint32Array): void {
  for (let i = 0; i < tally.length; i++) {
    const count = tally[i]!
    if (count > 0) pushDeliveryTally.add([ref, PLATFORMS[(i / STATUSES.length) | 0]!, STATUSES[i % STATUSES.length]!], count)
  }
}
