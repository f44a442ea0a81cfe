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
import { PushActor } from './actor.ts'
import { sharedApnsTokens, type ApnsTokens } from './providers/apns-token.ts'
import type { PushEndpoints } from './providers/registry.ts'

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
  const host = new ActorHost(options)
  await host.listen()
  return { claimed: () => host.claimed(), stop: () => host.stop() }
}

/** The slots of every push-enabled project, kept in step with the catalogue. */
class ActorHost {
  readonly #options: PushActorHostOptions
  readonly #concurrency: Record<Plan, number>
  readonly #claimRetryMs: number
  readonly #tokens: ApnsTokens
  readonly #slots = new Map<string, Slot>()
  readonly #catalogue: pg.Pool
  #listener: pg.Client | undefined
  #stopping = false
  #relisten: NodeJS.Timeout | undefined

  constructor(options: PushActorHostOptions) {
    this.#options = options
    this.#concurrency = { ...PLAN_CONCURRENCY, ...options.concurrency }
    this.#claimRetryMs = options.claimRetryMs ?? 5000
    this.#tokens = options.tokens ?? sharedApnsTokens
    this.#catalogue = new pg.Pool({ connectionString: options.catalogueUrl, max: 2, application_name: 'baseplane-push-host' })
    this.#catalogue.on('error', () => {})
  }

