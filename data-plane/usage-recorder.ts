// A node's usage, written to the catalogue once for the fleet (issue 27 item
// 1). Nothing here is on the request path: requests only bump the counters
// the metrics keep already (lib/metrics/project-figures.ts: answers and
// bytes per service, sessions and mail from the workers' answers) and the
// active users' set (lib/metrics/active-users.ts). Once a flush interval
// (BASEPLANE_USAGE_FLUSH_MS, a minute), on the minute, this reads how much
// each counter grew since its last look, and the push actor thread's delivery
// tally likewise, adds that to the ledger under the minute the interval began
// in, and writes the ledger and the new users in one statement
// (usage-store.ts): one statement per node per interval, whatever the number
// of projects. A write that fails is kept and sent with the next (the ledger
// and the users are bounded: what they drop past their bounds is logged).
// Stopping writes what is held.
import type pg from 'pg'
import { incidents } from '../lib/db/database-errors.ts'
import { log } from '../lib/log.ts'
import type { ActiveUsers } from '../lib/metrics/active-users.ts'
import { SERVICES, type ProjectFigures } from '../lib/metrics/project-figures.ts'
import { STATUS_CLASSES } from '../lib/metrics/recent-minutes.ts'
import type { TallyEntry } from '../lib/metrics/thread-tallies.ts'
import { BYTES_OUT_AT, MAIL_AT, minuteOf, pushCounterIndex, REALTIME_MESSAGES_AT, REALTIME_PEAK_AT, REFRESHES_AT, REQUESTS_AT, SIGN_INS_AT } from '../lib/metrics/usage-counters.ts'
import { UsageLedger } from '../lib/metrics/usage-ledger.ts'
import { writeUsage } from './usage-store.ts'

/** How the incident log names a failing write. */
const SOURCE = 'the catalogue (usage writes)'
/** The main thread's counters, as usage-counters.ts orders them (requests, bytes out, sign-ins, refreshes, mail). */
const MAIN_COUNTERS = MAIL_AT + 1

export interface UsageRecorderOptions {
  figures: ProjectFigures
  activeUsers: ActiveUsers
  /** A pool of the catalogue with connect and query timeouts: a write that hangs is a write that failed. */
  catalogue: Pick<pg.Pool, 'query'>
  flushMillis: number
  /** The push actor thread's delivery tally (cumulative since the thread started); undefined when it did not answer. */
  pushDeliveries?: () => Promise<TallyEntry[] | undefined>
  /** Realtime per project on this node: its broadcasts (cumulative since the node started), and the most sockets open since the last read (then started again). */
  realtime?: () => Iterable<{ ref: string; messages: number; takePeak(): number }>
  now?: () => number
  /** The ledger's bound (tests). */
  maxEntries?: number
}

/** What the recorder has done, for tests and the benchmark. */
export interface UsageRecorderStats {
  /** Statements sent to the catalogue (one per write). */
  statements: number
  /** Counter rows and active users sent in them. */
  rows: number
  users: number
  failures: number
  /** (minute, project) pairs held now, and active users waiting. */
  heldEntries: number
  heldUsers: number
}

export class UsageRecorder {
  readonly #options: UsageRecorderOptions
  readonly #now: () => number
  readonly #ledger: UsageLedger
  /** Each project's counters as last read. */
  readonly #previous = new Map<string, Float64Array>()
  /** Each project's Realtime broadcasts as last read. */
  readonly #realtimePrevious = new Map<string, number>()
  /** The push tally as last read, by its labels joined. */
  readonly #pushPrevious = new Map<string, number>()
  /** When the counters were last read: what they grew by since belongs to this moment's minute. */
  #since: number
  #timer: NodeJS.Timeout | undefined
  #writing: Promise<void> | undefined
  #stopped = false
  #droppedUsers = 0
  readonly #stats = { statements: 0, rows: 0, users: 0, failures: 0 }

