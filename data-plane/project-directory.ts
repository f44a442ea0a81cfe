// The data plane's view of the catalogue: project records cached in memory,
// dropped the moment the catalogue notifies a change (the catalogue's trigger
// sends `baseplane_change` with "<ref>:<change number>" at commit). The
// process then acknowledges the change number in baseplane.nodes, and the
// control plane waits for every live process's acknowledgement before it
// reports a change done: that is what makes a setting apply on the very next
// request. The listening connection, the acknowledgements and the heartbeat
// are this node's link to the catalogue (catalogue-link.ts).
//
// The catalogue may fail; projects keep answering (issue 24 item 3): while the
// link is down (refused, or hanging past its deadline) the records already
// cached keep being served, and only a miss asks the catalogue (and answers
// 503 when it does not answer in time). Changes made meanwhile are not heard,
// so the staleness is bounded elsewhere: /health turns unready once the link
// has been silent for BASEPLANE_CATALOGUE_SILENCE_MS (platform-health.ts), and
// the control plane names the nodes that did not acknowledge a change. When
// the link is back, everything cached is dropped, since changes may have been
// missed.
//
// Anyone who can connect to the catalogue's database may NOTIFY on the
// channel, so a payload is believed only when it is "<ref>:<n>" with a ref of
// the catalogue's pattern and n a change number the catalogue has issued
// (baseplane.last_change()): one forged "x:1e308" once made this process
// acknowledge a change that never comes, and every control-plane write then
// waited out its settle timeout (issue 11).
//
// Bad traffic stays at the door (issue 24): both caches are bounded LRUs, so
// random refs cannot grow memory; a ref that names no project is remembered
// for DIRECTORY_LIMITS.missingTtlMs (its creation notifies and clears it at once on every
// process), so it costs one catalogue read, not one per request; a string
// that cannot be a ref costs none; and misses are read in batches, one
// statement at a time, so a flood of distinct refs costs a statement per
// catalogue round trip rather than one per request. Evicting a record breaks
// no request: a request holds the record it resolved, and a later one reads
// it again.
import crypto from 'node:crypto'
import os from 'node:os'
import { LRUCache } from 'lru-cache'
import pg from 'pg'
import { readProjects, type ProjectRecord } from '../lib/catalogue.ts'
import { connectFailure } from '../lib/db/database-errors.ts'
import { probeFailure } from '../lib/db/probe-deadline.ts'
import { log } from '../lib/log.ts'
import { isRef, REF_SOURCE } from '../lib/refs.ts'
import { CatalogueLink, LINK_DEADLINE_MS } from './catalogue-link.ts'

const CHANNEL = 'baseplane_change'
/** Change numbers stay well inside the integers a double holds exactly. */
const PAYLOAD = new RegExp(`^(${REF_SOURCE}):([1-9][0-9]{0,14})$`)

export interface DirectoryLimits {
  /** Project records kept (a few kilobytes each), least recently used dropped first. */
  projects: number
  /** Refs known to name no project (a ref's length each), least recently used dropped first. */
  missing: number
  /** How long "no such project" is remembered (a creation notifies and clears it sooner). */
  missingTtlMs: number
  /** Refs asked of the catalogue in one statement at most. */
  batch: number
}

/** Enough for every project in use on a large node; a project past it costs one catalogue read when it returns. */
export const DIRECTORY_LIMITS: Readonly<DirectoryLimits> = Object.freeze({ projects: 10_000, missing: 10_000, missingTtlMs: 5000, batch: 500 })

interface Pending {
  promise: Promise<ProjectRecord | undefined>
  resolve(project: ProjectRecord | undefined): void
  reject(error: unknown): void
}

export class ProjectDirectory {
  readonly #catalogue: pg.Pool
  /** The catalogue's database, which is also the default server of project databases. */
  readonly #databaseUrl: string
  readonly #limits: DirectoryLimits
  readonly #projects: LRUCache<string, ProjectRecord>
  readonly #missing: LRUCache<string, true>
  /** Refs being read (queued or sent), so concurrent callers share one read. */
  readonly #loading = new Map<string, Pending>()
  /** Refs waiting for the next statement. */
  readonly #queued = new Map<string, Pending>()
  #reading = false
  #reads = 0
  /** Bumped on every invalidation, so a read that raced a change is not cached. */
  #generation = 0
  /** This process's row in baseplane.nodes. */
  readonly #nodeId = `${os.hostname()}:${process.pid}:${crypto.randomBytes(4).toString('hex')}`
  readonly #link: CatalogueLink
  #acknowledged = 0
  /** The highest change number the catalogue is known to have issued. */
  #issued = 0
  /** Notifications received so far; orders them against reads of the issued number. */
  #notifications = 0
  #issuedRead: { startedAt: number; promise: Promise<number> } | undefined

