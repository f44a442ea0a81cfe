// A node's part in suspension, pause and the operator's events (issue 27 items
// 4 and 5): writing which projects it served (data-plane/request-activity.ts),
// its turn at the pause sweep when BASEPLANE_PAUSE_IDLE_DAYS is set
// (control-plane/pause-sweep.ts, one node at a time), waking paused projects
// for their requests when BASEPLANE_WAKE_ON_REQUEST allows it
// (control-plane/suspension.ts wakeProject), and posting the events to the
// operator webhook when one is configured (control-plane/event-outbox.ts).
// None is on the request path but the wake, which a paused project's request
// asked for; each uses connections of its own.
import pg from 'pg'
import type { LifecycleConfig } from '../lib/config.ts'
import { log } from '../lib/log.ts'
import type { Waker } from '../data-plane/lifecycle-gate.ts'
import { RequestActivity } from '../data-plane/request-activity.ts'
import type { ControlPlane } from '../control-plane/control-plane.ts'
import { EventOutbox } from '../control-plane/event-outbox.ts'
import { pauseIdleProjects } from '../control-plane/pause-sweep.ts'
import { wakeProject } from '../control-plane/suspension.ts'

/** The activity writer's deadlines: a catalogue that hangs delays the write, never a request. */
const CONNECT_TIMEOUT_MS = 3000
const STATEMENT_TIMEOUT_MS = 10000

export interface NodeLifecycleOptions {
  config: LifecycleConfig
  databaseUrl: string
  controlPlane: ControlPlane
}

export interface NodeLifecycle {
  /** What the data plane tells of each request it lets through. */
  activity: RequestActivity
  /** Given to the data plane when paused projects wake on request. */
  waker: Waker | undefined
  /** Stops the sweep and the outbox, then writes what the activity holds (after the requests have stopped). */
  stop(): Promise<void>
}

export function startNodeLifecycle(options: NodeLifecycleOptions): NodeLifecycle {
  const { config, controlPlane } = options
  const pool = new pg.Pool({
    connectionString: options.databaseUrl,
    max: 1,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    query_timeout: STATEMENT_TIMEOUT_MS,
    application_name: 'baseplane-activity',
  })
  pool.on('error', () => {})
  const activity = new RequestActivity()
  activity.start(pool, config.activityFlushMillis)

  let sweep: NodeJS.Timeout | undefined
  let sweeping: Promise<unknown> | undefined
  const idleMillis = config.pauseIdleMillis
  if (idleMillis !== undefined) {
    sweep = setInterval(() => {
      sweeping ??= pauseIdleProjects(controlPlane, idleMillis)
        .catch((error: unknown) => log.info('could not sweep for idle projects; sweeping again later', { error: (error as Error).message }))
        .finally(() => (sweeping = undefined))
    }, config.pauseSweepMillis)
    sweep.unref()
  }

  const outbox = config.operatorWebhook && new EventOutbox(options.databaseUrl, config.operatorWebhook)
  outbox?.start()

  const waker: Waker | undefined = config.wakeOnRequest ? { wake: (ref) => wakeProject(controlPlane, ref), waitMillis: config.wakeWaitMillis } : undefined

  return {
    activity,
    waker,
    async stop() {
      clearInterval(sweep)
      await sweeping
      await outbox?.stop()
      await activity.stop()
      await pool.end().catch(() => {})
    },
  }
}
