// Runs in every data-plane process. For each push-enabled project it tries to
// take the project's sending lease (lease-keeper.ts: a row in the catalogue
// that expires unless renewed), and runs the project's actor while it holds
// it, so two nodes never both send for one project and a node that dies,
// hangs or loses its network is replaced within leaseMs + scanMs. Only the
// holder connects to the project's database: one connection LISTENs on
// baseplane_push to wake the actor, and the actor's pool claims and settles.
// The catalogue's baseplane_project_changed channel brings plan changes,
// products switched on or off, and suspensions, pauses and resumes.
import { boundPool, PLATFORM_POOL_SETTINGS } from '../../lib/db/round-trip-deadline.ts'
import pg from 'pg'
import { listProjects, platformDatabaseOf, readProject, type Plan, type ProjectRecord } from '../../lib/catalogue.ts'
import { ConnectionBudget, type ServerBudget } from '../../lib/db/connection-budget.ts'
import { planLimits } from '../../lib/plans.ts'
import { pushDeliveriesCap, pushSettingsOf } from './install.ts'
import { log } from '../../lib/log.ts'
import { LeaseLostError, PushActor } from './actor.ts'
import { LEASE_DEFAULTS, LeaseKeeper, newNodeId, type LeaseTiming } from '../../lib/leases/lease-keeper.ts'
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
  /** How often the node looks for lapsed or free leases to take (default 2 s). */
  claimRetryMs?: number
  /** How long a lease lasts after each renewal (default 10 s). */
  leaseMs?: number
  /** How often the holder renews its leases (default 3 s; keep it well under leaseMs). */
  renewMs?: number
  /** This node's name in the leases and in its connections' application_name (default: pid, random, host name). */
  nodeId?: string
  /** Polling backstop of each actor (default 30 s); NOTIFY is only a hint. */
  pollIntervalMs?: number
  /** Tests shrink retry delays by this factor (default 1). */
  retryDelayScale?: number
  batchSize?: number
  tokens?: ApnsTokens
  /** Called with the refs this host sends for whenever that list changes (the actor thread reports it). */
  onClaimsChanged?: (refs: string[]) => void
  /**
   * The process's connection budget (lib/db/connection-budget.ts), so a sending
   * actor's connections count with the request pools'; the budget of the
   * default server is `defaultServerBudget`. Without it the actors count alone.
   */
  budget?: { buffer: SharedArrayBuffer; defaultServerBudget: number }
}

export interface PushActorHost {
  stop(): Promise<void>
  /** Refs whose actor runs in this host (tests, status pages). */
  claimed(): string[]
}

const KEEPALIVE_MS = 30000
/** How long the host waits before listening to the catalogue again after a failure. */
const RELISTEN_MS = 1000
/** How long an actor waits for room in its server's budget before it gives its lease up (taken again at a later scan). */
const RESERVE_TIMEOUT_MS = 5000

interface Slot {
  project: ProjectRecord
  /** The lease generation the actor runs under. */
  generation?: string
  listener?: pg.Client
  pool?: pg.Pool
  actor?: PushActor
  keepalive?: NodeJS.Timeout
  /** Units of the server's budget its connections hold. */
  units?: { server: ServerBudget; count: number }
  busy: Promise<void>
  closed: boolean
}

function sameDatabase(a: ProjectRecord, b: ProjectRecord): boolean {
  return a.dbHost === b.dbHost && a.dbPort === b.dbPort && a.dbName === b.dbName && a.dbApiRole === b.dbApiRole && a.dbApiPassword === b.dbApiPassword
}

export async function startPushActorHost(options: PushActorHostOptions): Promise<PushActorHost> {
  const host = new ActorHost(options)
  await host.keepListening()
  host.start()
  return { claimed: () => host.claimed(), stop: () => host.stop() }
}

