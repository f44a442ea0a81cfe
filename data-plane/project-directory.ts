// The data plane's view of the catalogue: project records cached in memory,
// dropped the moment the catalogue notifies a change (the catalogue's trigger
// sends `baseplane_change` with "<ref>:<change number>" at commit). The
// process then acknowledges the change number in baseplane.nodes, and the
// control plane waits for every live process's acknowledgement before it
// reports a change done: that is what makes a setting apply on the very next
// request. If the listening connection drops, notifications may have been
// missed, so the whole cache is dropped and the connection re-established.
//
// Anyone who can connect to the catalogue's database may NOTIFY on the
// channel, so a payload is believed only when it is "<ref>:<n>" with a ref of
// the catalogue's pattern and n a change number the catalogue has issued
// (baseplane.last_change()): one forged "x:1e308" once made this process
// acknowledge a change that never comes, and every control-plane write then
// waited out its settle timeout (issue 11).
import crypto from 'node:crypto'
import os from 'node:os'
import pg from 'pg'
import { readProject, type ProjectRecord } from '../lib/catalogue.ts'
import { log } from '../lib/log.ts'
import { REF_SOURCE } from '../lib/refs.ts'

const CHANNEL = 'baseplane_change'
const HEARTBEAT_MS = 2000
/** How long "no such project" is remembered (a creation notifies and clears it sooner). */
const MISSING_TTL_MS = 5000
/** Change numbers stay well inside the integers a double holds exactly. */
const PAYLOAD = new RegExp(`^(${REF_SOURCE}):([1-9][0-9]{0,14})$`)

interface Cached {
  project: ProjectRecord | undefined
  loadedAt: number
}

export class ProjectDirectory {
  readonly #catalogue: pg.Pool
  /** The catalogue's database, which is also the default server of project databases. */
  readonly #databaseUrl: string
  readonly #cache = new Map<string, Cached>()
  readonly #loading = new Map<string, Promise<ProjectRecord | undefined>>()
  /** Bumped on every invalidation, so a read that raced a change is not cached. */
  #generation = 0
  #listener: pg.Client | undefined
  #closed = false
  #retry: NodeJS.Timeout | undefined
  #heartbeat: NodeJS.Timeout | undefined
  /** This process's row in baseplane.nodes. */
  readonly #nodeId = `${os.hostname()}:${process.pid}:${crypto.randomBytes(4).toString('hex')}`
  #acknowledged = 0
  /** The highest change number the catalogue is known to have issued. */
  #issued = 0
  /** Notifications received so far; orders them against reads of the issued number. */
  #notifications = 0
  #issuedRead: { startedAt: number; promise: Promise<number> } | undefined

  constructor(databaseUrl: string, catalogue: pg.Pool) {
    this.#databaseUrl = databaseUrl
    this.#catalogue = catalogue
  }

