// The fleet's recent usage of one project, for charts (issue 27 item 2): the
// last hours per hour, as every node wrote it to the catalogue, and the
// minutes not yet rolled up. The dashboard's Overview draws it and the admin
// API answers it (`GET /projects/{ref}/usage/recent?hours=N`); unlike
// `metrics/recent` (this process's own last hour), it is the whole fleet's,
// within a node's flush interval (a minute by default).
import { platformErrors } from '../lib/errors.ts'
import { USAGE_COUNTERS } from '../lib/metrics/usage-counters.ts'
import type { ControlPlane } from './control-plane.ts'
import { projectRecentCounts } from './db/usage-charts.ts'
import { getProject } from './projects.ts'

const HOUR_MS = 3_600_000
export const DEFAULT_RECENT_HOURS = 24
/** A week: the hourly rows are kept for months (BASEPLANE_USAGE_HOURLY_RETENTION_MONTHS), a chart needs less. */
export const MAX_RECENT_HOURS = 168

type Counters = Record<string, number>

/** A period's counts: every counter (0 when none). */
export interface UsagePoint {
  /** The start of the hour or minute, ISO 8601 (UTC). */
  start: string
  counters: Counters
}

export interface RecentUsageView {
  ref: string
  hours: number
  /** The first hour's start and the end of the current hour. */
  from: string
  to: string
  /** One point per hour, oldest first, the current (unfinished) hour last; each holds its minutes not yet rolled up. */
  points: UsagePoint[]
  /** The minutes not yet rolled up (a few at most), oldest first: already counted in their hour above. */
  minutes: UsagePoint[]
}

/** `?hours=`: absent means DEFAULT_RECENT_HOURS; otherwise a whole number from 1 to MAX_RECENT_HOURS, refused as invalid_argument naming `hours`. */
export function recentHours(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_RECENT_HOURS
  const hours = /^\d{1,4}$/.test(raw) ? Number(raw) : NaN
  if (!(hours >= 1 && hours <= MAX_RECENT_HOURS)) {
    throw platformErrors.invalidArgument(`hours must be a whole number from 1 to ${MAX_RECENT_HOURS}, got ${JSON.stringify(raw.slice(0, 40))}`, 'hours')
  }
  return hours
}

function zeros(): Counters {
  return Object.fromEntries(USAGE_COUNTERS.map((name) => [name, 0]))
}

/** The project's last `hours` hours (the current one included), per hour, across the fleet. `hours` as recentHours takes it. */
export async function recentUsage(controlPlane: ControlPlane, ref: string, hours?: string, now = Date.now()): Promise<RecentUsageView> {
  const count = recentHours(hours)
  const project = await getProject(controlPlane, ref)
  const to = Math.floor(now / HOUR_MS) * HOUR_MS + HOUR_MS
  const from = to - count * HOUR_MS
  const rows = await projectRecentCounts(controlPlane.catalogue, project.ref, new Date(from), new Date(to))
  const points: UsagePoint[] = []
  for (let at = from; at < to; at += HOUR_MS) points.push({ start: new Date(at).toISOString(), counters: zeros() })
  const minutes = new Map<number, UsagePoint>()
  for (const { at, minute, counter, value } of rows) {
    // A counter this version does not know (a newer node's) is left out, as projectUsage does.
    if (!USAGE_COUNTERS.includes(counter)) continue
    const ms = at.getTime()
    points[Math.floor((ms - from) / HOUR_MS)]!.counters[counter]! += value
    if (!minute) continue
    let point = minutes.get(ms)
    if (point === undefined) minutes.set(ms, (point = { start: at.toISOString(), counters: zeros() }))
    point.counters[counter]! += value
  }
  return {
    ref: project.ref,
    hours: count,
    from: new Date(from).toISOString(),
    to: new Date(to).toISOString(),
    points,
    minutes: [...minutes.values()],
  }
}
