// Reading usage (issue 27 item 2): one project's month (totals per counter,
// active users, database size, and the same per day) and every project's
// month as rows for a billing system, read through a cursor so a month of
// 10,000 projects is held a batch at a time. The CLI (`baseplane usage`) and
// the admin API (`/platform/v1/.../usage`) call these; what is counted and how
// it gets here is data-plane/usage-recorder.ts and usage-upkeep.ts.
import Cursor from 'pg-cursor'
import type pg from 'pg'
import { platformErrors } from '../lib/errors.ts'
import { isRef } from '../lib/refs.ts'
import { isPeakCounter, USAGE_COUNTERS } from '../lib/metrics/usage-counters.ts'
import type { ControlPlane } from './control-plane.ts'
import { getProject } from './projects.ts'
import {
  EXPORT_SQL,
  exportValues,
  projectActiveUsers,
  projectDatabaseSizes,
  projectDayCounts,
  usageKept,
  type ExportRow,
  type MonthRange,
} from './db/usage.ts'

/** A billing month (UTC calendar month): `YYYY-MM` and its range. */
export interface UsageMonth extends MonthRange {
  month: string
}

const MONTH = /^(\d{4})-(0[1-9]|1[0-2])$/

/** `raw` (`YYYY-MM`), or the month holding `now` when absent; refused as invalid_argument naming `month`. */
export function usageMonth(raw: string | undefined, now = Date.now()): UsageMonth {
  const month = raw ?? new Date(now).toISOString().slice(0, 7)
  const match = MONTH.exec(month)
  if (match === null || Number(match[1]) < 1970) {
    throw platformErrors.invalidArgument(`month must be written YYYY-MM (such as 2026-11), got ${JSON.stringify(month.slice(0, 40))}`, 'month')
  }
  const from = new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, 1))
  const to = new Date(Date.UTC(Number(match[1]), Number(match[2]), 1))
  return { month, firstDay: from.toISOString().slice(0, 10), nextFirstDay: to.toISOString().slice(0, 10), from, to }
}

type Counters = Record<string, number>

function zeros(): Counters {
  return Object.fromEntries(USAGE_COUNTERS.map((name) => [name, 0]))
}

/** One project's month. Counter names are lib/metrics/usage-counters.ts's (README: Usage). */
export interface ProjectUsageView {
  ref: string
  month: string
  /** True when the project no longer exists: its usage is kept for billing. */
  deleted: boolean
  totals: Counters
  active_users: { total: number; anonymous: number; authenticated: number }
  /** The month's latest sample and its largest; null before the first sample. */
  database_size: { bytes: number | null; peak_bytes: number | null; sampled_at: string | null }
  /** Every day of the month that has begun, oldest first. */
  days: Array<{ date: string; counters: Counters; database_size_bytes: number | null }>
}

export async function projectUsage(controlPlane: ControlPlane, ref: string, month?: string, now = Date.now()): Promise<ProjectUsageView> {
  const range = usageMonth(month, now)
  const deleted = await getProject(controlPlane, ref).then(
    () => false,
    async (error: unknown) => {
      // A deleted project answers while its usage is kept; a ref that never had any is unknown.
      if (isRef(ref) && (await usageKept(controlPlane.catalogue, ref))) return true
      throw error
    },
  )
  const db = controlPlane.catalogue
  const [counts, users, sizes] = await Promise.all([projectDayCounts(db, ref, range), projectActiveUsers(db, ref, range.firstDay), projectDatabaseSizes(db, ref, range)])
  const totals = zeros()
  const byDay = new Map<string, Counters>()
  for (const { day, counter, value } of counts) {
    if (!(counter in totals)) continue
    // A peak's month is its largest day (lib/metrics/usage-counters.ts isPeakCounter).
    totals[counter] = isPeakCounter(counter) ? Math.max(totals[counter]!, value) : totals[counter]! + value
    let counters = byDay.get(day)
    if (counters === undefined) byDay.set(day, (counters = zeros()))
    counters[counter] = isPeakCounter(counter) ? Math.max(counters[counter]!, value) : counters[counter]! + value
  }
  const sizeOf = new Map(sizes.map((size) => [size.day, size]))
  const latest = sizes.at(-1)
  const days: ProjectUsageView['days'] = []
  for (let day = range.from.getTime(); day < range.to.getTime() && day <= now; day += 86_400_000) {
    const date = new Date(day).toISOString().slice(0, 10)
    days.push({ date, counters: byDay.get(date) ?? zeros(), database_size_bytes: sizeOf.get(date)?.peakBytes ?? null })
  }
  return {
    ref,
    month: range.month,
    deleted,
    totals,
    active_users: { total: users.total, anonymous: users.anonymous, authenticated: users.total - users.anonymous },
    database_size: {
      bytes: latest?.lastBytes ?? null,
      peak_bytes: sizes.length === 0 ? null : Math.max(...sizes.map((size) => size.peakBytes)),
      sampled_at: latest?.sampledAt.toISOString() ?? null,
    },
    days,
  }
}