  claimed(): string[] {
    return [...this.#slots.values()].filter((s) => s.actor).map((s) => s.project.ref)
  }

  async stop(): Promise<void> {
    this.#stopping = true
    clearTimeout(this.#relisten)
    const all = [...this.#slots.values()]
    this.#slots.clear()
    for (const slot of all) slot.closed = true
    await Promise.all(all.map((slot) => this.#serialize(slot, () => this.#release(slot))))
    await this.#listener?.end().catch(() => {})
    await this.#catalogue.end().catch(() => {})
  }

  /** LISTENs on the catalogue's project changes, then tracks every project (again after a lost connection). */
  async listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.#options.catalogueUrl, application_name: 'baseplane-push-host' })
    client.on('error', () => {
      if (this.#listener !== client || this.#stopping) return
      this.#listener = undefined
      this.#relisten = setTimeout(() => void this.listen().catch(() => {}), 1000)
    })
    client.on('notification', (n) => {
      if (n.payload) this.#projectChanged(n.payload)
    })
    await client.connect()
    await client.query('listen baseplane_project_changed')
    this.#listener = client
    // After (re)listening, a full pass catches changes made while not listening.
    const projects = await listProjects(this.#catalogue, this.#options.defaultServerUrl)
    const present = new Set(projects.map((p) => p.ref))
    for (const project of projects) this.#track(project)
    for (const [ref, slot] of this.#slots) if (!present.has(ref)) this.#forget(slot)
  }

  #projectChanged(ref: string): void {
    readProject(this.#catalogue, ref, this.#options.defaultServerUrl)
      .then((project) => {
        if (project) this.#track(project)
        else {
          const slot = this.#slots.get(ref)
          if (slot) this.#forget(slot)
        }
      })
      .catch((err) => log.error('push actor host: catalogue read failed', err, { ref }))
  }

  #claimsChanged(): void {
    this.#options.onClaimsChanged?.(this.claimed())
  }

  /** Runs a slot's changes one after another: a claim, a release and a plan change never overlap. */
  #serialize(slot: Slot, work: () => Promise<void>): Promise<void> {
    slot.busy = slot.busy.then(work).catch((err) => log.error('push actor host', err, { ref: slot.project.ref }))
    return slot.busy
  }

  /** Starts, updates or drops a project's slot after the catalogue changed. */
  #track(project: ProjectRecord): void {
    const slot = this.#slots.get(project.ref)
    if (!project.pushEnabled) {
      if (slot) this.#forget(slot)
      return
    }
    if (!slot) {
      const created: Slot = { project, busy: Promise.resolve(), closed: false }
      this.#slots.set(project.ref, created)
      void this.#serialize(created, () => this.#tryClaim(created))
      return
    }
    const previous = slot.project
    slot.project = project
    void this.#serialize(slot, async () => {
      if (!sameDatabase(previous, project)) {
        await this.#release(slot)
        await this.#tryClaim(slot)
      } else if (slot.actor && previous.plan !== project.plan) {
        await slot.actor.setPlan(project.plan, this.#concurrency[project.plan])
      }
    })
  }

  #forget(slot: Slot): void {
    this.#slots.delete(slot.project.ref)
    slot.closed = true
    void this.#serialize(slot, () => this.#release(slot))
  }

  #retryLater(slot: Slot): void {
    if (slot.closed || this.#stopping) return
    clearTimeout(slot.timer)
    slot.timer = setTimeout(() => void this.#serialize(slot, () => this.#tryClaim(slot)), this.#claimRetryMs)
  }

  /** Stops the slot's actor and ends its connections (ending the lock session releases the lock). */
  async #release(slot: Slot): Promise<void> {
    clearTimeout(slot.timer)
    clearInterval(slot.keepalive)
    slot.timer = undefined
    slot.keepalive = undefined
    const { actor, client, pool } = slot
    slot.actor = undefined
    slot.client = undefined
    slot.pool = undefined
    if (actor) this.#claimsChanged()
    await actor?.stop().catch(() => {})
    await pool?.end().catch(() => {})
    await client?.end().catch(() => {})
  }

  /** Takes the project's advisory lock if it is free, and then runs its actor; else tries again later. */
  async #tryClaim(slot: Slot): Promise<void> {
    if (slot.closed || this.#stopping || slot.actor) return
    const db = apiDatabaseOf(slot.project)
    const config = { host: db.host, port: db.port, database: db.database, user: db.user, password: db.password }
    try {
      slot.client ??= await this.#lockConnection(slot, config)
      const { rows } = await slot.client.query<{ locked: boolean }>(LOCK_SQL)
      if (!rows[0]?.locked) return this.#retryLater(slot)
      await this.#startActor(slot, slot.client, config)
    } catch (err) {
      if (slot.closed || this.#stopping) return
      log.error('push actor claim failed', err, { ref: slot.project.ref })
      await this.#release(slot)
      this.#retryLater(slot)
    }
  }

  /** The session that holds the lock; losing it loses the lock, so the actor stops at once and the claim starts over. */
  async #lockConnection(slot: Slot, config: pg.ClientConfig): Promise<pg.Client> {
    const client = new pg.Client({ ...config, application_name: 'baseplane-push-lock' })
    client.on('error', (err) => {
      if (slot.client !== client) return
      log.error('push actor lock connection lost', err, { ref: slot.project.ref })
      void this.#serialize(slot, async () => {
        await this.#release(slot)
        this.#retryLater(slot)
      })
    })
    await client.connect()
    return client
  }

  /** With the lock held on `client`: the actor, woken by NOTIFY on that session, and a keepalive for it. */
  async #startActor(slot: Slot, client: pg.Client, config: pg.PoolConfig): Promise<void> {
    await client.query('listen baseplane_push')
    // One connection per batch in flight (each holds its claim's transaction), plus one for the loop.
    const pool = new pg.Pool({ ...config, max: 8, application_name: 'baseplane-push-actor' })
    pool.on('error', () => {})
    slot.pool = pool
    const project = slot.project
    const options = this.#options
    const actor = new PushActor({
      ref: project.ref,
      plan: project.plan,
      concurrency: this.#concurrency[project.plan],
      pool,
      endpoints: options.endpoints ?? {},
      tokens: this.#tokens,
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
      void this.#serialize(slot, async () => {
        if (slot.actor !== actor) return
        await this.#release(slot)
        this.#retryLater(slot)
      })
    })
    log.info('push actor claimed', { ref: project.ref, plan: project.plan })
    this.#claimsChanged()
  }
}
