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
// Bad traffic stays at the door (issues 24 and 36): the node knows every ref
// that exists (known-refs.ts: loaded when the link listens, kept current by
// its notifications), so while that set is current a ref outside it is
// answered "no such project" from memory, at no cost to the catalogue. While
// it is not (the link down or silent, the set loading), a ref outside it is read as
// before, within DIRECTORY_LIMITS.unknownReads statements a second node-wide
// (past them: 503 with Retry-After, since a project created a moment ago must
// not be told it does not exist). Both caches are bounded LRUs, so random refs
// cannot grow memory; a ref that names no project is remembered for
// DIRECTORY_LIMITS.missingTtlMs (its creation notifies and clears it at once on every
// process); a string that cannot be a ref costs nothing; and misses are read
// in batches, one statement at a time. Evicting a record breaks no request: a
// request holds the record it resolved, and a later one reads it again.
import crypto from 'node:crypto'
import os from 'node:os'
import { LRUCache } from 'lru-cache'
import pg from 'pg'
import { readProjects, type ProjectRecord } from '../lib/catalogue.ts'
import { connectFailure } from '../lib/db/database-errors.ts'
import { probeFailure } from '../lib/db/probe-deadline.ts'
import { platformErrors } from '../lib/errors.ts'
import { log } from '../lib/log.ts'
import { isRef, REF_SOURCE } from '../lib/refs.ts'
import { CatalogueLink, LINK_DEADLINE_MS, PULSE_MS } from './catalogue-link.ts'
import { KnownRefs, ReadBudget } from './known-refs.ts'

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
  /** Statements that may carry refs outside the set of known refs while it is not current, per unknownReadsIntervalMs, node-wide. */
  unknownReads: number
  unknownReadsIntervalMs: number
}

/** Enough for every project in use on a large node; a project past it costs one catalogue read when it returns. */
export const DIRECTORY_LIMITS: Readonly<DirectoryLimits> = Object.freeze({
  projects: 10_000,
  missing: 10_000,
  missingTtlMs: 5000,
  batch: 500,
  unknownReads: 10,
  unknownReadsIntervalMs: 1000,
})

/** How often a load of the known refs that the catalogue refused (the link still up) is tried again. */
const RELOAD_RETRY_MS = 1000
/**
 * A link unheard for longer has missed a beat's answer (one goes out every
 * PULSE_MS): it may hang before its deadline says so, and changes would go
 * unheard, so the known refs stop counting as current.
 */
const FEED_SILENCE_MS = PULSE_MS + 1000

interface Pending {
  promise: Promise<ProjectRecord | undefined>
  resolve(project: ProjectRecord | undefined): void
  reject(error: unknown): void
  /** Outside the set of known refs when asked: its statement spends the budget. */
  unknown: boolean
}

export class ProjectDirectory {
  readonly #catalogue: pg.Pool
  /** The catalogue's database, which is also the default server of project databases. */
  readonly #databaseUrl: string
  readonly #limits: DirectoryLimits
  readonly #projects: LRUCache<string, ProjectRecord>
  readonly #missing: LRUCache<string, true>
  readonly #known = new KnownRefs()
  readonly #unknownBudget: ReadBudget
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
  #closed = false
  readonly #invalidated: Array<(ref: string) => void> = []

