// `GET {platform}/metrics`: one data-plane process's figures in Prometheus'
// text format (prom-client), behind the admin token; and the last hour of a
// project's figures per minute for the dashboard
// (`GET /platform/v1/projects/{ref}/metrics/recent`).
//
// Sources: the main thread's per-project counts (lib/metrics/project-figures.ts,
// fed by the data plane and the fair shares), each worker thread's snapshot
// asked for at scrape time (pool connections, busy time, mail), the push actor
// thread's snapshot (deliveries), the shared connection budget, and
// prom-client's default process metrics (event-loop lag among them).
import { performance } from 'node:perf_hooks'
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client'
import type { ConnectionBudget } from '../lib/db/connection-budget.ts'
import { BaseplaneError, platformErrors } from '../lib/errors.ts'
import type { PlatformRoutes } from '../lib/http.ts'
import { platformErrorResponse } from '../lib/http/errors.ts'
import { LATENCY_BUCKETS, SERVICES, WAIT_BUCKETS, type ProjectFigures } from '../lib/metrics/project-figures.ts'
import { MINUTE_MS, STATUS_CLASSES } from '../lib/metrics/recent-minutes.ts'
import { SnapshotHistogram, type HistogramSeries } from '../lib/metrics/snapshot-histogram.ts'
import type { ThreadSnapshot, TallyEntry } from '../lib/metrics/thread-tallies.ts'
import type { Dispatcher, ThreadReport } from '../data-plane/dispatcher.ts'
import { adminTokenMatches, REF_PARAM, type AdminRoute } from '../control-plane/admin-api.ts'
import type { ControlPlane } from '../control-plane/control-plane.ts'

/** How long a scrape waits for a thread's snapshot before leaving that thread out. */
const SNAPSHOT_TIMEOUT_MS = 2000

// Process-wide (event loop, heap, GC, handles): made once per process, however
// many platforms a test starts in it, since their observers cannot be undone.
let processRegistry: Registry | undefined
function processMetrics(): Registry {
  if (processRegistry === undefined) {
    processRegistry = new Registry()
    collectDefaultMetrics({ register: processRegistry })
  }
  return processRegistry
}

export interface PlatformMetricsSources {
  figures: ProjectFigures
  dispatcher: Dispatcher
  budget: ConnectionBudget
}

interface PushActorsSource {
  snapshot(timeoutMillis: number): Promise<ThreadSnapshot | undefined>
}

interface Scrape {
  workers: ThreadReport[]
  actors: ThreadSnapshot | undefined
}

export class PlatformMetrics {
  readonly #sources: PlatformMetricsSources
  readonly #registry = new Registry()
  #pushActors: PushActorsSource | undefined
  /** What the threads reported for the scrape under way (the collect callbacks read it). */
  #scrape: Scrape = { workers: [], actors: undefined }
  /** Each thread's busy and idle time at the previous scrape, for the utilisation since then. */
  readonly #previous = new Map<string, { busy: number; idle: number }>()

  constructor(sources: PlatformMetricsSources) {
    this.#sources = sources
    // Started now, so the event-loop lag has samples by the first scrape.
    processMetrics()
    this.#define()
  }

  /** The push actor thread, once started (after the server: a scrape before it has no deliveries). */
  watchPushActors(pushActors: PushActorsSource): void {
    this.#pushActors = pushActors
  }

