// How many data-plane processes share the fleet's connection figures. Every
// figure PostgreSQL enforces per server (a server's budget) or per role (a
// plan's CONNECTION LIMIT) is the fleet's, and each node takes its part:
// figure / live nodes (lib/db/connection-budget.ts, lib/db/project-pool.ts).
// Live nodes are the rows of baseplane.nodes whose heartbeat (every 2 s, by
// each node's project directory) is recent; the count is read on the same
// beat and stored where every worker thread reads it.
//
// A node that joins takes its part at once, while the others give theirs back
// only as their idle connections close (BASEPLANE_IDLE_CONNECTION_MS): for that
// long the fleet may hold up to one node's part more than the figure, which
// the server budget's reserve and the role limit's wait absorb. A node cut off
// from the catalogue keeps the count it last read.
import type pg from 'pg'
import { LIVE_NODE_SECONDS } from '../lib/catalogue.ts'
import { log } from '../lib/log.ts'

const READ_EVERY_MS = 2000

export class FleetSize {
  readonly #catalogue: pg.Pool
  readonly #apply: (nodes: number) => void
  #nodes = 1
  #timer: NodeJS.Timeout | undefined
  #reading = false

  /** `apply` is called with the live node count whenever it changes (and once at start). */
  constructor(catalogue: pg.Pool, apply: (nodes: number) => void) {
    this.#catalogue = catalogue
    this.#apply = apply
  }

  get nodes(): number {
    return this.#nodes
  }

  async start(): Promise<void> {
    await this.#read()
    this.#apply(this.#nodes)
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
        text: `select count(*)::int as nodes from baseplane.nodes where heartbeat_at > now() - make_interval(secs => $1)`,
        values: [LIVE_NODE_SECONDS],
      })
      // This node's own row appears with its first acknowledgement: it counts from the start.
      const nodes = Math.max(1, rows[0]!.nodes)
      if (nodes === this.#nodes) return
      log.info('the fleet changed size; connection figures are divided anew', { from: this.#nodes, nodes })
      this.#nodes = nodes
      this.#apply(nodes)
    } catch {
      // The catalogue is away: the last count stands (the directory reports the outage).
    } finally {
      this.#reading = false
    }
  }
}