  async start(): Promise<void> {
    // Rows of processes that died without saying goodbye.
    await this.#catalogue.query(`delete from baseplane.nodes where heartbeat_at < now() - interval '1 hour'`)
    await this.#listen()
    this.#heartbeat = setInterval(() => {
      this.#catalogue.query('update baseplane.nodes set heartbeat_at = now() where id = $1', [this.#nodeId]).catch(() => {})
    }, HEARTBEAT_MS)
    this.#heartbeat.unref()
  }

  /** Records that every change up to `change` is applied to this process's cache. */
  #acknowledge(change: number, always = false): void {
    if (change <= this.#acknowledged && !always) return
    this.#acknowledged = change
    this.#catalogue
      .query(
        `insert into baseplane.nodes (id, seen_change) values ($1, $2)
         on conflict (id) do update set seen_change = greatest(baseplane.nodes.seen_change, excluded.seen_change), heartbeat_at = now()`,
        [this.#nodeId, change],
      )
      .catch((error) => log.error('could not acknowledge a catalogue change', error))
  }

  async #listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.#databaseUrl, application_name: 'baseplane-directory' })
    const lost = () => {
      if (this.#listener !== client) return
      this.#listener = undefined
      this.#cache.clear()
      client.end().catch(() => {})
      if (!this.#closed) this.#retry = setTimeout(() => this.#listen().catch(() => lost()), 500)
    }
    client.on('error', lost)
    client.on('end', lost)
    client.on('notification', (message) => this.#notified(message.payload ?? ''))
    this.#listener = client
    this.#generation += 1
    try {
      await client.connect()
      await client.query(`listen ${CHANNEL}`)
    } catch (error) {
      log.error('catalogue listener failed to connect; retrying', error)
      lost()
      return
    }
    // Anything cached before the listener was up may be stale: drop it all,
    // which covers every change made so far.
    this.#cache.clear()
    try {
      this.#acknowledge(await this.#readIssued(this.#notifications), true)
    } catch (error) {
      log.error('could not read the last catalogue change', error)
    }
  }

  #notified(payload: string): void {
    this.#notifications += 1
    const seenAt = this.#notifications
    const match = PAYLOAD.exec(payload)
    if (!match) {
      log.info('ignored a malformed catalogue change notification', { payload: payload.slice(0, 80) })
      return
    }
    const ref = match[1]!
    const change = Number(match[2])
    if (change <= this.#issued) {
      this.invalidate(ref)
      this.#acknowledge(change)
      return
    }
    this.#readIssued(seenAt).then(
      (issued) => {
        if (change > issued) {
          log.info('ignored a catalogue change notification with a change number the catalogue never issued', { ref, change, issued })
          return
        }
        this.invalidate(ref)
        this.#acknowledge(change)
      },
      (error: unknown) => {
        // Unverified, so not acknowledged; but a cache miss is always safe.
        log.error('could not check a catalogue change notification', error, { ref, change })
        this.invalidate(ref)
      },
    )
  }

  /**
   * The catalogue's last issued change number. A change is numbered before
   * its notification is sent, so a read started after the notification
   * arrived sees it; concurrent callers share a read that started late enough.
   */
  #readIssued(seenAt: number): Promise<number> {
    const current = this.#issuedRead
    if (current !== undefined && current.startedAt >= seenAt) return current.promise
    const promise = this.#catalogue.query<{ change: string }>('select baseplane.last_change() as change').then((result) => {
      this.#issued = Math.max(this.#issued, Number(result.rows[0]!.change))
      return this.#issued
    })
    const read = { startedAt: this.#notifications, promise }
    this.#issuedRead = read
    const done = () => {
      if (this.#issuedRead === read) this.#issuedRead = undefined
    }
    promise.then(done, done)
    return promise
  }

  invalidate(ref: string): void {
    this.#generation += 1
    this.#loading.delete(ref)
    this.#cache.delete(ref)
  }

  /** The cached record, if present and current; lets the hot path avoid a promise. */
  peek(ref: string): ProjectRecord | undefined {
    const cached = this.#cache.get(ref)
    return cached?.project
  }

  async get(ref: string): Promise<ProjectRecord | undefined> {
    const cached = this.#cache.get(ref)
    if (cached !== undefined && (cached.project !== undefined || Date.now() - cached.loadedAt < MISSING_TTL_MS) && this.#listener) {
      return cached.project
    }
    return this.reload(ref)
  }

  /** Reads `ref` from the catalogue now (coalescing concurrent reads). */
  reload(ref: string): Promise<ProjectRecord | undefined> {
    let loading = this.#loading.get(ref)
    if (loading === undefined) {
      const generation = this.#generation
      loading = readProject(this.#catalogue, ref, this.#databaseUrl).then(
        (project) => {
          if (this.#loading.get(ref) === loading) this.#loading.delete(ref)
          if (generation === this.#generation) this.#cache.set(ref, { project, loadedAt: Date.now() })
          return project
        },
        (error: unknown) => {
          if (this.#loading.get(ref) === loading) this.#loading.delete(ref)
          throw error
        },
      )
      this.#loading.set(ref, loading)
    }
    return loading
  }

  async close(): Promise<void> {
    this.#closed = true
    clearTimeout(this.#retry)
    clearInterval(this.#heartbeat)
    await this.#catalogue.query('delete from baseplane.nodes where id = $1', [this.#nodeId]).catch(() => {})
    const listener = this.#listener
    this.#listener = undefined
    await listener?.end().catch(() => {})
  }
}
