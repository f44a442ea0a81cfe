// Starts one data-plane process: catalogue (migrated), every project database
// upgraded, worker pools, the uWebSockets server with the admin API.
import pg from 'pg'
import type { PlatformConfig } from '../lib/config.ts'
import { RealtimeAuthorization } from '../data-plane/realtime/authorization.ts'
import { RealtimeHub } from '../data-plane/realtime/hub.ts'
import { ProjectPools } from '../lib/db/project-pools.ts'
import { ChangeFeed } from '../data-plane/realtime/changes/feed.ts'
import { NatsBus } from '../data-plane/realtime/nats-bus.ts'
import { startChangeReaders } from '../workers/realtime/changes/reader-thread.ts'
import { whileUnavailable } from '../lib/db/while-unavailable.ts'
import { log, setLogLevel } from '../lib/log.ts'
import { ConnectionBudget, createConnectionBudget } from '../lib/db/connection-budget.ts'
import { ProjectFigures } from '../lib/metrics/project-figures.ts'
import { ActiveUsers } from '../lib/metrics/active-users.ts'
import type { UsageRecorder } from '../data-plane/usage-recorder.ts'
import { startNodeUsage } from './usage.ts'
import { writeRequestLog } from '../lib/request-log.ts'
import { startNodeLifecycle, type NodeLifecycle } from './lifecycle.ts'
import { metricsRoute, PlatformMetrics, recentFiguresRoute } from './metrics.ts'
import type { PlatformRoutes } from '../lib/http.ts'
import { DataPlane } from '../data-plane/data-plane.ts'
import { Dispatcher } from '../data-plane/dispatcher.ts'
import { Gate } from '../data-plane/gate.ts'
import { PlatformHealth } from '../data-plane/platform-health.ts'
import { FleetSize } from '../data-plane/fleet-size.ts'
import { ProjectDirectory } from '../data-plane/project-directory.ts'
import { Throttle } from '../data-plane/throttle.ts'
import { loadHttpEngine, type HttpEngine } from '../data-plane/http-engine.ts'
import { startPushActorThread } from '../workers/push/actor-thread.ts'
import { adminApi, type AdminRoute } from '../control-plane/admin-api/index.ts'
import { dashboard, type DashboardOptions } from '../control-plane/dashboard/routes.ts'
import type { Addressing } from '../control-plane/views.ts'
import { ControlPlane } from '../control-plane/control-plane.ts'
import { upgradeAllProjects } from '../control-plane/projects.ts'
import { checkFleetSettings, fleetAdminToken, localAdminToken } from '../control-plane/fleet-settings.ts'
import { checkStorageBackend } from './storage-backend.ts'
import { PendingUpgrades } from './pending-upgrades.ts'
import { VERSION } from '../control-plane/version.ts'

/** How long a usage flush waits for the push actor thread's tally (left for the next flush when it does not answer). */
const USAGE_SNAPSHOT_TIMEOUT_MS = 2000

/** Connections of a database server kept for the platform itself (catalogue, listeners, push actors, control plane). */
const PLATFORM_RESERVED_CONNECTIONS = 20

export interface RunningPlatform {
  port: number
  /** The HTTP server carrying the data plane. */
  httpEngine: HttpEngine
  /** This node's Postgres Changes and broadcasts from SQL (its reader thread: tests end it to see it replaced). */
  realtimeChanges: ChangeFeed
  databaseUrl: string
  adminToken: string
  controlPlane: ControlPlane
  dataPlane: DataPlane
  throttle: Throttle
  directory: ProjectDirectory
  /** The concerns' worker threads (tests: readiness while a thread is replaced). */
  dispatcher: Dispatcher
  /** This node's usage recorder (undefined when BASEPLANE_USAGE is off): its stats, and a flush now (tests, the benchmark). */
  usage: UsageRecorder | undefined
  /** This node's part in suspension, pause and the operator's events (server/lifecycle.ts): its request activity (flush() in tests). */
  lifecycle: NodeLifecycle
  /** The live nodes this node divides the fleet's connection figures by (data-plane/fleet-size.ts). */
  fleetNodes(): number
  /** Turns the platform's `/health` to 503 `stopping` while everything else still answers (the first phase of a stop). */
  leaving(): void
  /**
   * Stops accepting connections, gives the requests in flight up to `graceMillis`
   * (default 0: cut them) to be answered, then stops the push actor thread, the
   * worker pools, the directory and the control plane, in that order.
   */
  stop(graceMillis?: number): Promise<void>
}

