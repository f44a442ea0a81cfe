// The change readers of one node, on their thread (reader-thread.ts). The main
// thread says which projects have sockets here (`want`, `unwant`); for each,
// this node tries to take the project's lease in the catalogue
// (baseplane.realtime_leases, kept by push's LeaseKeeper), and runs the
// project's reader while it holds it: one reader per project across the
// fleet, replaced within leaseMs + scanMs when its node dies. A project no
// node wants has no lease taken, so no replication connection and no slot.
// A reader's replication connection is one unit of its server's connection
// budget (lib/db/connection-budget.ts), taken before it connects and given
// back once it has closed, as push's sender does for its connections.
import pg from 'pg'
import { ConnectionBudget } from '../../../lib/db/connection-budget.ts'
import { adminUrlFor } from '../../../lib/db/server-url.ts'
import { boundPool, PLATFORM_POOL_SETTINGS } from '../../../lib/db/round-trip-deadline.ts'
import { LEASE_DEFAULTS, LeaseKeeper, type LeaseTiming } from '../../../lib/leases/lease-keeper.ts'
import { REALTIME_LEASES } from './lease-store.ts'
import type { ReaderEvents } from './project-reader.ts'
import { ProjectReader } from './project-reader.ts'

export interface ReaderHostOptions {
  catalogueUrl: string
  /** The default server's admin URL: a project placed on no other server is there. */
  defaultServerUrl: string
  nodeId: string
  lease?: Partial<LeaseTiming>
  /**
   * The process's connection budget, so a reader's replication connection counts
   * with the request pools'; the default server's budget is `defaultServerBudget`.
   * Without it the readers count alone.
   */
  budget?: { buffer: SharedArrayBuffer; defaultServerBudget: number }
}

/** How long a reader waits for room in its server's budget before it tries again later (as a pool's request would). */
const RESERVE_TIMEOUT_MS = 5000

/** Where a reader connects, and the unit of its server's budget it holds while connected. */
export interface ReaderConnection {
  url: string
  /** Gives the unit back, once, after the connection has closed (project-reader.ts calls it once). */
  release(): void
}

export class ReaderHost {
  readonly #options: ReaderHostOptions
  readonly #catalogue: pg.Pool
  readonly #leases: LeaseKeeper
  readonly #readers = new Map<string, { generation: string; reader: ProjectReader }>()
  readonly #events: ReaderEvents
  readonly #budget: ConnectionBudget | undefined

  constructor(options: ReaderHostOptions, events: ReaderEvents) {
    this.#options = options
    this.#events = events
    this.#budget = options.budget && new ConnectionBudget(options.budget.buffer)
    this.#catalogue = boundPool(new pg.Pool({ connectionString: options.catalogueUrl, max: 2, application_name: 'baseplane-realtime-leases', ...PLATFORM_POOL_SETTINGS }))
    this.#catalogue.on('error', () => {})
    this.#leases = new LeaseKeeper(this.#catalogue, options.nodeId, { ...LEASE_DEFAULTS, ...options.lease }, {
      taken: (ref, generation) => this.#taken(ref, generation),
      lost: (ref, generation) => void this.#stopReader(ref, generation),
    }, REALTIME_LEASES)
  }

  start(): void {
    this.#leases.start()
  }

  want(ref: string): void {
    this.#leases.want(ref)
  }

  unwant(ref: string): void {
    this.#leases.unwant(ref)
    const running = this.#readers.get(ref)
    if (running) void this.#stopReader(ref, running.generation).then(() => this.#leases.release(ref, running.generation))
  }

  async stop(): Promise<void> {
    await this.#leases.stop()
    await Promise.all([...this.#readers].map(async ([ref, { generation }]) => {
      await this.#stopReader(ref, generation)
      await this.#leases.release(ref, generation)
    }))
    await this.#catalogue.end().catch(() => {})
  }

  #taken(ref: string, generation: string): void {
    const before = this.#readers.get(ref)
    if (before?.generation === generation) return
    if (before) void before.reader.stop()
    const reader = new ProjectReader(ref, () => this.#connectionOf(ref), this.#events)
    this.#readers.set(ref, { generation, reader })
    reader.start()
  }

  async #stopReader(ref: string, generation: string): Promise<void> {
    const running = this.#readers.get(ref)
    if (!running || running.generation !== generation) return
    this.#readers.delete(ref)
    await running.reader.stop()
    this.#events.status({ ref, state: 'stopped' })
  }

  /** The project database's admin URL, read anew at every start (the project may have moved), with a unit of its server's budget. */
  async #connectionOf(ref: string): Promise<ReaderConnection> {
    const { rows } = await this.#catalogue.query<{ db_name: string; admin_url: string | null; connection_budget: number | null }>({
      text: 'select p.db_name, s.admin_url, s.connection_budget from baseplane.projects p left join baseplane.db_servers s on s.id = p.db_server where p.ref = $1',
      values: [ref],
    })
    const row = rows[0]
    if (!row) throw new Error(`project ${ref} is not in the catalogue`)
    const url = adminUrlFor(row.admin_url ?? this.#options.defaultServerUrl, row.db_name)
    if (this.#budget === undefined) return { url, release: () => {} }
    const { hostname, port } = new URL(url)
    const server = this.#budget.server(`${hostname}:${port || '5432'}`)
    await server.acquire(row.connection_budget ?? this.#options.budget!.defaultServerBudget, RESERVE_TIMEOUT_MS, async () => false)
    return { url, release: () => server.release() }
  }
}
