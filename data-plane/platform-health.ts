// GET /health for the platform: whether this node may be sent requests. Load
// balancers poll this, often under load: one probe of the catalogue runs at a
// time, its result is kept for a second, and a probe gives up after a second so
// /health never hangs with the database.
//
// With the node's catalogue link (`link`), a node the catalogue stops answering
// keeps serving what it knows (issue 24 item 3), so /health stays 200 (its body
// saying `"catalogue": "down"`): with one catalogue, an outage would otherwise
// turn every node unready at once and empty the balancer. Opt-in, with
// `silenceMs` (BASEPLANE_CATALOGUE_SILENCE_MS, 0: off), it turns 503 once the
// link has been silent that long: `unavailable` when the catalogue does not
// answer a probe either, `unready` when it does (this node's link is what
// fails). That bounds how long a node that misses changes (a revoked key) is
// sent requests: the silence, plus the balancer's own delay. Without a link,
// the probe alone says.
import { PROBE_TIMING, probeFailure, type Probed, type ProbeTiming } from '../lib/db/probe-deadline.ts'
import pg from 'pg'
import { log } from '../lib/log.ts'
import type { OutgoingResponse } from '../lib/http.ts'

/** What /health needs of the node's catalogue link (data-plane/project-directory.ts). */
export interface CatalogueLinkState {
  /** When the catalogue last answered on the link (ms since the epoch). */
  readonly lastHeardAt: number
}

export interface PlatformHealthOptions extends ProbeTiming {
  /** The node's catalogue link; without it, /health is the probe's result. */
  link?: CatalogueLinkState
  /** How long the link may be silent before /health turns unready (config catalogueSilenceMillis); 0: never. */
  silenceMs: number
}

const DEFAULTS: PlatformHealthOptions = { ...PROBE_TIMING, silenceMs: 0 }
// The supervisor's first restart comes after half a second; a client asking again
// after this long finds a restarted catalogue if there is one.
const RETRY_AFTER_SECONDS = 2

export class PlatformHealth {
  readonly #pool: pg.Pool
  readonly #options: PlatformHealthOptions
  readonly #version: string
  readonly #ok: string
  /** Ready, serving what it knows, while the catalogue does not answer. */
  readonly #okCatalogueDown: string
  readonly #unavailable: string
  readonly #stopping: string
  /** Set when the process is told to stop: /health turns 503 so a balancer sends no more, while requests are still served. */
  #leaving = false
  #last: Probed | undefined
  #probing: Promise<Probed> | undefined

  constructor(catalogueUrl: string, version: string, options: Partial<PlatformHealthOptions> = {}) {
    this.#options = { ...DEFAULTS, ...options }
    this.#version = version
    const timeout = this.#options.probeTimeoutMs
    // One connection of its own: a catalogue pool busy with control-plane work is not a catalogue that does not answer.
    this.#pool = new pg.Pool({
      connectionString: catalogueUrl,
      max: 1,
      connectionTimeoutMillis: timeout,
      query_timeout: timeout,
      idleTimeoutMillis: 30000,
      application_name: 'baseplane health',
    })
    // The server ending the idle probe connection is what the next probe finds out.
    this.#pool.on('error', () => {})
    this.#ok = JSON.stringify({ status: 'ok', version })
    this.#okCatalogueDown = JSON.stringify({ status: 'ok', version, catalogue: 'down' })
    this.#unavailable = JSON.stringify({ status: 'unavailable', version, message: 'The platform database does not answer' })
    this.#stopping = JSON.stringify({ status: 'stopping', version, message: 'This server is stopping; send requests to another' })
  }

  /** From now on /health answers 503 `stopping` (the process is going away; see BASEPLANE_UNREADY_MS). */
  leaving(): void {
    this.#leaving = true
  }

  response(): OutgoingResponse | Promise<OutgoingResponse> {
    if (this.#leaving) return { status: 503, headers: { 'content-type': 'application/json', 'retry-after': String(RETRY_AFTER_SECONDS) }, body: this.#stopping }
    const last = this.#last
    if (last !== undefined && Date.now() - last.at < this.#options.cacheMs) return this.#answer(last)
    this.#probing ??= this.#probe().finally(() => (this.#probing = undefined))
    return this.#probing.then((probed) => this.#answer(probed))
  }

  async close(): Promise<void> {
    await this.#pool.end()
  }

  /** `probed`: the last probe's result. */
  #answer(probed: Probed): OutgoingResponse {
    const link = this.#options.link
    // The link hearing from the catalogue after a failed probe is an answer too: the cached probe is stale.
    const answers = probed.up || (link !== undefined && link.lastHeardAt > probed.at)
    const silentMs = link === undefined ? 0 : Date.now() - link.lastHeardAt
    const silence = this.#options.silenceMs
    const ready = link === undefined ? answers : silence === 0 || silentMs < silence
    if (ready) return { status: 200, headers: { 'content-type': 'application/json' }, body: answers ? this.#ok : this.#okCatalogueDown }
    const since = link?.lastHeardAt ? `for ${Math.floor(silentMs / 1000)} s` : 'since it started'
    const body = answers
      ? JSON.stringify({ status: 'unready', version: this.#version, message: `This server has not heard from the platform database ${since}; send requests to another` })
      : this.#unavailable
    return { status: 503, headers: { 'content-type': 'application/json', 'retry-after': String(RETRY_AFTER_SECONDS) }, body }
  }

  async #probe(): Promise<Probed> {
    // The pool's own timeouts end the connection attempt or query left behind.
    const failure = await probeFailure(this.#select(), this.#options.probeTimeoutMs)
    const up = failure === undefined
    if (!up && this.#last?.up !== false) log.error('the platform database does not answer', failure)
    if (up && this.#last?.up === false) log.info('the platform database answers again')
    this.#last = { up, at: Date.now() }
    return this.#last
  }

  async #select(): Promise<void> {
    const client = await this.#pool.connect()
    try {
      await client.query('select 1')
    } catch (error) {
      // A query that timed out may still be running on that connection: never reuse it.
      client.release(true)
      throw error
    }
    client.release()
  }
}