  constructor(databaseUrl: string, catalogue: pg.Pool, limits: Partial<DirectoryLimits> = {}) {
    this.#databaseUrl = databaseUrl
    this.#catalogue = catalogue
    this.#limits = { ...DIRECTORY_LIMITS, ...limits }
    this.#projects = new LRUCache({ max: this.#limits.projects })
    this.#missing = new LRUCache({ max: this.#limits.missing, ttl: this.#limits.missingTtlMs })
    this.#unknownBudget = new ReadBudget(this.#limits.unknownReads, this.#limits.unknownReadsIntervalMs)
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

  /** How many refs each cache holds now (`known`: the set of refs that exist). */
  get cached(): { projects: number; missing: number; known: number } {
    return { projects: this.#projects.size, missing: this.#missing.size, known: this.#known.size }
  }

  /** Whether the set of refs that exist was loaded once since start: the node can tell projects apart (/ready). */
  get projectsLoaded(): boolean {
    return this.#known.everLoaded
  }

  /** Whether a ref outside the known set is answered "no such project" without a read: the set is loaded and the link listens and answers. */
  get knowsEveryRef(): boolean {
    return this.#known.loaded && this.#link.listening && Date.now() - this.#link.lastHeardAt <= FEED_SILENCE_MS
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

  /**
   * The link listens (again): anything cached before may be stale, so all of
   * it is dropped and the known refs are read again, which covers every change
   * made so far (acknowledged after the refs are in: a creation the control
   * plane waits for is then known here). Loaded after LISTEN, so a creation
   * committed meanwhile is in the answer or notified, or both.
   */
  async #connected(): Promise<void> {
    this.#clear()
    await this.#loadRefs(this.#known.begin())
    try {
      this.#acknowledge(await this.#readIssued(this.#notifications), true)
    } catch (error) {
      log.error('catalogue listener could not read the last catalogue change', error)
    }
  }

  /** One statement, a few bytes a project; on the link, so it follows its LISTEN. */
  async #loadRefs(load: number): Promise<void> {
    try {
      const { rows } = await this.#link.query<{ refs: string[] }>(`select coalesce(array_agg(ref), '{}') as refs from baseplane.projects`)
      this.#known.land(load, rows[0]!.refs)
    } catch (error) {
      if (this.#closed || !this.#known.pending(load)) return
      // A lost link loads again when it is back; a refused statement is tried again while the link stays up.
      log.error('catalogue listener could not read the refs of the projects; unknown refs are read from the catalogue meanwhile', error)
      setTimeout(() => {
        if (!this.#closed && this.#known.pending(load) && this.#link.listening) void this.#loadRefs(load)
      }, RELOAD_RETRY_MS).unref()
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
    // At once, before the check: the set may hold more than exists, never less.
    this.#known.note(ref)
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

  /** `listener` is told the ref of every project whose record changed (or went), after its cache entry is dropped. */
  onInvalidated(listener: (ref: string) => void): void {
    this.#invalidated.push(listener)
  }

  invalidate(ref: string): void {
    this.#generation += 1
    // A read not yet sent will see the change; one already sent may not, so later callers read again.
    if (!this.#queued.has(ref)) this.#loading.delete(ref)
    this.#projects.delete(ref)
    this.#missing.delete(ref)
    // After the entry is gone: a listener's read sees the change.
    for (const listener of this.#invalidated) listener(ref)
  }

  /** The cached record, if present and current; lets the hot path avoid a promise. */
  peek(ref: string): ProjectRecord | undefined {
    return this.#projects.get(ref)
  }

  /**
   * The cached record (also while the link is down: what this node knows),
   * else the catalogue's; undefined without a read for a ref outside the known
   * set while it is current.
   */
  async get(ref: string): Promise<ProjectRecord | undefined> {
    const project = this.#projects.get(ref)
    if (project !== undefined) return project
    if (this.#missing.get(ref) !== undefined) return undefined
    const known = this.#known.has(ref)
    if (!known && this.knowsEveryRef) return undefined
    return this.#read(ref, !known)
  }

  /** Reads `ref` from the catalogue now (coalescing concurrent reads, batching misses). */
  reload(ref: string): Promise<ProjectRecord | undefined> {
    return this.#read(ref, false)
  }

  #read(ref: string, unknown: boolean): Promise<ProjectRecord | undefined> {
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
    const pending: Pending = { promise, resolve, reject, unknown }
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
    let batch: Array<[string, Pending]> = []
    while (batch.length === 0) {
      for (const entry of this.#queued) {
        if (batch.length === this.#limits.batch) break
        batch.push(entry)
      }
      for (const [ref] of batch) this.#queued.delete(ref)
      if (batch.length === 0) {
        this.#reading = false
        return
      }
      if (batch.some(([, pending]) => pending.unknown) && !this.#unknownBudget.take()) batch = this.#refuseUnknown(batch)
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
            else if (current) {
              this.#missing.set(ref, true)
              // No change was notified while the statement was out, so the project is gone (or never was).
              this.#known.forget(ref)
            }
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

  /**
   * Past the budget, refs outside the known set are not read: 503 with
   * Retry-After (a ref may name a project created a moment ago, so not 404).
   * Returns the rest of the batch.
   */
  #refuseUnknown(batch: Array<[string, Pending]>): Array<[string, Pending]> {
    const rest: Array<[string, Pending]> = []
    for (const entry of batch) {
      const [ref, pending] = entry
      if (!pending.unknown) {
        rest.push(entry)
        continue
      }
      if (this.#loading.get(ref) === pending) this.#loading.delete(ref)
      pending.reject(platformErrors.catalogueUnavailable())
    }
    return rest
  }

  async close(): Promise<void> {
    this.#closed = true
    // The link first, so no acknowledgement brings the row back. Bounded: a stop
    // does not wait on a catalogue that hangs (the row then ages out of the live nodes).
    await this.#link.close()
    await probeFailure(this.#catalogue.query('delete from baseplane.nodes where id = $1', [this.#nodeId]), LINK_DEADLINE_MS)
  }
}
