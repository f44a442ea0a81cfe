// How many connections one process holds to each PostgreSQL server, counted
// across all of its worker threads. Each thread keeps its own pg connections
// (they cannot cross threads), so the count lives in a SharedArrayBuffer made
// once in the main thread and handed to every worker: a thread takes a unit
// before it opens a connection and gives it back once the connection is closed.
//
// When a server's budget is spent, the thread that needs a connection first
// closes its own least recently used idle connection to that server; when it
// has none it raises "pressure" (a waiter count in the buffer) and waits. Every
// thread checks the pressure of the servers it holds idle connections to, on
// its releases and on a short timer, and closes idle ones for the waiters
// (lib/db/project-pools.ts). Busy connections are never taken.
//
// A server's budget is the fleet's: the nodes alive on the catalogue share it,
// so each process takes budget / live nodes (server/fleet-size.ts keeps the
// count in the header; every thread reads it on each acquisition, so a node
// joining or leaving resizes every pool at once, the surplus closing as idle
// connections age out).
//
// Layout (Int32): a header [magic, slots, live nodes], then one slot per server:
// [state, key length, open, waiters, freeing, releases, key bytes...].
import { databaseErrors } from './database-errors.ts'

const MAGIC = 0x42504363
const HEADER = 3
const NODES = 2
const STATE = 0
const KEY_LENGTH = 1
const OPEN = 2
const WAITERS = 3
const FREEING = 4
const RELEASES = 5
const FIELDS = 6
/** host:port in UTF-8: a DNS name is at most 253 bytes. */
const KEY_BYTES = 320
const SLOT = FIELDS + KEY_BYTES / 4

const EMPTY = 0
const CLAIMING = 1
const READY = 2

export const DEFAULT_SERVER_SLOTS = 64

/** The buffer every thread of a process shares: one per process, made in the main thread. */
export function createConnectionBudget(servers: number = DEFAULT_SERVER_SLOTS): SharedArrayBuffer {
  if (!Number.isInteger(servers) || servers < 1) throw new RangeError(`servers must be a positive whole number, got ${servers}`)
  const buffer = new SharedArrayBuffer((HEADER + servers * SLOT) * 4)
  const words = new Int32Array(buffer)
  words[0] = MAGIC
  words[1] = servers
  words[NODES] = 1
  return buffer
}

type WaitAsync = (array: Int32Array, index: number, value: number, timeout: number) => { async: boolean; value: unknown }
// Node 20 has Atomics.waitAsync; the ES2022 type library does not declare it.
const waitAsync = (Atomics as unknown as { waitAsync?: WaitAsync }).waitAsync

/** One server's counters, seen from one thread. */
export class ServerBudget {
  readonly key: string
  readonly #words: Int32Array
  readonly #base: number

  constructor(words: Int32Array, base: number, key: string) {
    this.#words = words
    this.#base = base
    this.key = key
  }