/** The platform's own routes: the admin API, then the dashboard. */
function platformRoutes(controlPlane: ControlPlane, addressing: Addressing, adminToken: string, pages: DashboardOptions, more: AdminRoute[] = []): PlatformRoutes {
  const api = adminApi(controlPlane, addressing, adminToken, { push: pages.push ?? {}, extraRoutes: more, mail: pages.mail })
  const dashboardRoutes = dashboard(controlPlane, addressing, adminToken, pages)
  return async (request) => (await api(request)) ?? (await dashboardRoutes(request))
}

/**
 * Connections this process may hold to the default server's project databases:
 * BASEPLANE_MAX_PROJECT_CONNECTIONS, unless the server has fewer slots to give
 * (a DATABASE_URL server left at PostgreSQL's default of 100), in which case
 * what it has, less the superusers' slots and a reserve for the platform's own
 * connections, so requests queue for a connection instead of failing with
 * "too many connections".
 */
async function defaultServerBudgetOf(config: PlatformConfig, databaseUrl: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl, application_name: 'baseplane-control-plane' })
  client.on('error', () => {})
  await client.connect()
  try {
    const { rows } = await client.query<{ slots: number }>(
      `select greatest(1, coalesce(nullif(current_setting('reserved_connections', true), '')::int, 0),
                          current_setting('max_connections')::int - current_setting('superuser_reserved_connections')::int - ${PLATFORM_RESERVED_CONNECTIONS}) as slots`,
    )
    const slots = rows[0]!.slots
    if (slots >= config.maxProjectConnections) return config.maxProjectConnections
    log.info('the database server has fewer connection slots than BASEPLANE_MAX_PROJECT_CONNECTIONS; using what it has', {
      configured: config.maxProjectConnections,
      budget: slots,
    })
    return slots
  } finally {
    await client.end().catch(() => {})
  }
}

export interface StartOptions {
  /**
   * How long each start-up step may keep meeting the platform database unavailable before the
   * start fails (lib/db/while-unavailable.ts). The embedded server this process supervises is
   * being started again when that happens, so `start` waits for it; 0 (a DATABASE_URL server):
   * a database that does not answer fails the start at once, as the operator's to fix.
   */
  databaseWaitMs?: number
}

