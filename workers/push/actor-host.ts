// Runs in every data-plane process. For each push-enabled project it tries to
// claim the project's actor with a PostgreSQL advisory lock held on a
// dedicated connection to the project's database (so two nodes never both
// send for one project; the lock goes with the session if the node dies).
// The same connection LISTENs on baseplane_push to wake the actor. The
// catalogue's baseplane_project_changed channel brings plan changes and
// products switched on or off.
import pg from 'pg'
import { apiDatabaseOf, listProjects, readProject, type Plan, type ProjectRecord } from '../../lib/catalogue.ts'
import { log } from '../../lib/log.ts'
import { PushActor, type PushEndpoints } from './actor.ts'
import { sharedApnsTokens, type ApnsTokens } from './providers/apns-token.ts'

/** In-flight deliveries per project, by plan: a larger plan sends more at once. */
export const PLAN_CONCURRENCY: Record<Plan, number> = { free: 32, plus: 128, pro: 512, business: 1024 }

export interface PushActorHostOptions {
  catalogueUrl: string
  defaultServerUrl: string
  endpoints?: PushEndpoints
  /** Overrides of PLAN_CONCURRENCY (benchmarks, tests). */
  concurrency?: Partial<Record<Plan, number>>
  /** How often a node that lost the race tries the lock again (default 5 s). */
  claimRetryMs?: number
  /** Polling backstop of each actor (default 30 s); NOTIFY is only a hint. */
  pollIntervalMs?: number
  /** Tests shrink retry delays by this factor (default 1). */
  retryDelayScale?: number
  batchSize?: number
  tokens?: ApnsTokens
  /** Called with the refs this host sends for whenever that list changes (the actor thread reports it). */
  onClaimsChanged?: (refs: string[]) => void
}

export interface PushActorHost {
  stop(): Promise<void>
  /** Refs whose actor runs in this host (tests, status pages). */
  claimed(): string[]
}

// One key per project database: advisory locks are scoped to the database.
const LOCK_SQL = `select pg_try_advisory_lock(hashtext('baseplane.push.actor')) as locked`
const KEEPALIVE_MS = 30000

interface Slot {
  project: ProjectRecord
  client?: pg.Client
  pool?: pg.Pool
  actor?: PushActor
  timer?: NodeJS.Timeout
  keepalive?: NodeJS.Timeout
  busy: Promise<void>
  closed: boolean
}

function sameDatabase(a: ProjectRecord, b: ProjectRecord): boolean {
  return a.dbHost === b.dbHost && a.dbPort === b.dbPort && a.dbName === b.dbName && a.dbApiRole === b.dbApiRole && a.dbApiPassword === b.dbApiPassword
}