  constructor(databaseUrl: string, catalogue: pg.Pool, limits: Partial<DirectoryLimits> = {}) {
    this.#databaseUrl = databaseUrl
    this.#catalogue = catalogue
    this.#limits = { ...DIRECTORY_LIMITS, ...limits }
    this.#projects = new LRUCache({ max: this.#limits.projects })
    this.#missing = new LRUCache({ max: this.#limits.missing, ttl: this.#limits.missingTtlMs })
    this.#link = new CatalogueLink(databaseUrl, CHANNEL, this.#nodeId, {
      connected: () => this.#connected(),
      notified: (payload) => this.#notified(payload),
    })
  }

  /** This process's id in baseplane.nodes (what the control plane names when it did not acknowledge a change). */
  get nodeId(): string {
    return this.#nodeId
  }

  /** When the catalogue last answered on this node's link (ms since the epoch; 0: never). */
  get lastHeardAt(): number {
    return this.#link.lastHeardAt
  }

  /** Statements this directory has sent to read projects (tests count them). */
  get catalogueReads(): number {
    return this.#reads
  }

  /** How many refs each cache holds now. */
  get cached(): { projects: number; missing: number } {
    return { projects: this.#projects.size, missing: this.#missing.size }
  }

  async start(): Promise<void> {
    // Rows of processes that died without saying goodbye.
    await this.#catalogue.query(`delete from baseplane.nodes where heartbeat_at < now() - interval '1 hour'`)
    await this.#link.start()
  }

  /** Records that every change up to `change` is applied to this process's cache. */
  #acknowledge(change: number, always = false): void {
    if (change <= this.#acknowledged && !always) return
    this.#acknowledged = change
    // On the link: a pool connection left hanging by an outage must not keep acknowledgements from the control plane after it.
    this.#link
      .query(
        `insert into baseplane.nodes (id, seen_change) values ($1, $2)
         on conflict (id) do update set seen_change = greatest(baseplane.nodes.seen_change, excluded.seen_change), heartbeat_at = now()`,
        [this.#nodeId, change],
      )
      // A lost link says so once (catalogue-link.ts), and its return acknowledges everything.
      .catch(() => {})
  }

  /** The link listens (again): anything cached before may be stale, so all of it is dropped, which covers every change made so far. */
  async #connected(): Promise<void> {
    this.#clear()
    try {
      this.#acknowledge(await this.#readIssued(this.#notifications), true)
    } catch (error) {
      log.error('catalogue listener could not read the last catalogue change', error)
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
    const promise = this.#link.query<{ change: string }>('select baseplane.last_change() as change').then((result) => {
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

  #clear(): void {
    // A read sent before this point may miss a change that was never notified: not cached.
    this.#generation += 1
    this.#projects.clear()
    this.#missing.clear()
  }

  invalidate(ref: string): void {
    this.#generation += 1
    // A read not yet sent will see the change; one already sent may not, so later callers read again.
    if (!this.#queued.has(ref)) this.#loading.delete(ref)
    this.#projects.delete(ref)
    this.#missing.delete(ref)
  }

  /** The cached record, if present and current; lets the hot path avoid a promise. */
  peek(ref: string): ProjectRecord | undefined {
    return this.#projects.get(ref)
  }

  /** The cached record (also while the link is down: what this node knows), else the catalogue's. */
  async get(ref: string): Promise<ProjectRecord | undefined> {
    const project = this.#projects.get(ref)
    if (project !== undefined) return project
    if (this.#missing.get(ref) !== undefined) return undefined
    return this.reload(ref)
  }

  /** Reads `ref` from the catalogue now (coalescing concurrent reads, batching misses). */
  reload(ref: string): Promise<ProjectRecord | undefined> {
    // The catalogue's check constraint admits nothing else: no need to ask.
    if (!isRef(ref)) return Promise.resolve(undefined)
    const loading = this.#loading.get(ref)
    if (loading !== undefined) return loading.promise
    let resolve!: Pending['resolve']
    let reject!: Pending['reject']
    const promise = new Promise<ProjectRecord | undefined>((yes, no) => {
      resolve = yes
      reject = no
    })
    const pending: Pending = { promise, resolve, reject }
    this.#loading.set(ref, pending)
    this.#queued.set(ref, pending)
    if (!this.#reading) {
      this.#reading = true
      // The rest of this turn's misses join the same statement.
      setImmediate(() => this.#readQueued())
    }
    return promise
  }

  /** Sends one statement for the queued refs; when it answers, the next, until none are queued. */
  #readQueued(): void {
    const batch: Array<[string, Pending]> = []
    for (const entry of this.#queued) {
      if (batch.length === this.#limits.batch) break
      batch.push(entry)
    }
    for (const [ref] of batch) this.#queued.delete(ref)
    if (batch.length === 0) {
      this.#reading = false
      return
    }
    const generation = this.#generation
    this.#reads += 1
    const statement = readProjects(
      this.#catalogue,
      batch.map(([ref]) => ref),
      this.#databaseUrl,
    )
    // A catalogue that hangs answers these requests 503 after the deadline, and the next batch goes out.
    let timer: NodeJS.Timeout | undefined
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(connectFailure(new Error(`the catalogue did not answer within ${LINK_DEADLINE_MS} ms`))), LINK_DEADLINE_MS)
    })
    statement.catch(() => {})
    Promise.race([statement, deadline])
      .then(
        (projects) => {
          const found = new Map(projects.map((project) => [project.ref, project]))
          // A change notified while the statement was out may be missing from its answer: not cached.
          const current = generation === this.#generation
          for (const [ref, pending] of batch) {
            if (this.#loading.get(ref) === pending) this.#loading.delete(ref)
            const project = found.get(ref)
            if (current && project !== undefined) {
              this.#missing.delete(ref)
              this.#projects.set(ref, project)
            }
            else if (current) this.#missing.set(ref, true)
            pending.resolve(project)
          }
        },
        (error: unknown) => {
          for (const [ref, pending] of batch) {
            if (this.#loading.get(ref) === pending) this.#loading.delete(ref)
            pending.reject(error)
          }
        },
      )
      .finally(() => {
        clearTimeout(timer)
        this.#readQueued()
      })
  }

  async close(): Promise<void> {
    // The link first, so no acknowledgement brings the row back. Bounded: a stop
    // does not wait on a catalogue that hangs (the row then ages out of the live nodes).
    await this.#link.close()
    await probeFailure(this.#catalogue.query('delete from baseplane.nodes where id = $1', [this.#nodeId]), LINK_DEADLINE_MS)
  }
}