  /** Connections this process holds (or is opening) to the server, all threads together. */
  get open(): number {
    return Atomics.load(this.#words, this.#base + OPEN)
  }

  /** Connection requests waiting for a unit (in any thread) that nobody is freeing one for yet. */
  get unserved(): number {
    return Atomics.load(this.#words, this.#base + WAITERS) - Atomics.load(this.#words, this.#base + FREEING)
  }

  get waiting(): number {
    return Atomics.load(this.#words, this.#base + WAITERS)
  }

  /** Data-plane processes sharing the server's budget (the fleet's live nodes), at least 1. */
  get nodes(): number {
    return Math.max(1, Atomics.load(this.#words, NODES))
  }

  /** This process's part of a fleet-wide figure: at least 1. */
  shareOf(fleetLimit: number): number {
    return Math.max(1, Math.floor(fleetLimit / this.nodes))
  }

  /** Takes a unit if fewer than this process's share of `limit` (the server's fleet-wide budget) are taken. */
  tryAcquire(limit: number): boolean {
    const index = this.#base + OPEN
    const share = this.shareOf(limit)
    for (;;) {
      const open = Atomics.load(this.#words, index)
      if (open >= share) return false
      if (Atomics.compareExchange(this.#words, index, open, open + 1) === open) return true
    }
  }

  /** Gives a unit back (its connection is closed) and wakes the waiters. */
  release(): void {
    Atomics.sub(this.#words, this.#base + OPEN, 1)
    this.#wake()
  }

  /**
   * Takes on freeing one unit for a waiter, unless enough are already being
   * freed (so several threads seeing the same pressure do not all close one).
   * Must be followed by freed() once that connection is closed, or unclaim().
   */
  claimFree(): boolean {
    const index = this.#base + FREEING
    for (;;) {
      const freeing = Atomics.load(this.#words, index)
      if (freeing >= Atomics.load(this.#words, this.#base + WAITERS)) return false
      if (Atomics.compareExchange(this.#words, index, freeing, freeing + 1) === freeing) return true
    }
  }

  /** The connection claimed with claimFree() is closed: its unit goes to the waiters. */
  freed(): void {
    Atomics.sub(this.#words, this.#base + OPEN, 1)
    Atomics.sub(this.#words, this.#base + FREEING, 1)
    this.#wake()
  }

  /**
   * Waits until a unit can be taken, for at most `timeoutMillis`. `evictOwn`
   * closes one of this thread's idle connections to the server and resolves
   * true (its unit passes to the caller), or resolves false when there is none.
   * Throws database_busy when the time is up.
   */
  async acquire(limit: number, timeoutMillis: number, evictOwn: () => Promise<boolean>): Promise<void> {
    if (this.tryAcquire(limit)) return
    if (await evictOwn()) return
    const deadline = Date.now() + timeoutMillis
    Atomics.add(this.#words, this.#base + WAITERS, 1)
    try {
      for (;;) {
        const seen = Atomics.load(this.#words, this.#base + RELEASES)
        if (this.tryAcquire(limit)) return
        // This thread may have released a connection to idle since the last look.
        if (await evictOwn()) return
        const left = deadline - Date.now()
        if (left <= 0) throw databaseErrors.busy(timeoutMillis)
        // Other threads notify on every release; the short bound also covers a
        // unit given back by a thread that closed a connection without waking anyone.
        await this.#waitForRelease(seen, Math.min(left, 50))
      }
    } finally {
      Atomics.sub(this.#words, this.#base + WAITERS, 1)
    }
  }

  #wake(): void {
    Atomics.add(this.#words, this.#base + RELEASES, 1)
    Atomics.notify(this.#words, this.#base + RELEASES)
  }

  async #waitForRelease(seen: number, timeoutMillis: number): Promise<void> {
    if (waitAsync !== undefined) {
      const result = waitAsync(this.#words, this.#base + RELEASES, seen, timeoutMillis)
      if (result.async) await result.value
      return
    }
    await new Promise((resolve) => setTimeout(resolve, timeoutMillis))
  }
}

export interface ServerBudgetSnapshot {
  server: string
  open: number
  waiting: number
}

/** One thread's view of the shared budget. */
export class ConnectionBudget {
  readonly #words: Int32Array
  readonly #bytes: Uint8Array
  readonly #slots: number
  readonly #servers = new Map<string, ServerBudget>()

  constructor(buffer: SharedArrayBuffer) {
    this.#words = new Int32Array(buffer)
    this.#bytes = new Uint8Array(buffer)
    if (this.#words[0] !== MAGIC) throw new TypeError('not a connection budget buffer (make it with createConnectionBudget)')
    this.#slots = this.#words[1]!
  }

  /** The fleet's live nodes, which divide every server's budget (server/fleet-size.ts sets it). */
  get nodes(): number {
    return Math.max(1, Atomics.load(this.#words, NODES))
  }

  set nodes(count: number) {
    if (!Number.isInteger(count) || count < 1) throw new RangeError(`nodes must be a positive whole number, got ${count}`)
    Atomics.store(this.#words, NODES, count)
  }

  /** The counters of server `key` (host:port), claiming a free slot the first time any thread names it. */
  server(key: string): ServerBudget {
    let server = this.#servers.get(key)
    if (server === undefined) {
      server = new ServerBudget(this.#words, this.#slotOf(key), key)
      this.#servers.set(key, server)
    }
    return server
  }

  /** Every server some thread has named, with the process's counts (tests, the benchmark). */
  snapshot(): ServerBudgetSnapshot[] {
    const servers: ServerBudgetSnapshot[] = []
    for (let slot = 0; slot < this.#slots; slot++) {
      const base = HEADER + slot * SLOT
      if (Atomics.load(this.#words, base + STATE) !== READY) continue
      const key = this.#keyAt(base)
      const server = this.server(key)
      servers.push({ server: key, open: server.open, waiting: server.waiting })
    }
    return servers
  }

  #slotOf(key: string): number {
    const encoded = new TextEncoder().encode(key)
    if (encoded.length > KEY_BYTES) throw new RangeError(`server key is longer than ${KEY_BYTES} bytes: ${key.slice(0, 40)}...`)
    for (let slot = 0; slot < this.#slots; slot++) {
      const base = HEADER + slot * SLOT
      let state = Atomics.load(this.#words, base + STATE)
      if (state === EMPTY) {
        state = Atomics.compareExchange(this.#words, base + STATE, EMPTY, CLAIMING)
        if (state === EMPTY) {
          this.#bytes.set(encoded, (base + FIELDS) * 4)
          Atomics.store(this.#words, base + KEY_LENGTH, encoded.length)
          Atomics.store(this.#words, base + STATE, READY)
          return base
        }
      }
      // Another thread is writing this slot's key: it takes a few instructions.
      while (state === CLAIMING) state = Atomics.load(this.#words, base + STATE)
      if (this.#keyAt(base) === key) return base
    }
    throw new RangeError(`the connection budget has room for ${this.#slots} database servers; all are taken`)
  }

  #keyAt(base: number): string {
    const length = Atomics.load(this.#words, base + KEY_LENGTH)
    const start = (base + FIELDS) * 4
    // TextDecoder refuses views of shared memory: copy the bytes out first.
    return new TextDecoder().decode(this.#bytes.slice(start, start + length))
  }
}
