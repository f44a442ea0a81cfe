// A node's usage counts not yet in the catalogue, per UTC minute, project and
// counter (lib/metrics/usage-counters.ts): what the usage recorder adds each
// time it looks at the counters, takes out for a write, and puts back when
// the write fails, so a catalogue that is away loses nothing until the bound.
//
// Bounded: at most MAX_LEDGER_ENTRIES (minute, project) pairs, about 300
// bytes each (50 minutes of 1,000 busy projects). Past it the oldest minute
// is dropped whole, and `onDrop` is told what it held: the newest counts are
// the ones still worth sending when the catalogue returns.
import { isPeakCounter, USAGE_COUNTERS } from './usage-counters.ts'

export const MAX_LEDGER_ENTRIES = 50_000

/** Counts as the recorder's statement takes them: parallel arrays, sorted by (ref, minute, counter). */
export interface UsageRows {
  refs: string[]
  /** Start of each row's minute, ms since the epoch. */
  minutes: number[]
  counters: string[]
  values: number[]
}

export interface DroppedMinute {
  minute: number
  projects: number
  /** The sum of every counter it held (a request and a byte alike: a size, not a figure). */
  total: number
}

export interface UsageLedgerOptions {
  maxEntries?: number
  onDrop?: (dropped: DroppedMinute) => void
}

export class UsageLedger {
  /** minute → ref → counts by counter index */
  readonly #minutes = new Map<number, Map<string, Float64Array>>()
  #entries = 0
  readonly #maxEntries: number
  readonly #onDrop: ((dropped: DroppedMinute) => void) | undefined

  constructor(options: UsageLedgerOptions = {}) {
    this.#maxEntries = options.maxEntries ?? MAX_LEDGER_ENTRIES
    this.#onDrop = options.onDrop
  }

  /** (minute, project) pairs held. */
  get entries(): number {
    return this.#entries
  }

  add(minute: number, ref: string, counter: number, value: number): void {
    this.#count(minute, ref, counter, value, false)
  }

  /** A peak counter's figure in the minute: the largest of what this node saw, not a sum (usage-counters.ts isPeakCounter). */
  raise(minute: number, ref: string, counter: number, value: number): void {
    this.#count(minute, ref, counter, value, true)
  }

  #count(minute: number, ref: string, counter: number, value: number, peak: boolean): void {
    if (!(value > 0)) return
    let byRef = this.#minutes.get(minute)
    let counts = byRef?.get(ref)
    if (counts === undefined) {
      if (this.#entries >= this.#maxEntries && !this.#dropOldest(minute, value)) return
      if (byRef === undefined) this.#minutes.set(minute, (byRef = new Map()))
      byRef.set(ref, (counts = new Float64Array(USAGE_COUNTERS.length)))
      this.#entries += 1
    }
    if (peak) counts[counter] = Math.max(counts[counter]!, value)
    else counts[counter]! += value
  }

  /** Everything held, taken out as rows (sorted, so every node locks the catalogue's rows in one order). */
  take(): UsageRows {
    const rows: Array<[string, number, number, number]> = []
    for (const [minute, byRef] of this.#minutes) {
      for (const [ref, counts] of byRef) {
        for (let c = 0; c < counts.length; c++) if (counts[c]! > 0) rows.push([ref, minute, c, counts[c]!])
      }
    }
    this.#minutes.clear()
    this.#entries = 0
    rows.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1] || a[2] - b[2]))
    return {
      refs: rows.map((row) => row[0]),
      minutes: rows.map((row) => row[1]),
      counters: rows.map((row) => USAGE_COUNTERS[row[2]]!),
      values: rows.map((row) => row[3]),
    }
  }

  /** Puts back rows whose write failed, added to what was counted meanwhile. */
  restore(rows: UsageRows): void {
    for (let i = 0; i < rows.refs.length; i++) {
      const counter = rows.counters[i]!
      this.#count(rows.minutes[i]!, rows.refs[i]!, USAGE_COUNTERS.indexOf(counter), rows.values[i]!, isPeakCounter(counter))
    }
  }

  /** Makes room by dropping the oldest minute, unless the count being added is older still (then it is the one dropped). */
  #dropOldest(adding: number, value: number): boolean {
    let oldest = Infinity
    for (const minute of this.#minutes.keys()) if (minute < oldest) oldest = minute
    if (oldest === Infinity || adding < oldest) {
      this.#onDrop?.({ minute: adding, projects: 1, total: value })
      return false
    }
    const byRef = this.#minutes.get(oldest)!
    let total = 0
    for (const counts of byRef.values()) for (const value of counts) total += value
    this.#minutes.delete(oldest)
    this.#entries -= byRef.size
    this.#onDrop?.({ minute: oldest, projects: byRef.size, total })
    return true
  }
}
