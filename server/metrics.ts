// `GET {platform}/metrics`: one data-plane process's figures in Prometheus'
// text format (prom-client), behind the admin token; and the last hour of a
// project's figures per minute for the dashboard
// (`GET /platform/v1/projects/{ref}/metrics/recent`).
//
// Sources: the main thread's per-project counts (lib/metrics/project-figures.ts,
// fed by the data plane and the fair shares), each worker thread's snapshot
// asked for at scrape time (pool connections, busy time, mail), the push actor
// thread's snapshot (deliveries), the shared connection budget, and
// prom-client's default process metrics (event-loop lag among them). The main
// thread only gathers them as numbers; the text is written on a thread of its
// own (lib/metrics/exposition.ts), so a scrape never holds up the requests
// the main thread routes.
import type { RealtimeHub } from '../data-plane/realtime/hub.ts'
import { performance } from 'node:perf_hooks'
import { Piscina } from 'piscina'
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client'
import type { ConnectionBudget } from '../lib/db/connection-budget.ts'
import { BaseplaneError, platformErrors } from '../lib/errors.ts'
import type { PlatformRoutes } from '../lib/http.ts'
import { platformErrorResponse } from '../lib/http/errors.ts'
import type { ExpositionInput } from '../lib/metrics/exposition.ts'
import { packFigures } from '../lib/metrics/figures-packet.ts'
import type { ProjectFigures } from '../lib/metrics/project-figures.ts'
import { MINUTE_MS } from '../lib/metrics/recent-minutes.ts'
import type { ThreadSnapshot } from '../lib/metrics/thread-tallies.ts'
import { threadExecArgv, threadModule } from '../lib/thread-module.ts'
import type { Dispatcher, ThreadReport } from '../data-plane/dispatcher.ts'
import type { HttpEngine } from '../data-plane/http-engine.ts'
import type { RealtimeBus } from '../data-plane/realtime/bus.ts'
import { adminTokenMatches, REF_PARAM, type AdminRoute } from '../control-plane/admin-api/route.ts'
import type { ControlPlane } from '../control-plane/control-plane.ts'
import { getProject } from '../control-plane/projects.ts'

/** How long a scrape waits for a thread's snapshot before leaving that thread out. */
const SNAPSHOT_TIMEOUT_MS = 2000
/** The exposition thread ends after this long without a scrape (Prometheus scrapes every 15 to 60 s). */
const EXPOSITION_IDLE_MS = 5 * 60_000
const expositionFile = threadModule('../lib/metrics/exposition', import.meta.url).href

// Process-wide (event loop, heap, GC, handles): made once per process, however
// many platforms a test starts in it, since their observers cannot be undone.
// They describe the main thread, so they are read there: a few dozen lines.
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
  dispatcher: Pick<Dispatcher, 'snapshots'>
  budget: Pick<ConnectionBudget, 'snapshot'>
  /** The HTTP server carrying the data plane, named on /metrics as `baseplane_http_engine_info`. */
  httpEngine?: Pick<HttpEngine, 'name' | 'version' | 'native'>
  /** This node's Realtime: each project's open sockets and broadcasts taken. */
  realtime?: Pick<RealtimeHub, 'limits'>
  /** Realtime's bus between nodes, named on /metrics as `baseplane_realtime_bus_connected` where the node has one. */
  realtimeBus?: Pick<RealtimeBus, 'fleet' | 'connected'>
}

/** `baseplane_http_engine_info{engine, version, native} 1`: which HTTP server this process runs (a slow node:http shows). */
function engineRegistry(engine: PlatformMetricsSources['httpEngine']): Registry {
  const registry = new Registry()
  if (engine === undefined) return registry
  new Gauge({
    name: 'baseplane_http_engine_info',
    help: 'The HTTP server carrying the data plane (always 1; the labels say which)',
    labelNames: ['engine', 'version', 'native'],
    registers: [registry],
  }).set({ engine: engine.name, version: engine.version, native: String(engine.native) }, 1)
  return registry
}

/** `baseplane_realtime_bus_connected 1|0` on a fleet's node: 0 while Realtime's messages reach only this node's sockets. */
function realtimeBusRegistry(registry: Registry, bus: PlatformMetricsSources['realtimeBus']): void {
  if (bus === undefined || !bus.fleet) return
  new Gauge({
    name: 'baseplane_realtime_bus_connected',
    help: "Whether this node is connected to the fleet's Realtime bus (NATS): 0 while its Realtime messages reach only its own sockets",
    registers: [registry],
    collect() {
      this.set(bus.connected ? 1 : 0)
    },
  })
}

