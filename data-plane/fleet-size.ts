// How many data-plane processes share the fleet's connection figures. A
// server's budget is the fleet's, and each node takes budget / live nodes
// (lib/db/connection-budget.ts reads the count this keeps in the shared
// buffer). A plan's connection figure is one node's, so each project's api
// role is allowed the figure times the live nodes, capped by its server's
// budget (lib/plans.ts apiRoleLimit; the control plane alters the roles).
// Live nodes are the rows of baseplane.nodes whose heartbeat (every 2 s, by
// each node's project directory) is recent; the count is read on that beat.
//
// A node that joins takes its part at once, while the others give theirs back
// only as their idle connections close (BASEPLANE_IDLE_CONNECTION_MS): for that
// long the fleet may hold up to one node's part more than the budget, which
// the servers' reserve absorbs; and until the roles are raised, a joining
// node's requests wait for a connection rather than fail. A node cut off from
// the catalogue keeps the count it last read.
import type pg from 'pg'
import { LIVE_NODE_SECONDS } from '../lib/catalogue.ts'
import { log } from '../lib/log.ts'

const READ_EVERY_MS = 2000
/** Roles are sized again this often though the count did not change (a node that sized them may have died midway). */
const RESIZE_EVERY_MS = 60_000

export interface FleetSizeOptions {
  /** This node's row in baseplane.nodes: it counts from its start, before its first heartbeat. */
  selfId: string
  /** Called with the live node count whenever it changes (and once at start). */
  apply(nodes: number): void
  /** Brings the roles' limits to the count (the control plane's sizeRoleLimits): on a change, and every minute. */
  resize(nodes: number): Promise<void>
}

export class FleetSize {
  readonly #catalogue: pg.Pool
  readonly #options: FleetSizeOptions
  #nodes = 1
  #timer: NodeJS.Timeout | undefined
  #reading = false
  #resizedAt = 0

  constructor(catalogue: pg.Pool, options: FleetSizeOptions) {
    this.#catalogue = catalogue
    this.#options = options
  }

  get nodes(): number {
    return this.#nodes
  }

  async start(): Promise<void> {
    await this.#read()
    this.#options.apply(this.#nodes)
    this.#timer = setInterval(() => void this.#read(), READ_EVERY_MS)
    this.#timer.unref()
  }

  stop(): void {
    clearInterval(this.#timer)
  }

  async #read(): Promise<void> {
    if (this.#reading) return
    this.#reading = true
    try {
      const { rows } = await this.#catalogue.query<{ nodes: number }>({
        name: 'baseplane_live_nodes',
        text: `select count(*)::int + 1 as nodes from baseplane.nodes where heartbeat_at > now() - make_interval(secs => $1) and id <> $2`,
        values: [LIVE_NODE_SECONDS, this.#options.selfId],
      })
      const nodes = rows[0]!.nodes
      const changed = nodes !== this.#nodes
      if (changed) {
        log.info('the fleet changed size; connection figures are sized anew', { from: this.#nodes, nodes })
        this.#nodes = nodes
        this.#options.apply(nodes)
      }
      if (changed || Date.now() - this.#resizedAt >= RESIZE_EVERY_MS) {
        this.#resizedAt = Date.now()
        await this.#options.resize(nodes).catch((error: unknown) => log.info('could not size the roles for the fleet; trying again later', { nodes, error: (error as Error).message }))
      }
    } catch {
      // The catalogue is away: the last count stands (the directory reports the outage).
    } finally {
      this.#reading = false
    }
  }
}