export async function startPushActorHost(options: PushActorHostOptions): Promise<PushActorHost> {
  const concurrency = { ...PLAN_CONCURRENCY, ...options.concurrency }
  const claimRetryMs = options.claimRetryMs ?? 5000
  const tokens = options.tokens ?? sharedApnsTokens
  const slots = new Map<string, Slot>()
  const catalogue = new pg.Pool({ connectionString: options.catalogueUrl, max: 2, application_name: 'baseplane-push-host' })
  catalogue.on('error', () => {})
  let listener: pg.Client | undefined
  let stopping = false
  let relisten: NodeJS.Timeout | undefined

  const claimed = () => [...slots.values()].filter((s) => s.actor).map((s) => s.project.ref)
  const claimsChanged = () => options.onClaimsChanged?.(claimed())

  const serialize = (slot: Slot, work: () => Promise<void>) => {
    slot.busy = slot.busy.then(work).catch((err) => log.error('push actor host', err, { ref: slot.project.ref }))
    return slot.busy
  }

  async function release(slot: Slot): Promise<void> {
    clearTimeout(slot.timer)
    clearInterval(slot.keepalive)
    slot.timer = undefined
    slot.keepalive = undefined
    const { actor, client, pool } = slot
    slot.actor = undefined
    slot.client = undefined
    slot.pool = undefined
    if (actor) claimsChanged()
    await actor?.stop().catch(() => {})
    await pool?.end().catch(() => {})
    // Ending the session releases the advisory lock.
    await client?.end().catch(() => {})
  }

  function retryLater(slot: Slot): void {
    if (slot.closed || stopping) return
    clearTimeout(slot.timer)
    slot.timer = setTimeout(() => void serialize(slot, () => tryClaim(slot)), claimRetryMs)
  }

  async function tryClaim(slot: Slot): Promise<void> {
    if (slot.closed || stopping || slot.actor) return
    const db = apiDatabaseOf(slot.project)
    const config = { host: db.host, port: db.port, database: db.database, user: db.user, password: db.password }
    try {
      if (!slot.client) {
        const client = new pg.Client({ ...config, application_name: 'baseplane-push-lock' })
        client.on('error', (err) => {
          // Losing the lock session loses the lock: stop sending at once, then try again.
          if (slot.client !== client) return
          log.error('push actor lock connection lost', err, { ref: slot.project.ref })
          void serialize(slot, async () => {
            await release(slot)
            retryLater(slot)
          })
        })
        await client.connect()
        slot.client = client
      }
      const { rows } = await slot.client.query<{ locked: boolean }>(LOCK_SQL)
      if (!rows[0]?.locked) return retryLater(slot)
      const client = slot.client
      await client.query('listen baseplane_push')
      // One connection per batch in flight (each holds its claim's transaction), plus one for the loop.
      const pool = new pg.Pool({ ...config, max: 8, application_name: 'baseplane-push-actor' })
      pool.on('error', () => {})
      slot.pool = pool
      const project = slot.project
      const actor = new PushActor({
        ref: project.ref,
        plan: project.plan,
        concurrency: concurrency[project.plan],
        pool,
        endpoints: options.endpoints ?? {},
        tokens,
        batchSize: options.batchSize,
        pollIntervalMs: options.pollIntervalMs,
        retryDelayScale: options.retryDelayScale,
        onError: (message, err) => log.error(message, err, { ref: project.ref }),
      })
      client.on('notification', (n) => {
        if (n.channel === 'baseplane_push' && slot.actor === actor) actor.notify(n.payload ?? '')
      })
      slot.actor = actor
      slot.keepalive = setInterval(() => {
        client.query('select 1').catch(() => {})
      }, KEEPALIVE_MS)
      slot.keepalive.unref()
      await actor.start((err) => {
        log.error('push actor failed', err, { ref: project.ref })
        void serialize(slot, async () => {
          if (slot.actor !== actor) return
          await release(slot)
          retryLater(slot)
        })
      })
      log.info('push actor claimed', { ref: project.ref, plan: project.plan })
      claimsChanged()
    } catch (err) {
      if (slot.closed || stopping) return
      log.error('push actor claim failed', err, { ref: slot.project.ref })
      await release(slot)
      retryLater(slot)
    }
  }

  function track(project: ProjectRecord): void {
    const slot = slots.get(project.ref)
    if (!project.pushEnabled) {
      if (slot) forget(slot)
      return
    }
    if (!slot) {
      const created: Slot = { project, busy: Promise.resolve(), closed: false }
      slots.set(project.ref, created)
      void serialize(created, () => tryClaim(created))
      return
    }
    const previous = slot.project
    slot.project = project
    void serialize(slot, async () => {
      if (!sameDatabase(previous, project)) {
        await release(slot)
        await tryClaim(slot)
      } else if (slot.actor && previous.plan !== project.plan) {
        await slot.actor.setPlan(project.plan, concurrency[project.plan])
      }
    })
  }

  function forget(slot: Slot): void {
    slots.delete(slot.project.ref)
    slot.closed = true
    void serialize(slot, () => release(slot))
  }

  async function listen(): Promise<void> {
    const client = new pg.Client({ connectionString: options.catalogueUrl, application_name: 'baseplane-push-host' })
    client.on('error', () => {
      if (listener !== client || stopping) return
      listener = undefined
      relisten = setTimeout(() => void listen().catch(() => {}), 1000)
    })
    client.on('notification', (n) => {
      const ref = n.payload
      if (!ref) return
      readProject(catalogue, ref, options.defaultServerUrl)
        .then((project) => {
          if (project) track(project)
          else {
            const slot = slots.get(ref)
            if (slot) forget(slot)
          }
        })
        .catch((err) => log.error('push actor host: catalogue read failed', err, { ref }))
    })
    await client.connect()
    await client.query('listen baseplane_project_changed')
    listener = client
    // After (re)listening, a full pass catches changes made while not listening.
    const projects = await listProjects(catalogue, options.defaultServerUrl)
    const present = new Set(projects.map((p) => p.ref))
    for (const project of projects) track(project)
    for (const [ref, slot] of slots) if (!present.has(ref)) forget(slot)
  }

  await listen()

  return {
    claimed,
    async stop() {
      stopping = true
      clearTimeout(relisten)
      const all = [...slots.values()]
      slots.clear()
      for (const slot of all) slot.closed = true
      await Promise.all(all.map((slot) => serialize(slot, () => release(slot))))
      await listener?.end().catch(() => {})
      await catalogue.end().catch(() => {})
    },
  }
}
