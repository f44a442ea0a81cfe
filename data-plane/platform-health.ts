// GET /health for the platform: whether the catalogue database answers, since
// without it no project can be resolved or changed. Load balancers poll this,
// often under load: one probe runs at a time, its result is kept for a second,
// and a probe gives up after a second so /health never hangs with the database.
import { probeFailure } from '../lib/db/probe-deadline.ts'
import pg from 'pg'
import { log } from '../lib/log.ts'
import type { OutgoingResponse } from '../lib/http.ts'

export interface PlatformHealthOptions {
  /** A probe that has not answered by then counts as "does not answer". */
  probeTimeoutMs: number
  /** How long a probe's result answers /health before the next probe. */
  cacheMs: number
}

const DEFAULTS: PlatformHealthOptions = { probeTimeoutMs: 1000, cacheMs: 1000 }
// The supervisor's first restart comes after half a second; a client asking again
// after this long finds a restarted catalogue if there is one.
const RETRY_AFTER_SECONDS = 2

interface Probed {
  ok: boolean
  at: number
}

export class PlatformHealth {
  readonly #pool: pg.Pool
  readonly #options: PlatformHealthOptions
  readonly #ok: string
  readonly #unavailable: string
  readonly #stopping: string
  /** Set when the process is told to stop: /health turns 503 so a balancer sends no more, while requests are still served. */
  #leaving = false
  #last: Probed | undefined
  #probing: Promise<Probed> | undefined

  constructor(catalogueUrl: string, version: string, options: Partial<PlatformHealthOptions> = {}) {
    this.#options = { ...DEFAULTS, ...options }
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
    if (last !== undefined && Date.now() - last.at < this.#options.cacheMs) return this.#answer(last.ok)
    this.#probing ??= this.#probe().finally(() => (this.#probing = undefined))
    return this.#probing.then((probed) => this.#answer(probed.ok))
  }

  async close(): Promise<void> {
    await this.#pool.end()
  }

  #answer(ok: boolean): OutgoingResponse {
    if (ok) return { status: 200, headers: { 'content-type': 'application/json' }, body: this.#ok }
    return { status: 503, headers: { 'content-type': 'application/json', 'retry-after': String(RETRY_AFTER_SECONDS) }, body: this.#unavailable }
  }

  async #probe(): Promise<Probed> {
    // The pool's own timeouts end the connection attempt or query left behind.
    const failure = await probeFailure(this.#select(), this.#options.probeTimeoutMs)
    const ok = failure === undefined
    if (!ok && this.#last?.ok !== false) log.error('the platform database does not answer', failure)
    if (ok && this.#last?.ok === false) log.info('the platform database answers again')
    this.#last = { ok, at: Date.now() }
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