/** One project's line of the export: flat, so it is a CSV row as well as a JSON line. */
export interface UsageExportRow extends Record<string, string | number | null> {
  ref: string
  month: string
}

/** The export's columns, in order (the CSV header). */
export const USAGE_EXPORT_COLUMNS: readonly string[] = [
  'ref',
  'month',
  ...USAGE_COUNTERS,
  'active_users',
  'anonymous_active_users',
  'database_size_bytes',
  'database_size_peak_bytes',
]

function exportRow(row: ExportRow, month: string): UsageExportRow {
  const counters = row.counters ?? {}
  const line: UsageExportRow = { ref: row.ref, month }
  for (const name of USAGE_COUNTERS) line[name] = Number(counters[name] ?? 0)
  line.active_users = Number(row.active_users ?? 0)
  line.anonymous_active_users = Number(row.anonymous_active_users ?? 0)
  line.database_size_bytes = row.last_bytes === null ? null : Number(row.last_bytes)
  line.database_size_peak_bytes = row.peak_bytes === null ? null : Number(row.peak_bytes)
  return line
}

/** A CSV line of `row` (RFC 4180; refs and figures need no quoting, but a value that would is quoted). */
export function usageCsvLine(row: Record<string, unknown>): string {
  return USAGE_EXPORT_COLUMNS.map((column) => {
    const value = row[column]
    const text = value === null || value === undefined ? '' : String(value)
    return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text
  }).join(',')
}

/** Rows fetched from the cursor at a time: the most the export holds. */
export const EXPORT_BATCH_ROWS = 500

export interface UsageExport {
  month: string
  /**
   * The projects' rows, a cursor batch at a time. Ending it early (`return`)
   * closes the cursor and gives its connection back; so does reading it to
   * the end or a failure.
   */
  batches: AsyncIterableIterator<UsageExportRow[]>
}

/**
 * Opens the month's export: a connection of the catalogue's pool, a cursor
 * over every project with usage in the month (deleted ones included), and its
 * first batch read, so a catalogue that does not answer is refused here, not
 * halfway through an answer.
 */
export async function openUsageExport(controlPlane: ControlPlane, month?: string, batchRows = EXPORT_BATCH_ROWS): Promise<UsageExport> {
  const range = usageMonth(month)
  const client = await controlPlane.catalogue.connect()
  let cursor: Cursor<ExportRow> | undefined
  try {
    cursor = client.query(new Cursor<ExportRow>(EXPORT_SQL, exportValues(range)))
    const first = await cursor.read(batchRows)
    return { month: range.month, batches: new CursorBatches(client, cursor, first, batchRows, range.month) }
  } catch (error) {
    await cursor?.close().catch(() => {})
    client.release(error as Error)
    throw error
  }
}

/** The export's batches: an iterator (not a generator) so that ending it before the first `next` still frees the connection. */
class CursorBatches implements AsyncIterableIterator<UsageExportRow[]> {
  #client: pg.PoolClient | undefined
  readonly #cursor: Cursor<ExportRow>
  #pending: ExportRow[] | undefined
  readonly #batchRows: number
  readonly #month: string

  constructor(client: pg.PoolClient, cursor: Cursor<ExportRow>, first: ExportRow[], batchRows: number, month: string) {
    this.#client = client
    this.#cursor = cursor
    this.#pending = first
    this.#batchRows = batchRows
    this.#month = month
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<UsageExportRow[]> {
    return this
  }

  async next(): Promise<IteratorResult<UsageExportRow[]>> {
    if (this.#client === undefined) return { done: true, value: undefined }
    let rows: ExportRow[]
    try {
      rows = this.#pending ?? (await this.#cursor.read(this.#batchRows))
    } catch (error) {
      await this.#end(error as Error)
      throw error
    }
    this.#pending = undefined
    if (rows.length === 0) {
      await this.#end()
      return { done: true, value: undefined }
    }
    return { done: false, value: rows.map((row) => exportRow(row, this.#month)) }
  }

  async return(): Promise<IteratorResult<UsageExportRow[]>> {
    await this.#end()
    return { done: true, value: undefined }
  }

  async #end(failure?: Error): Promise<void> {
    const client = this.#client
    if (client === undefined) return
    this.#client = undefined
    await this.#cursor.close().catch(() => {})
    // A connection whose cursor failed is not trusted again.
    client.release(failure)
  }
}
