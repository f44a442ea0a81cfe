// A node's part in the fleet's usage (issue 27 item 1): its recorder
// (data-plane/usage-recorder.ts), writing what the node counted once a flush
// interval, and its turn at the fleet's upkeep (control-plane/usage-upkeep.ts:
// rollups, retention, database sizes, each claimed by one node a period).
// Neither is on the request path; both use connections of their own, with
// deadlines, so a catalogue that hangs delays usage, never a request.
import pg from 'pg'
import type { UsageConfig } from '../lib/config.ts'
import { incidents } from '../lib/db/database-errors.ts'
import type { ActiveUsers } from '../lib/metrics/active-users.ts'
import type { ProjectFigures } from '../lib/metrics/project-figures.ts'
import type { TallyEntry } from '../lib/metrics/thread-tallies.ts'
import { UsageRecorder, type UsageRecorderOptions } from '../data-plane/usage-recorder.ts'
import type { ControlPlane } from '../control-plane/control-plane.ts'
import { runDueUsageJobs } from '../control-plane/usage-upkeep.ts'

/** How long the usage writer waits for a catalogue connection, and for its statement. */
const CONNECT_TIMEOUT_MS = 3000
const STATEMENT_TIMEOUT_MS = 10000
/** How the incident log names the upkeep's catalogue. */
const JOBS = 'the catalogue (usage jobs)'
/** How often a node asks whether an upkeep job is due (at most: a shorter flush interval asks as often). */
const UPKEEP_TICK_MS = 60000

export interface NodeUsageOptions {
  config: UsageConfig
  databaseUrl: string
  figures: ProjectFigures
  activeUsers: ActiveUsers
  controlPlane: ControlPlane
  /** This node's id (baseplane.nodes), the upkeep jobs' holder. */
  nodeId: string
  /** The push actor thread's delivery tally, when this node runs one. */
  pushDeliveries?: () => Promise<TallyEntry[] | undefined>
  /** Realtime per project on this node (UsageRecorderOptions.realtime). */
  realtime?: UsageRecorderOptions['realtime']
}

export interface NodeUsage {
  recorder: UsageRecorder
  /** Stops the upkeep, then writes what the node holds: after its requests and its push actor thread have stopped (`finalPush`, the thread's last tally). */
  stop(finalPush?: TallyEntry[]): Promise<void>
}

export function startNodeUsage(options: NodeUsageOptions): NodeUsage {
  const { config } = options
  // One connection, kept: a write a minute would otherwise open one a minute.
  const pool = new pg.Pool({
    connectionString: options.databaseUrl,
    max: 1,
    idleTimeoutMillis: 0,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    query_timeout: STATEMENT_TIMEOUT_MS,
    application_name: 'baseplane-usage',
  })
  pool.on('error', () => {})
  const recorder = new UsageRecorder({
    figures: options.figures,
    activeUsers: options.activeUsers,
    catalogue: pool,
    flushMillis: config.flushMillis,
    pushDeliveries: options.pushDeliveries,
    realtime: options.realtime,
  })
  recorder.start()
  let upkeep: Promise<unknown> | undefined
  const timer = setInterval(() => {
    upkeep ??= runDueUsageJobs(options.controlPlane, options.nodeId, config)
      .then(
        () => incidents.recovered(JOBS),
        // Asked again at the next tick; one log line per outage.
        (error: unknown) => incidents.failed(JOBS, error),
      )
      .finally(() => {
        upkeep = undefined
      })
  }, Math.min(UPKEEP_TICK_MS, config.flushMillis))
  timer.unref()
  return {
    recorder,
    async stop(finalPush) {
      clearInterval(timer)
      await upkeep
      await recorder.stop(finalPush)
      await pool.end().catch(() => {})
    },
  }
}