interface PushActorsSource {
  snapshot(timeoutMillis: number): Promise<ThreadSnapshot | undefined>
}

interface ThreadTimes {
  thread: string
  busy: number
  idle: number
}

export class PlatformMetrics {
  readonly #sources: PlatformMetricsSources
  readonly #engine: Registry
  #pushActors: PushActorsSource | undefined
  #exposition: Piscina | undefined
  /** Each thread's busy and idle time at the previous scrape, for the utilisation since then. */
  readonly #previous = new Map<string, { busy: number; idle: number }>()

  constructor(sources: PlatformMetricsSources) {
    this.#sources = sources
    this.#engine = engineRegistry(sources.httpEngine)
    realtimeBusRegistry(this.#engine, sources.realtimeBus)
    // Started now, so the event-loop lag has samples by the first scrape.
    processMetrics()
  }

  /** The push actor thread, once started (after the server: a scrape before it has no deliveries). */
  watchPushActors(pushActors: PushActorsSource): void {
    this.#pushActors = pushActors
  }

  /** The exposition text (Prometheus text format 0.0.4), UTF-8. */
  async text(): Promise<Uint8Array> {
    const [workers, actors] = await Promise.all([
      this.#sources.dispatcher.snapshots(SNAPSHOT_TIMEOUT_MS),
      this.#pushActors?.snapshot(SNAPSHOT_TIMEOUT_MS),
    ])
    const figures = packFigures(this.#sources.figures)
    const input: ExpositionInput = {
      // The main thread's own process metrics (a few dozen lines) lead the text, written by the same thread, so its
      // answer is one buffer: putting 10 MB together here would cost the main thread tens of milliseconds.
      lead: `${await processMetrics().metrics()}\n${await this.#engine.metrics()}`,
      figures,
      workers,
      actors,
      servers: this.#sources.budget.snapshot(),
      realtime: [...(this.#sources.realtime?.limits.entries() ?? [])].map(([project, counters]) => ({ project, connections: counters.connections, messages: counters.messages })),
      threads: this.#utilisation(this.#threads(workers, actors)),
    }
    this.#exposition ??= new Piscina({
      filename: expositionFile,
      minThreads: 0,
      maxThreads: 1,
      idleTimeout: EXPOSITION_IDLE_MS,
      execArgv: threadExecArgv,
    })
    return (await this.#exposition.run(input, { transferList: [figures.data.buffer, figures.unrouted.buffer] })) as Uint8Array
  }

  get contentType(): string {
    return processMetrics().contentType
  }

  /** Ends the exposition thread. */
  async close(): Promise<void> {
    const pool = this.#exposition
    this.#exposition = undefined
    await pool?.destroy()
  }

  /** Each thread's cumulative busy and idle milliseconds in this scrape. */
  #threads(workers: ThreadReport[], actors: ThreadSnapshot | undefined): ThreadTimes[] {
    const main = performance.eventLoopUtilization()
    const threads = [{ thread: 'main', busy: main.active, idle: main.idle }]
    for (const { concern, thread, snapshot } of workers) threads.push({ thread: `${concern}-${thread}`, busy: snapshot.busyMillis, idle: snapshot.idleMillis })
    if (actors) threads.push({ thread: 'push-actors', busy: actors.busyMillis, idle: actors.idleMillis })
    return threads
  }

  #utilisation(threads: ThreadTimes[]): ExpositionInput['threads'] {
    return threads.map(({ thread, busy, idle }) => {
      const before = this.#previous.get(thread)
      // A thread started again (its counts went back) is measured from its new start.
      const since = before && busy >= before.busy && idle >= before.idle ? before : { busy: 0, idle: 0 }
      const elapsed = busy - since.busy + (idle - since.idle)
      this.#previous.set(thread, { busy, idle })
      return { thread, busyMillis: busy, utilisation: elapsed > 0 ? (busy - since.busy) / elapsed : 0 }
    })
  }
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
    method: 'GET', access: 'read',
    path: '/projects/:ref/metrics/recent',
    where: REF_PARAM,
    handler: async ({ params }) => {
      const project = await getProject(controlPlane, params.ref!)
      return [200, { ref: project.ref, minute_ms: MINUTE_MS, minutes: figures.recent(project.ref) }]
    },
  }
}
