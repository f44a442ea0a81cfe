// Per project and service, what the data plane's main thread saw: requests by
// status class, their latency, fair-share refusals and queue waits. Recorded
// on the hot path, so a record is a map lookup and a few increments in typed
// arrays made once per project (no label objects, no strings per request);
// the Prometheus exposition (server/metrics.ts) reads them only when scraped.
// Labelled by project ref and service only: never by user, path or device.
// The same cumulative counts feed the usage recorder
// (data-plane/usage-recorder.ts), which writes their growth since its last
// look to the catalogue each minute: one count, read by both.
import type { ServiceUsage } from '../service.ts'
import { RecentMinutes, STATUS_CLASSES, statusClassOf, type MinuteFigures } from './recent-minutes.ts'

/** The services a request is counted under: the four concerns, and `other` (a project's /health, unknown paths). */
export const SERVICES = ['auth', 'graphql', 'push', 'rest', 'storage', 'other'] as const
export type Service = (typeof SERVICES)[number]
export const OTHER_SERVICE = SERVICES.indexOf('other')

export function serviceIndexOf(name: string): number {
  const index = SERVICES.indexOf(name as Service)
  return index === -1 ? OTHER_SERVICE : index
}

/** Upper bounds in seconds of the request latency histogram. */
export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60] as const
/** Upper bounds in seconds of the queue wait histogram (only requests that waited are observed). */
export const WAIT_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30] as const

/** Counts per bucket (not cumulative, the last one past every bound), their sum and count. */
export class Histogram {
  readonly bounds: readonly number[]
  readonly counts: Float64Array
  sum = 0
  count = 0

  constructor(bounds: readonly number[]) {
    this.bounds = bounds
    this.counts = new Float64Array(bounds.length + 1)
  }

  observe(value: number): void {
    const bounds = this.bounds
    let i = 0
    while (i < bounds.length && value > bounds[i]!) i++
    this.counts[i]! += 1
    this.sum += value
    this.count += 1
  }
}

/** Everything counted for one project. Per-service parts are made on the service's first use. */
export class ProjectSeries {
  readonly ref: string
  /** requests[service * 4 + status class] */
  readonly requests = new Float64Array(SERVICES.length * STATUS_CLASSES.length)
  readonly latency: Array<Histogram | undefined> = new Array(SERVICES.length).fill(undefined)
  readonly refusals = new Float64Array(SERVICES.length)
  readonly waits: Array<Histogram | undefined> = new Array(SERVICES.length).fill(undefined)
  readonly recent = new RecentMinutes()
  /** Response-body bytes per service (counted only while usage is counted: DataPlaneDeps.activeUsers). */
  readonly bytesOut = new Float64Array(SERVICES.length)
  /** Auth's sessions issued by a sign-in, and by a token refresh. */
  signIns = 0
  tokenRefreshes = 0
  /** The platform's mail Auth sent on this project's requests (SMTP or the outbox). */
  mailSent = 0

  constructor(ref: string) {
    this.ref = ref
  }
}

export interface ProjectFiguresOptions {
  /** Whether a ref names a project; requests naming anything else are counted apart, never under their ref. */
  known: (ref: string) => boolean
  now?: () => number
}

export class ProjectFigures {
  readonly #series = new Map<string, ProjectSeries>()
  readonly #known: (ref: string) => boolean
  readonly #now: () => number
  /** Requests naming no known project, by status class (their refs would be anyone's strings). */
  readonly unrouted = new Float64Array(STATUS_CLASSES.length)

  constructor(options: ProjectFiguresOptions) {
    this.#known = options.known
    this.#now = options.now ?? Date.now
  }

  /** One answered request; `millis` from its arrival to its answer, `bytes` its body's length (0 when usage is not counted). */
  answered(ref: string, service: number, status: number, millis: number, bytes = 0): void {
    const statusClass = statusClassOf(status)
    const series = this.#series.get(ref) ?? this.#adopt(ref)
    if (series === undefined) {
      this.unrouted[statusClass]! += 1
      return
    }
    series.requests[service * STATUS_CLASSES.length + statusClass]! += 1
    series.bytesOut[service]! += bytes
    ;(series.latency[service] ??= new Histogram(LATENCY_BUCKETS)).observe(millis / 1000)
    series.recent.answered(this.#now(), statusClass, millis)
  }

  /** A request its project's fair share refused because the queue was full (the project is known: it was dispatched). */
  refused(ref: string, service: number): void {
    const series = this.#seriesOf(ref)
    series.refusals[service]! += 1
    series.recent.refused(this.#now())
  }

  /** A request that waited `millis` in its project's queue before it ran. */
  waited(ref: string, service: number, millis: number): void {
    const series = this.#seriesOf(ref)
    ;(series.waits[service] ??= new Histogram(WAIT_BUCKETS)).observe(millis / 1000)
    series.recent.waited(this.#now(), millis)
  }

  /** What a concern's worker reported of a request's usage (lib/service.ts ServiceUsage); the project is known: it was dispatched. */
  used(ref: string, usage: ServiceUsage): void {
    const series = this.#seriesOf(ref)
    if (usage.session === 'sign_in') series.signIns += 1
    else if (usage.session === 'refresh') series.tokenRefreshes += 1
    if (usage.mails !== undefined) series.mailSent += usage.mails
  }

  /** Every project counted so far (the exposition and the usage recorder read them). */
  series(): IterableIterator<ProjectSeries> {
    return this.#series.values()
  }

  /** The last hour of a project's figures, minute by minute, oldest first (zeros for a project not seen). */
  recent(ref: string): MinuteFigures[] {
    return (this.#series.get(ref)?.recent ?? new RecentMinutes()).figures(this.#now())
  }

  #adopt(ref: string): ProjectSeries | undefined {
    return this.#known(ref) ? this.#seriesOf(ref) : undefined
  }

  #seriesOf(ref: string): ProjectSeries {
    let series = this.#series.get(ref)
    if (series === undefined) {
      series = new ProjectSeries(ref)
      this.#series.set(ref, series)
    }
    return series
  }
}
