// The data plane's view of the catalogue: project records cached in memory,
// dropped the moment the catalogue notifies a change (the control plane's
// trigger sends `baseplane_project_changed` with the ref at commit). If the
// listening connection drops, notifications may have been missed, so the
// whole cache is dropped and the connection re-established.
import pg from 'pg'
import { readProject, type ProjectRecord } from '../lib/catalogue.ts'
import { log } from '../lib/log.ts'

const CHANNEL = 'baseplane_project_changed'
/** How long "no such project" is remembered (a creation notifies and clears it sooner). */
const MISSING_TTL_MS = 5000

interface Cached {
  project: ProjectRecord | undefined
  loadedAt: number
}

export class ProjectDirectory {
  readonly #catalogue: pg.Pool
  readonly #defaultServerUrl: string
  readonly #databaseUrl: string
  readonly #cache = new Map<string, Cached>()
  readonly #loading = new Map<string, Promise<ProjectRecord | undefined>>()
  readonly #listeners = new Set<(ref: string) => void>()
  /** Bumped on every invalidation, so a read that raced a change is not cached. */
  #generation = 0
  #listener: pg.Client | undefined
  #closed = false
  #retry: NodeJS.Timeout | undefined

  constructor(databaseUrl: string, catalogue: pg.Pool) {
    this.#databaseUrl = databaseUrl
    this.#defaultServerUrl = databaseUrl
    this.#catalogue = catalogue
  }

  async start(): Promise<void> {
    await this.#listen()
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
    client.on('notification', (message) => {
      if (message.payload) this.invalidate(message.payload)
    })
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
    // Anything cached before the listener was up may be stale.
    this.#cache.clear()
  }

  /** Called on every change of `ref`; used by tests and by components keeping derived state. */
  onChange(listener: (ref: string) => void): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  invalidate(ref: string): void {
    this.#generation += 1
    this.#loading.delete(ref)
    this.#cache.delete(ref)
    for (const listener of this.#listeners) listener(ref)
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
      loading = readProject(this.#catalogue, ref, this.#defaultServerUrl).then(
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
    const listener = this.#listener
    this.#listener = undefined
    await listener?.end().catch(() => {})
  }
}