/** The slots of every push-enabled project, kept in step with the catalogue. */
class ActorHost {
  readonly #options: PushActorHostOptions
  readonly #concurrency: Record<Plan, number>
  readonly #tokens: ApnsTokens
  readonly #slots = new Map<string, Slot>()
  readonly #catalogue: pg.Pool
  readonly #leasePool: pg.Pool
  readonly #leases: LeaseKeeper
  readonly #node: string
  readonly #budget: ConnectionBudget | undefined
  #listener: pg.Client | undefined
  #stopping = false
  #relisten: NodeJS.Timeout | undefined
  /** Since the catalogue stopped answering the host's listen, for one log line per outage. */
  #listenFailing = false

  constructor(options: PushActorHostOptions) {
    this.#options = options
    this.#concurrency = { ...PLAN_CONCURRENCY, ...options.concurrency }
    this.#tokens = options.tokens ?? sharedApnsTokens
    this.#node = options.nodeId ?? newNodeId()
    this.#budget = options.budget && new ConnectionBudget(options.budget.buffer)
    const timing: LeaseTiming = {
      leaseMs: options.leaseMs ?? LEASE_DEFAULTS.leaseMs,
      renewMs: options.renewMs ?? LEASE_DEFAULTS.renewMs,
      scanMs: options.claimRetryMs ?? LEASE_DEFAULTS.scanMs,
    }
    this.#catalogue = boundPool(new pg.Pool({ connectionString: options.catalogueUrl, max: 2, application_name: this.#appName('host'), ...PLATFORM_POOL_SETTINGS }))
    this.#catalogue.on('error', () => {})
    // Renewals, scans and the check before each batch: a hung catalogue fails them within renewMs.
    this.#leasePool = new pg.Pool({ connectionString: options.catalogueUrl, max: 2, query_timeout: timing.renewMs, application_name: this.#appName('lease') })
    this.#leasePool.on('error', () => {})
    this.#leasePool.on('connect', (client) => client.on('error', () => {}))
    this.#leases = new LeaseKeeper(this.#leasePool, this.#node, timing, {
      taken: (ref, generation) => this.#leaseTaken(ref, generation),
      lost: (ref, generation, why) => this.#leaseLost(ref, generation, why),
    })
  }

  /** The node's connections say whose they are (pg_stat_activity.application_name). */
  #appName(part: string): string {
    return `baseplane-push-${part} ${this.#node}`
  }

  start(): void {
    this.#leases.start()
  }

  claimed(): string[] {
    return [...this.#slots.values()].filter((s) => s.actor).map((s) => s.project.ref)
  }

  async stop(): Promise<void> {
    this.#stopping = true
    clearTimeout(this.#relisten)
    const all = [...this.#slots.values()]
    this.#slots.clear()
    for (const slot of all) {
      slot.closed = true
      this.#leases.unwant(slot.project.ref)
    }
    // Leases are renewed while the actors settle, then given up: the next node takes them at its next scan.
    await Promise.all(all.map((slot) => this.#serialize(slot, () => this.#release(slot))))
    await this.#leases.stop()
    await this.#listener?.end().catch(() => {})
    await this.#catalogue.end().catch(() => {})
    await this.#leasePool.end().catch(() => {})
  }

  /**
   * listen(), then again every RELISTEN_MS until it works: a catalogue away when the thread starts
   * (the embedded PostgreSQL restarting) or when the link is lost is waited for, never fatal.
   */
  async keepListening(): Promise<void> {
    try {
      await this.listen()
    } catch (error) {
      if (this.#stopping) return
      const client = this.#listener
      this.#listener = undefined
      await client?.end().catch(() => {})
      if (!this.#listenFailing) log.error('push actor host: the catalogue does not answer; listening again', error, { retryMs: RELISTEN_MS })
      this.#listenFailing = true
      this.#relisten = setTimeout(() => void this.keepListening(), RELISTEN_MS)
      return
    }
    if (this.#listenFailing) log.info('push actor host: listening to the catalogue again')
    this.#listenFailing = false
  }

  /** LISTENs on the catalogue's project changes, then tracks every project (again after a lost connection). */
  async listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.#options.catalogueUrl, application_name: this.#appName('host') })
    client.on('error', () => {
      if (this.#listener !== client || this.#stopping) return
      this.#listener = undefined
      this.#relisten = setTimeout(() => void this.keepListening(), RELISTEN_MS)
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

  /** Runs a slot's changes one after another: a start, a release and a plan change never overlap. */
  #serialize(slot: Slot, work: () => Promise<void>): Promise<void> {
    slot.busy = slot.busy.then(work).catch((err) => log.error('push actor host', err, { ref: slot.project.ref }))
    return slot.busy
  }

  /** Starts, updates or drops a project's slot after the catalogue changed. */
  #track(project: ProjectRecord): void {
    const slot = this.#slots.get(project.ref)
    // A suspended or paused project sends nothing: its actor stops and its queue waits in push.messages for the resume.
    if (!project.pushEnabled || project.state !== 'active') {
      if (slot) this.#forget(slot)
      return
    }
    if (!slot) {
      this.#slots.set(project.ref, { project, busy: Promise.resolve(), closed: false })
      this.#leases.want(project.ref)
      return
    }
    const previous = slot.project
    slot.project = project
    void this.#serialize(slot, async () => {
      if (!sameDatabase(previous, project)) {
        // The lease is given up with the old database's actor; it is taken again by the next scan.
        await this.#release(slot)
      } else if (slot.actor && (previous.plan !== project.plan || pushDeliveriesCap(previous) !== pushDeliveriesCap(project))) {
        await slot.actor.setPlan(pushSettingsOf(project), this.#concurrency[project.plan])
      }
    })
  }

  #forget(slot: Slot): void {
    this.#slots.delete(slot.project.ref)
    this.#leases.unwant(slot.project.ref)
    slot.closed = true
    void this.#serialize(slot, () => this.#release(slot))
  }

  #leaseTaken(ref: string, generation: string): void {
    const slot = this.#slots.get(ref)
    if (!slot || slot.closed || this.#stopping) {
      void this.#leases.release(ref, generation)
      return
    }
    void this.#serialize(slot, async () => {
      // A lease of an earlier take (lost since) may still have its actor: it stops first.
      if (slot.generation !== undefined && slot.generation !== generation) await this.#release(slot, false)
      await this.#startActor(slot, generation)
    })
  }

  #leaseLost(ref: string, generation: string, why: string): void {
    const slot = this.#slots.get(ref)
    if (!slot) return
    void this.#serialize(slot, async () => {
      if (slot.generation !== generation) return
      log.info('push actor lease lost; the actor stops', { ref, why })
      await this.#release(slot)
    })
  }

  /**
   * Stops the slot's actor, ends its connections, and gives its lease up (the
   * actor has settled what it could; another node may take over at once).
   * `giveUp` false: the lease was lost or replaced, there is nothing to give.
   */
  async #release(slot: Slot, giveUp = true): Promise<void> {
    clearInterval(slot.keepalive)
    slot.keepalive = undefined
    const { actor, listener, pool, generation } = slot
    slot.actor = undefined
    slot.listener = undefined
    slot.pool = undefined
    slot.generation = undefined
    if (actor) this.#claimsChanged()
    await actor?.stop().catch(() => {})
    await pool?.end().catch(() => {})
    await listener?.end().catch(() => {})
    const units = slot.units
    slot.units = undefined
    for (let i = 0; i < (units?.count ?? 0); i++) units!.server.release()
    if (generation !== undefined && giveUp) await this.#leases.release(slot.project.ref, generation)
  }

  /**
   * Takes `count` units of the server's budget for the actor's connections,
   * waiting (as a request does) while the node's share is spent; #release gives them back.
   */
  async #reserve(slot: Slot, server: string, serverBudget: number | undefined, count: number): Promise<void> {
    if (this.#budget === undefined) return
    const budget = this.#budget.server(server)
    const limit = serverBudget ?? this.#options.budget!.defaultServerBudget
    slot.units = { server: budget, count: 0 }
    for (let i = 0; i < count; i++) {
      await budget.acquire(limit, RESERVE_TIMEOUT_MS, async () => false)
      slot.units.count += 1
    }
  }

  /** With the lease held: the LISTEN connection, the actor's pool, the actor. */
  async #startActor(slot: Slot, generation: string): Promise<void> {
    if (slot.closed || this.#stopping || !this.#leases.valid(slot.project.ref, generation)) {
      await this.#leases.release(slot.project.ref, generation)
      return
    }
    slot.generation = generation
    const project = slot.project
    const ref = project.ref
    // The platform's login role: the actor reads provider keys, where owner code must never run (lib/db/platform-logins.ts).
    const db = platformDatabaseOf(project, 'platform')
    // Bounded connects and keep-alive, so a project server that dies or hangs is noticed in seconds.
    const config = { host: db.host, port: db.port, database: db.database, user: db.user, password: db.password, ...PLATFORM_POOL_SETTINGS }
    // The listener and the pool: the plan's figure, which the request pools' share of the role leaves free.
    const connections = Math.max(2, planLimits(project.plan).pushActorConnections)
    try {
      await this.#reserve(slot, `${db.host}:${db.port}`, project.dbServerBudget, connections)
      const listener = new pg.Client({ ...config, application_name: this.#appName('listen') })
      slot.listener = listener
      listener.on('error', (err) => {
        if (slot.listener !== listener) return
        log.error('push actor connection lost', err, { ref })
        void this.#serialize(slot, () => this.#release(slot))
      })
      await listener.connect()
      await listener.query('listen baseplane_push')
      const { leaseMs, renewMs } = this.#leases.timing
      // One connection per batch in flight (each holds its claim's transaction), plus one for the loop.
      // A claim whose holder stops renewing (frozen, cut off) ends with its transaction leaseMs after
      // the holder's last sign of life (the actor touches open batches every renewMs while it holds
      // the lease), so the rows are free when the next holder takes over.
      // Every round trip bounded (lib/db/round-trip-deadline.ts): a hung server fails the batch, whose claim PostgreSQL ends.
      const pool = boundPool(new pg.Pool({
        ...config,
        max: connections - 1,
        application_name: this.#appName('actor'),
        options: `-c idle_in_transaction_session_timeout=${leaseMs}`,
      }))
      // An idle connection's error; boundPool keeps a checked-out one's from throwing as an 'error' event.
      pool.on('error', () => {})
      slot.pool = pool
      const options = this.#options
      const actor = new PushActor({
        ref,
        settings: pushSettingsOf(project),
        concurrency: this.#concurrency[project.plan],
        pool,
        endpoints: options.endpoints ?? {},
        tokens: this.#tokens,
        batchSize: options.batchSize,
        pollIntervalMs: options.pollIntervalMs,
        retryDelayScale: options.retryDelayScale,
        lease: {
          valid: () => this.#leases.valid(ref, generation),
          verify: () => this.#leases.verify(ref, generation),
          touchMs: renewMs,
        },
        onError: (message, err) => log.error(message, err, { ref }),
      })
      listener.on('notification', (n) => {
        if (n.channel === 'baseplane_push' && slot.actor === actor) actor.notify(n.payload ?? '')
      })
      slot.actor = actor
      slot.keepalive = setInterval(() => {
        listener.query('select 1').catch(() => {})
      }, KEEPALIVE_MS)
      slot.keepalive.unref()
      await actor.start((err) => {
        if (err instanceof LeaseLostError) log.info('push actor lease lost; the actor stops', { ref, why: err.message })
        else log.error('push actor failed', err, { ref })
        void this.#serialize(slot, async () => {
          if (slot.actor !== actor) return
          await this.#release(slot)
        })
      })
      log.info('push actor claimed', { ref, plan: project.plan, generation })
      this.#claimsChanged()
    } catch (err) {
      if (slot.closed || this.#stopping) return this.#release(slot)
      // The lease is given up: this node or another takes it again at the next scan.
      log.error('push actor start failed', err, { ref })
      await this.#release(slot)
    }
  }
}