  /** The exposition text (Prometheus text format 0.0.4). */
  async text(): Promise<string> {
    const [workers, actors] = await Promise.all([
      this.#sources.dispatcher.snapshots(SNAPSHOT_TIMEOUT_MS),
      this.#pushActors?.snapshot(SNAPSHOT_TIMEOUT_MS),
    ])
    // The registry runs every collect callback synchronously when metrics() starts, so this scrape's reports cannot mix with another's.
    this.#scrape = { workers, actors }
    return Registry.merge([processMetrics(), this.#registry]).metrics()
  }

  get contentType(): string {
    return this.#registry.contentType
  }

  #define(): void {
    const registers = [this.#registry]
    const figures = this.#sources.figures
    const scrape = () => this.#scrape

    new Counter({
      name: 'baseplane_requests_total',
      help: 'Requests to a project answered by this process, by project ref, service and status class.',
      labelNames: ['project', 'service', 'status_class'],
      registers,
      collect() {
        this.reset()
        for (const series of figures.series()) {
          SERVICES.forEach((service, s) => {
            STATUS_CLASSES.forEach((statusClass, c) => {
              const count = series.requests[s * STATUS_CLASSES.length + c]!
              if (count > 0) this.inc({ project: series.ref, service, status_class: statusClass }, count)
            })
          })
        }
      },
    })
    new Counter({
      name: 'baseplane_unrouted_requests_total',
      help: 'Requests naming no known project (counted apart from any ref), by status class.',
      labelNames: ['status_class'],
      registers,
      collect() {
        this.reset()
        STATUS_CLASSES.forEach((statusClass, c) => this.inc({ status_class: statusClass }, figures.unrouted[c]!))
      },
    })
    new SnapshotHistogram({
      name: 'baseplane_request_duration_seconds',
      help: 'Time from a project request arriving to its answer being handed to the server, by project ref and service.',
      labelNames: ['project', 'service'],
      buckets: LATENCY_BUCKETS,
      registers,
      read: () => perService(figures, 'latency'),
    })
    new Counter({
      name: 'baseplane_fair_share_refusals_total',
      help: "Requests refused at once (503) because their project's queue for the service was full.",
      labelNames: ['project', 'service'],
      registers,
      collect() {
        this.reset()
        for (const series of figures.series()) {
          SERVICES.forEach((service, s) => {
            if (series.refusals[s]! > 0) this.inc({ project: series.ref, service }, series.refusals[s]!)
          })
        }
      },
    })
    new SnapshotHistogram({
      name: 'baseplane_fair_share_queue_wait_seconds',
      help: "Time requests waited in their project's queue for a free slot (only those that waited), by project ref and service.",
      labelNames: ['project', 'service'],
      buckets: WAIT_BUCKETS,
      registers,
      read: () => perService(figures, 'waits'),
    })
    new Gauge({
      name: 'baseplane_project_connections',
      help: "Connections the worker threads' pools hold to a project's database, by project ref, service and state (busy, idle).",
      labelNames: ['project', 'service', 'state'],
      registers,
      collect() {
        this.reset()
        const sums = new Map<string, { project: string; service: string; busy: number; idle: number }>()
        for (const { concern, snapshot } of scrape().workers) {
          for (const [project, counts] of Object.entries(snapshot.projects)) {
            const key = `${project}\0${concern}`
            let sum = sums.get(key)
            if (sum === undefined) sums.set(key, (sum = { project, service: concern, busy: 0, idle: 0 }))
            sum.busy += counts.busy
            sum.idle += counts.idle
          }
        }
        for (const { project, service, busy, idle } of sums.values()) {
          this.set({ project, service, state: 'busy' }, busy)
          this.set({ project, service, state: 'idle' }, idle)
        }
      },
    })
    const budget = this.#sources.budget
    new Gauge({
      name: 'baseplane_server_connections',
      help: 'Connections this process holds (or is opening) to each database server, all worker threads together.',
      labelNames: ['server'],
      registers,
      collect() {
        this.reset()
        for (const { server, open } of budget.snapshot()) this.set({ server }, open)
      },
    })
    new Gauge({
      name: 'baseplane_server_connection_waiters',
      help: "Requests waiting for a unit of a database server's connection budget.",
      labelNames: ['server'],
      registers,
      collect() {
        this.reset()
        for (const { server, waiting } of budget.snapshot()) this.set({ server }, waiting)
      },
    })
    new Counter({
      name: 'baseplane_push_deliveries_total',
      help: 'Push deliveries logged by the push actors, by project ref, provider (apns, fcm, web) and outcome (sent, failed, retry, held, expired).',
      labelNames: ['project', 'provider', 'outcome'],
      registers,
      collect() {
        this.reset()
        for (const { labels, count } of scrape().actors?.pushDeliveries ?? []) {
          this.inc({ project: labels[0]!, provider: labels[1]!, outcome: labels[2]! }, count)
        }
      },
    })
    const mail = () => tallyOf(scrape().workers.filter((r) => r.concern === 'auth').flatMap((r) => r.snapshot.mail))
    new Counter({
      name: 'baseplane_mail_sent_total',
      help: "Auth mail sent, by template kind and delivery (smtp: handed to SMTP_URL's server; outbox: kept in the project's outbox).",
      labelNames: ['kind', 'delivery'],
      registers,
      collect() {
        this.reset()
        for (const { labels, count } of mail()) if (labels[1] !== 'smtp_failed') this.inc({ kind: labels[0]!, delivery: labels[1]! }, count)
      },
    })
    new Counter({
      name: 'baseplane_mail_failures_total',
      help: 'Auth mail the SMTP server refused or could not be reached for, by template kind.',
      labelNames: ['kind'],
      registers,
      collect() {
        this.reset()
        for (const { labels, count } of mail()) if (labels[1] === 'smtp_failed') this.inc({ kind: labels[0]! }, count)
      },
    })
    const threads = () => this.#threads()
    new Counter({
      name: 'baseplane_thread_busy_seconds_total',
      help: "Time each thread's event loop spent busy (not waiting for I/O) since it started: main, <concern>-<n> worker threads, push-actors.",
      labelNames: ['thread'],
      registers,
      collect() {
        this.reset()
        for (const { thread, busy } of threads()) this.inc({ thread }, busy / 1000)
      },
    })
    const utilisation = () => this.#utilisation()
    new Gauge({
      name: 'baseplane_thread_utilization',
      help: "Share of the time since the previous scrape each thread's event loop was busy (0 to 1).",
      labelNames: ['thread'],
      registers,
      collect() {
        this.reset()
        for (const [thread, value] of utilisation()) this.set({ thread }, value)
      },
    })
  }

  /** Each thread's cumulative busy and idle milliseconds in this scrape. */
  #threads(): Array<{ thread: string; busy: number; idle: number }> {
    const main = performance.eventLoopUtilization()
    const threads = [{ thread: 'main', busy: main.active, idle: main.idle }]
    for (const { concern, thread, snapshot } of this.#scrape.workers) threads.push({ thread: `${concern}-${thread}`, busy: snapshot.busyMillis, idle: snapshot.idleMillis })
    const actors = this.#scrape.actors
    if (actors) threads.push({ thread: 'push-actors', busy: actors.busyMillis, idle: actors.idleMillis })
    return threads
  }

  #utilisation(): Map<string, number> {
    const values = new Map<string, number>()
    for (const { thread, busy, idle } of this.#threads()) {
      const before = this.#previous.get(thread)
      // A thread started again (its counts went back) is measured from its new start.
      const since = before && busy >= before.busy && idle >= before.idle ? before : { busy: 0, idle: 0 }
      const elapsed = busy - since.busy + (idle - since.idle)
      values.set(thread, elapsed > 0 ? (busy - since.busy) / elapsed : 0)
      this.#previous.set(thread, { busy, idle })
    }
    return values
  }
}

function* perService(figures: ProjectFigures, part: 'latency' | 'waits'): Generator<HistogramSeries> {
  for (const series of figures.series()) {
    for (let s = 0; s < SERVICES.length; s++) {
      const histogram = series[part][s]
      if (histogram !== undefined) yield { labels: { project: series.ref, service: SERVICES[s]! }, histogram }
    }
  }
}

/** Tally entries of several threads summed by their labels. */
function tallyOf(entries: TallyEntry[]): TallyEntry[] {
  const sums = new Map<string, TallyEntry>()
  for (const { labels, count } of entries) {
    const key = labels.join('\0')
    const sum = sums.get(key)
    if (sum === undefined) sums.set(key, { labels, count })
    else sum.count += count
  }
  return [...sums.values()]
}

/** `GET /metrics` with `Authorization: Bearer <admin token>`; errors in the admin API's `{code, message}`. */
export function metricsRoute(metrics: PlatformMetrics, adminToken: string): PlatformRoutes {
  return async (request) => {
    if (request.path !== '/metrics') return undefined
    try {
      if (!adminTokenMatches(request.headers.authorization, adminToken)) throw platformErrors.unauthorizedAdmin()
      if (request.method !== 'GET') throw new BaseplaneError('method_not_allowed', `${request.method} is not allowed on /metrics`, 405)
      return { status: 200, headers: { 'content-type': metrics.contentType }, body: await metrics.text() }
    } catch (error) {
      if (BaseplaneError.is(error)) return platformErrorResponse(error)
      throw error
    }
  }
}

/** `GET /platform/v1/projects/{ref}/metrics/recent`: this process's last hour of the project, per minute. */
export function recentFiguresRoute(figures: ProjectFigures, controlPlane: ControlPlane): AdminRoute {
  return {
    method: 'GET',
    path: '/projects/:ref/metrics/recent',
    where: REF_PARAM,
    handler: async ({ params }) => {
      const project = await controlPlane.get(params.ref!)
      return [200, { ref: project.ref, minute_ms: MINUTE_MS, minutes: figures.recent(project.ref) }]
    },
  }
}
