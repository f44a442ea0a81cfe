// Counters kept by the thread that does the counting (an auth worker sends
// mail, the push actor thread delivers), and the snapshot a thread reports
// when the main thread asks for it at scrape time: nothing crosses threads
// between scrapes, and counting is a map lookup and an addition.
import { performance } from 'node:perf_hooks'

/** Counts by a tuple of label values. */
export class Tally {
  readonly #counts = new Map<string, { labels: string[]; count: number }>()

  add(labels: string[], count = 1): void {
    const key = labels.join('\0')
    const entry = this.#counts.get(key)
    if (entry === undefined) this.#counts.set(key, { labels, count })
    else entry.count += count
  }

  entries(): TallyEntry[] {
    return [...this.#counts.values()].map(({ labels, count }) => ({ labels, count }))
  }
}

export interface TallyEntry {
  labels: string[]
  count: number
}

/** Mail handed to SMTP or written to the outbox, by template kind and delivery (`smtp`, `outbox`, `smtp_failed`). */
export const mailTally = new Tally()
/** Push deliveries settled (logged), by project ref, provider (`apns`, `fcm`, `web`) and outcome (`sent`, `failed`, `retry`, `held`, `expired`). */
export const pushDeliveryTally = new Tally()

/** What a thread reports of itself: its event loop's busy and idle time since it started, and its tallies. */
export interface ThreadSnapshot {
  busyMillis: number
  idleMillis: number
  mail: TallyEntry[]
  pushDeliveries: TallyEntry[]
}

export function threadSnapshot(): ThreadSnapshot {
  const { active, idle } = performance.eventLoopUtilization()
  return { busyMillis: active, idleMillis: idle, mail: mailTally.entries(), pushDeliveries: pushDeliveryTally.entries() }
}
