// Whether a project's database answers, for its `{base_url}/health`. Load
// balancers and uptime checks poll that, often under load, so this mirrors the
// platform's /health (data-plane/platform-health.ts): one probe per project at
// a time, its result kept for a second, each probe bounded to a second. The
// probes run on pools of their own (project-pools.ts, one connection per
// project, closed after a few idle seconds): a project pool busy with requests
// is not a database that does not answer, and a probe never takes a request's
// connection.
import { PROBE_TIMING, probeFailure, type Probed, type ProbeTiming } from './probe-deadline.ts'
import { incidents, projectSource } from './database-errors.ts'
import { ProjectPools, type ProjectDatabase } from './project-pools.ts'

export interface ProbeOptions extends ProbeTiming {
  /** Probe connections idle this long are closed. */
  idleMillis: number
}

const DEFAULTS: ProbeOptions = { ...PROBE_TIMING, idleMillis: 5000 }
/** Results kept at most (one per project probed lately); older ones are swept past this. */
const KEPT = 1000

export class ProjectDatabaseProbe {
  readonly #options: ProbeOptions
  readonly #pools: ProjectPools
  readonly #last = new Map<string, Probed>()
  readonly #probing = new Map<string, Promise<boolean>>()

  constructor(options: Partial<ProbeOptions> = {}) {
    this.#options = { ...DEFAULTS, ...options }
    this.#pools = new ProjectPools({
      // Counted apart from the worker threads' budget: at most this many probes hold a connection at once.
      maxConnections: 16,
      poolSize: 1,
      idleMillis: this.#options.idleMillis,
      applicationName: 'baseplane health',
      acquireTimeoutMillis: this.#options.probeTimeoutMs,
      connectTimeoutMillis: this.#options.probeTimeoutMs,
      // A probe that met its bound does not leave its connection waiting on a server that hangs.
      roundTripDeadlineMillis: this.#options.probeTimeoutMs,
    })
  }

  /** Whether the database answered its latest probe: at once while that result stands, else after a new probe. */
  up(db: ProjectDatabase): boolean | Promise<boolean> {
    const last = this.#last.get(db.ref)
    if (last !== undefined && Date.now() - last.at < this.#options.cacheMs) return last.up
    let probing = this.#probing.get(db.ref)
    if (probing === undefined) {
      probing = this.#probe(db).finally(() => this.#probing.delete(db.ref))
      this.#probing.set(db.ref, probing)
    }
    return probing
  }

  async close(): Promise<void> {
    await this.#pools.closeAll()
  }

  async #probe(db: ProjectDatabase): Promise<boolean> {
    // A connection taken from idle that the server ended meanwhile is replaced once (stale-retry.ts).
    const failure = await probeFailure(Promise.resolve().then(() => this.#pools.get({ ...db, poolMax: 1, serverBudget: undefined }).query('select 1')), this.#options.probeTimeoutMs)
    const up = failure === undefined
    const source = projectSource(db)
    if (up) incidents.recovered(source, { ref: db.ref })
    else incidents.failed(source, failure, { ref: db.ref })
    if (this.#last.size >= KEPT) this.#sweep()
    this.#last.set(db.ref, { up, at: Date.now() })
    return up
  }

  #sweep(): void {
    const stale = Date.now() - 60 * this.#options.cacheMs
    for (const [ref, probed] of this.#last) if (probed.at < stale) this.#last.delete(ref)
  }
}