  constructor(options: UsageRecorderOptions) {
    this.#options = options
    this.#now = options.now ?? Date.now
    this.#since = this.#now()
    this.#ledger = new UsageLedger({
      maxEntries: options.maxEntries,
      onDrop: (dropped) =>
        log.error('usage counts dropped: the catalogue has been away longer than the ledger holds', undefined, {
          minute: new Date(dropped.minute).toISOString(),
          projects: dropped.projects,
          total: dropped.total,
        }),
    })
  }

  /** Writes every flush interval, on its boundaries (on the minute with the default), until stopped. */
  start(): void {
    const every = this.#options.flushMillis
    const arm = () => {
      this.#timer = setTimeout(() => {
        void this.flush()
        if (!this.#stopped) arm()
      }, every - (this.#now() % every))
      this.#timer.unref()
    }
    arm()
  }

  stats(): UsageRecorderStats {
    return { ...this.#stats, heldEntries: this.#ledger.entries, heldUsers: this.#options.activeUsers.pending }
  }

  /**
   * Reads the counters and writes what is held (the timer's work; tests and the
   * benchmark call it too). A write still running makes this one only read:
   * its counts wait for the next.
   */
  async flush(): Promise<void> {
    const minute = this.#read()
    if (this.#writing !== undefined) return
    this.#writing = (async () => {
      this.#addPush(minute, await this.#options.pushDeliveries?.().catch(() => undefined))
      await this.#write()
    })().finally(() => {
      this.#writing = undefined
    })
    await this.#writing
  }

  /**
   * Stops the timer and writes everything held, after the sources have
   * stopped (no request in flight, the push actor thread ended: its last
   * tally is `finalPush`). What cannot be written now is lost, and logged.
   */
  async stop(finalPush?: TallyEntry[]): Promise<void> {
    this.#stopped = true
    clearTimeout(this.#timer)
    await this.#writing
    this.#addPush(this.#read(), finalPush)
    await this.#write()
    const held = this.stats()
    if (held.heldEntries > 0 || held.heldUsers > 0) {
      log.error('usage counts lost at stop: the catalogue did not take them', undefined, { projectMinutes: held.heldEntries, activeUsers: held.heldUsers })
    }
  }

  /** Adds each project's growth since the last read to the ledger; answers the minute it went under. */
  #read(): number {
    const now = this.#now()
    const minute = minuteOf(this.#since)
    this.#since = now
    const classes = STATUS_CLASSES.length
    for (const series of this.#options.figures.series()) {
      let previous = this.#previous.get(series.ref)
      if (previous === undefined) this.#previous.set(series.ref, (previous = new Float64Array(MAIN_COUNTERS)))
      const grew = (counter: number, value: number) => {
        const by = value - previous[counter]!
        previous[counter] = value
        if (by > 0) this.#ledger.add(minute, series.ref, counter, by)
      }
      for (let s = 0; s < SERVICES.length; s++) {
        let answered = 0
        for (let c = 0; c < classes; c++) answered += series.requests[s * classes + c]!
        grew(REQUESTS_AT + s, answered)
        grew(BYTES_OUT_AT + s, series.bytesOut[s]!)
      }
      grew(SIGN_INS_AT, series.signIns)
      grew(REFRESHES_AT, series.tokenRefreshes)
      grew(MAIL_AT, series.mailSent)
    }
    for (const { ref, messages, takePeak } of this.#options.realtime?.() ?? []) {
      const by = messages - (this.#realtimePrevious.get(ref) ?? 0)
      this.#realtimePrevious.set(ref, messages)
      if (by > 0) this.#ledger.add(minute, ref, REALTIME_MESSAGES_AT, by)
      // A peak, not a count: the minute keeps this node's largest (the catalogue adds the nodes' together).
      this.#ledger.raise(minute, ref, REALTIME_PEAK_AT, takePeak())
    }
    return minute
  }

  /** The push tally's growth; a count lower than last time is a thread started again, counting from zero. */
  #addPush(minute: number, entries: TallyEntry[] | undefined): void {
    for (const { labels, count } of entries ?? []) {
      const [ref, provider, outcome] = labels
      const counter = pushCounterIndex(provider ?? '', outcome ?? '')
      if (ref === undefined || counter === -1) continue
      const key = labels.join('\0')
      const before = this.#pushPrevious.get(key) ?? 0
      this.#pushPrevious.set(key, count)
      const by = count >= before ? count - before : count
      if (by > 0) this.#ledger.add(minute, ref, counter, by)
    }
  }

  async #write(): Promise<void> {
    const now = this.#now()
    const users = this.#options.activeUsers
    const rows = this.#ledger.take()
    const batch = users.take()
    if (users.dropped > this.#droppedUsers) {
      log.error('active users dropped: the catalogue has been away longer than this node holds them', undefined, { dropped: users.dropped - this.#droppedUsers })
      this.#droppedUsers = users.dropped
    }
    if (rows.refs.length === 0 && batch.users.length === 0) return
    try {
      this.#stats.statements += 1
      await writeUsage(this.#options.catalogue, rows, batch)
      this.#stats.rows += rows.refs.length
      this.#stats.users += batch.users.length
      users.settle(batch, true, now)
      incidents.recovered(SOURCE)
    } catch (error) {
      this.#stats.failures += 1
      this.#ledger.restore(rows)
      users.settle(batch, false, now)
      incidents.failed(SOURCE, error, { projectMinutes: this.#ledger.entries, activeUsers: users.pending })
    }
  }
}
