// This node's link to the catalogue (issue 24 item 3): one connection that
// LISTENs for changes and carries the node's heartbeat and acknowledgements, so
// the row the control plane waits on is kept by the very connection that hears
// the changes. A link can fail by being refused or reset, which the driver
// reports, or by hanging (packets dropped, a server stopped with SIGSTOP),
// which nothing reports: so every round trip on it has a deadline, a beat goes
// out every PULSE_MS, and a missed deadline counts as a lost link, which is
// dropped and connected again, as a refused one is.
//
// `lastHeardAt` is when the catalogue last answered on the link; /health turns
// unready once it is older than BASEPLANE_CATALOGUE_SILENCE_MS
// (platform-health.ts), so a node cut off from changes stops being sent
// requests within a bound while it keeps serving what it knows.
import pg from 'pg'
import { classifyDatabaseError } from '../lib/db/database-errors.ts'
import { log } from '../lib/log.ts'

/** A beat (heartbeat_at, read by the control plane and fleet-size.ts) goes out this often. */
export const PULSE_MS = 2000
/** A connection attempt or round trip on the link unanswered by then means the link hangs. */
export const LINK_DEADLINE_MS = 3000
/** Pause between two connection attempts while the link is down. */
const RETRY_MS = 500

export interface CatalogueLinkEvents {
  /**
   * The link is (again) listening. Notifications sent while it was down are
   * lost, so anything learnt before may be stale. The link counts as up (and
   * start() returns) once the promise settles.
   */
  connected(): Promise<void>
  notified(payload: string): void
}

export class CatalogueLink {
  readonly #databaseUrl: string
  readonly #channel: string
  readonly #nodeId: string
  readonly #events: CatalogueLinkEvents
  #client: pg.Client | undefined
  /** Whether #client listens (connected, LISTEN answered): the beat waits for it. */
  #up = false
  /** The round trips of the current client, one at a time (node-postgres deprecates queueing on a client). */
  #tail: Promise<unknown> = Promise.resolve()
  #lastHeardAt = 0
  /** Since when connection attempts fail, for one log line per outage. */
  #downSince: number | undefined
  #beating = false
  #pulse: NodeJS.Timeout | undefined
  #retry: NodeJS.Timeout | undefined
  #closed = false

  constructor(databaseUrl: string, channel: string, nodeId: string, events: CatalogueLinkEvents) {
    this.#databaseUrl = databaseUrl
    this.#channel = channel
    this.#nodeId = nodeId
    this.#events = events
  }

  /** When the catalogue last answered on the link (ms since the epoch; 0: never). */
  get lastHeardAt(): number {
    return this.#lastHeardAt
  }

  /** Whether the link listens now: while it does, every change committed since it began listening is (or will be) notified. */
  get listening(): boolean {
    return this.#up
  }

  /** The first connection attempt (a failed one is retried in the background), then a beat every PULSE_MS. */
  async start(): Promise<void> {
    await this.#connect()
    this.#pulse = setInterval(() => this.#beat(), PULSE_MS)
    this.#pulse.unref()
  }

  /** A round trip on the link, after those already sent (and its connection, while it connects); rejects when the link is down or lost meanwhile. */
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<pg.QueryResult<R>> {
    const client = this.#client
    if (client === undefined) return Promise.reject(new Error('the catalogue link is down'))
    const run = this.#tail.then(() => {
      if (this.#client !== client) throw new Error('the catalogue link was lost')
      return client.query<R>(text, values)
    })
    this.#tail = run.catch(() => {})
    run.then(
      () => this.#heard(client),
      // A refusal of the statement is still an answer; no answer in time, or a connection gone, is a lost link.
      (error: unknown) => (classifyDatabaseError(error) === 'unavailable' ? this.#lost(client, error) : this.#heard(client)),
    )
    return run
  }

  async close(): Promise<void> {
    this.#closed = true
    clearTimeout(this.#retry)
    clearInterval(this.#pulse)
    const client = this.#client
    this.#client = undefined
    this.#up = false
    await client?.end().catch(() => {})
  }

  async #connect(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.#databaseUrl,
      application_name: 'baseplane-directory',
      connectionTimeoutMillis: LINK_DEADLINE_MS,
      query_timeout: LINK_DEADLINE_MS,
    })
    client.on('error', (error) => this.#lost(client, error))
    client.on('end', () => this.#lost(client, new Error('the catalogue ended the connection')))
    client.on('notification', (message) => {
      if (this.#client !== client) return
      this.#heard(client)
      this.#events.notified(message.payload ?? '')
    })
    this.#client = client
    this.#tail = Promise.resolve()
    try {
      await client.connect()
      await client.query(`listen ${this.#channel}`)
    } catch (error) {
      this.#lost(client, error)
      return
    }
    if (this.#client !== client) {
      // Lost or closed while connecting.
      client.end().catch(() => {})
      return
    }
    this.#up = true
    this.#heard(client)
    if (this.#downSince !== undefined) log.info('catalogue listener connected again', { downMs: Date.now() - this.#downSince })
    this.#downSince = undefined
    await this.#events.connected()
  }

  #heard(client: pg.Client): void {
    if (this.#client === client) this.#lastHeardAt = Date.now()
  }

  /** Drops `client` if it is the link, and connects again; logged once per outage, with its first cause. */
  #lost(client: pg.Client, why: unknown): void {
    if (this.#client !== client) return
    this.#client = undefined
    this.#up = false
    if (this.#downSince === undefined) {
      this.#downSince = Date.now()
      log.error('catalogue listener has no connection to the catalogue; connecting again', why)
    }
    // With a round trip still out, end() destroys the socket rather than wait on a link that hangs.
    client.end().catch(() => {})
    if (!this.#closed) this.#retry = setTimeout(() => void this.#connect(), RETRY_MS)
  }

  /** The heartbeat, which is also the check that the link answers: a missed deadline drops it (query()). */
  #beat(): void {
    if (this.#beating || !this.#up) return
    this.#beating = true
    this.query('update baseplane.nodes set heartbeat_at = now() where id = $1', [this.#nodeId])
      .catch(() => {})
      .finally(() => (this.#beating = false))
  }
}