/** `httpEngine`: loaded already (the command line loads it before starting a database, to refuse early); else loaded here. */
export async function startPlatform(config: PlatformConfig, databaseUrl: string, httpEngine?: HttpEngine, options: StartOptions = {}): Promise<RunningPlatform> {
  const engine = httpEngine ?? (await loadHttpEngine(config.httpEngine))
  const waitMs = options.databaseWaitMs ?? 0
  // Each step is all or nothing (a transaction, or statements that may run again), so it may run again.
  const step = <T>(what: string, run: () => Promise<T>) => (waitMs > 0 ? whileUnavailable(what, run, { deadlineMs: waitMs }) : run())
  const defaultServerBudget = await step('reading the connection slots', () => defaultServerBudgetOf(config, databaseUrl))
  const controlPlane = await step('migrating the catalogue', () => ControlPlane.open(databaseUrl, { defaultServerBudget, storage: config.storage }))
  // Checked before anything starts: a node configured with another fleet's token or settings refuses.
  const adminToken = await step('checking the fleet settings', async () => {
    const token = await fleetAdminToken(controlPlane.catalogue, config)
    await checkFleetSettings(controlPlane.catalogue, { ...config, storageIdentity: await checkStorageBackend(config.storage) })
    return token
  }).catch(async (error: unknown) => {
    await controlPlane.close()
    throw error
  })
  const upgraded = await step('upgrading the project databases', () => upgradeAllProjects(controlPlane))
  for (const [ref, versions] of upgraded.applied) log.info('project database upgraded', { ref, versions })
  const upgrades = new PendingUpgrades(controlPlane, upgraded.down)
  const directory = new ProjectDirectory(databaseUrl, controlPlane.catalogue)
  // Only its first statement can fail; its catalogue link then connects (and reconnects) by itself.
  await step('registering this node', () => directory.start())
  const throttle = new Throttle(config.throttle)
  await throttle.start(controlPlane.catalogue)
  setLogLevel(config.logLevel)
  const connectionBudget = createConnectionBudget()
  // The fleet's live nodes divide every server's budget and every role's limit.
  const budgetView = new ConnectionBudget(connectionBudget)
  const fleet = new FleetSize(controlPlane.catalogue, {
    selfId: directory.nodeId,
    apply: (nodes) => {
      budgetView.nodes = nodes
    },
    resize: (nodes) => controlPlane.sizeRoleLimits(nodes),
  })
  await fleet.start()
  const figures = new ProjectFigures({ known: (ref) => directory.peek(ref) !== undefined })
  // Usage counting (issue 27): the figures count bytes and sessions too, and the active users gather here.
  const activeUsers = config.usage.enabled ? new ActiveUsers() : undefined
  const dispatcher = new Dispatcher({
    figures,
    logLevel: config.logLevel,
    threads: config.threads,
    tasksPerThread: config.tasksPerThread,
    stickyMillis: config.idleConnectionMillis,
    worker: {
      countUsage: config.usage.enabled,
      maxProjectConnections: defaultServerBudget,
      connectionBudget,
      projectPoolSize: config.projectPoolSize,
      idleConnectionMillis: config.idleConnectionMillis,
      mail: { smtpUrl: config.smtpUrl, from: config.mailFrom },
      push: { fcmTokenUrl: config.push.fcmTokenUrl, allowInsecureWebPushEndpoints: config.push.allowInsecureWebPushEndpoints },
      google: config.google,
      rest: config.rest,
      storage: config.storage,
    },
  })
  const addressing = { publicUrl: config.publicUrl, baseDomain: config.baseDomain }
  const health = new PlatformHealth(databaseUrl, VERSION, { link: directory, silenceMs: config.catalogueSilenceMillis })
  // A fleet's Realtime crosses nodes on NATS, connected in the background: the node serves without it.
  const bus = config.natsServers && new NatsBus({ servers: config.natsServers, nodeId: directory.nodeId })
  bus?.start()
  const realtime = new RealtimeHub({
    nodeId: directory.nodeId,
    bus,
    // Private channels' checks wait on PostgreSQL on this thread, on two connections per project at most, in the node's budget.
    authorization: new RealtimeAuthorization(
      new ProjectPools({ maxConnections: defaultServerBudget, poolSize: 2, idleMillis: config.idleConnectionMillis, applicationName: 'baseplane realtime', budget: connectionBudget }),
    ),
    nodes: () => fleet.nodes,
  })
  const metrics = new PlatformMetrics({ figures, dispatcher, budget: budgetView, httpEngine: engine, realtime, realtimeBus: bus })
  const routes = platformRoutes(
    controlPlane,
    addressing,
    adminToken,
    {
      mail: { smtpUrl: config.smtpUrl, from: config.mailFrom },
      push: { fcmTokenUrl: config.push.fcmTokenUrl },
      recentFigures: (ref) => figures.recent(ref),
      adminTokenAt: localAdminToken(config).source,
      // The dashboard's REST tab sends its requests through this node's data plane, as an app's arrive.
      dataPlane: async (request) => dataPlane.handle(request),
      realtimeFigures: (ref) => {
        const counters = realtime.limits.peek(ref)
        return { connections: counters?.connections ?? 0, messages: counters?.messages ?? 0 }
      },
    },
    [recentFiguresRoute(figures, controlPlane)],
  )
  const scrape = metricsRoute(metrics, adminToken)
  const lifecycle = startNodeLifecycle({ config: config.lifecycle, databaseUrl, controlPlane })
  // Postgres Changes and broadcasts from SQL: one change reader per project with channels, across the fleet.
  const changes = new ChangeFeed(realtime, (feed) =>
    startChangeReaders({ catalogueUrl: databaseUrl, defaultServerUrl: databaseUrl, nodeId: directory.nodeId, budget: { buffer: connectionBudget, defaultServerBudget } }, { batch: (b) => feed.onBatch(b), status: (s) => feed.onStatus(s) }),
  )
  realtime.changes = changes
  const dataPlane = new DataPlane({
    config,
    directory,
    gate: new Gate(),
    throttle,
    dispatcher,
    platformRoutes: async (request) => (await scrape(request)) ?? (await routes(request)),
    version: VERSION,
    health,
    figures,
    activeUsers,
    activity: lifecycle.activity,
    waker: lifecycle.waker,
    requestLog: config.requestLog ? writeRequestLog : undefined,
    realtime,
  })
  // A project suspended, paused or gone closes its sockets here; one changed otherwise goes on with its new record.
  directory.onInvalidated((ref) => {
    if (!dataPlane.realtime.serves(ref)) return
    directory.get(ref).then(
      (fresh) => dataPlane.realtime.projectChanged(ref, fresh),
      () => {},
    )
  })
  const server = await engine.start(dataPlane, config.host, config.port).catch(async (error: unknown) => {
    await bus?.close()
    throw error
  })
  // One sending actor per push-enabled project across all nodes (a lease in the catalogue), on a
  // thread of its own: sending must not take the main thread's time from routing.
  const pushActors = config.push.actors
    ? await startPushActorThread({
        catalogueUrl: databaseUrl,
        defaultServerUrl: databaseUrl,
        budget: { buffer: connectionBudget, defaultServerBudget },
        endpoints: { apnsUrl: config.push.apnsUrl, fcmUrl: config.push.fcmUrl, fcmTokenUrl: config.push.fcmTokenUrl },
      })
    : undefined
  if (pushActors) metrics.watchPushActors(pushActors)
  const usage =
    activeUsers &&
    startNodeUsage({
      config: config.usage,
      databaseUrl,
      figures,
      activeUsers,
      controlPlane,
      nodeId: directory.nodeId,
      pushDeliveries: pushActors && (async () => (await pushActors.snapshot(USAGE_SNAPSHOT_TIMEOUT_MS))?.pushDeliveries),
      realtime: () =>
        [...realtime.limits.entries()].map(([ref, counters]) => ({
          ref,
          messages: counters.messages,
          takePeak: () => {
            const peak = counters.peakConnections
            counters.resetPeak()
            return peak
          },
        })),
    })
  let stopped: Promise<void> | undefined
  return {
    port: server.port,
    httpEngine: engine,
    realtimeChanges: changes,
    databaseUrl,
    adminToken,
    controlPlane,
    dataPlane,
    throttle,
    directory,
    dispatcher,
    usage: usage?.recorder,
    lifecycle,
    fleetNodes: () => fleet.nodes,
    leaving: () => health.leaving(),
    stop: (graceMillis = 0) =>
      (stopped ??= (async () => {
        await server.close(graceMillis)
        // Its sockets are closed: the other nodes are told its presences left, then the bus closes.
        realtime.close()
        await bus?.close()
        upgrades.stop()
        // No request is in flight: the sweep and the outbox stop, and the projects this node served are written.
        await lifecycle.stop()
        await dataPlane.close()
        await changes.close()
        await health.close()
        await pushActors?.stop()
        // Nothing is counted any more (no request in flight, no push sending): what the node holds is written.
        await usage?.stop(pushActors?.lastSnapshot()?.pushDeliveries)
        await metrics.close()
        await dispatcher.close()
        // After the workers (their last answers may record failures), before the catalogue pool ends.
        await throttle.close()
        fleet.stop()
        await directory.close()
        await controlPlane.close()
      })()),
  }
}
