// Every ref that names a project, as this node knows it (issue 36 item 10), so
// a flood of made-up refs is answered 404 from memory: an attacker never
// repeats a ref, so the directory's cache of misses alone let each one cost a
// catalogue read.
//
// The set is loaded in one statement once the node's catalogue link listens,
// and kept current by that link's change feed: a notified ref is added at once
// (before the notification is verified or acknowledged, so a creation the
// control plane reports done is in the set of every node that acknowledged
// it). It may hold more than exists (a deleted project, a forged notification),
// never less: a ref in the set costs the usual read, which drops it when the
// catalogue has no such project. A deletion is not told apart from any other
// change, so that read is what prunes. While the link is down (or silent past
// a beat's answer) or the set is being (re)loaded, nothing is current: the
// directory reads the catalogue for unknown refs again, within ReadBudget.

export class KnownRefs {
  #refs = new Set<string>()
  /** Refs noted while a load is out, which its answer (a snapshot taken earlier) may lack. */
  #noted: Set<string> | undefined
  #loaded = false
  /** Whether a load ever landed: the node has had the set since (/ready, node-probes.ts). */
  #everLoaded = false
  /** Numbers the loads, so only the last one begun lands. */
  #loads = 0

  /** Whether the set was loaded on the link's current connection (the caller checks that the link is up). */
  get loaded(): boolean {
    return this.#loaded
  }

  /** Whether any load has landed since the node started (a reload after an outage keeps it true). */
  get everLoaded(): boolean {
    return this.#everLoaded
  }

  get size(): number {
    return this.#refs.size
  }

  /** Whether `ref` may name a project; meaningful only while `loaded`. */
  has(ref: string): boolean {
    return this.#refs.has(ref)
  }

  /** The feed named `ref`: it may exist from now on. */
  note(ref: string): void {
    this.#refs.add(ref)
    this.#noted?.add(ref)
  }

  /** The catalogue has no project `ref`, read with no change notified meanwhile. */
  forget(ref: string): void {
    this.#refs.delete(ref)
    this.#noted?.delete(ref)
  }

  /** A load starts (the link listens again): nothing is current until it lands. Returns its number for land(). */
  begin(): number {
    this.#loaded = false
    this.#noted = new Set()
    return ++this.#loads
  }

  /** The load numbered `load` answered `refs`; ignored when another began since. */
  land(load: number, refs: readonly string[]): void {
    if (load !== this.#loads) return
    const fresh = new Set(refs)
    for (const ref of this.#noted ?? []) fresh.add(ref)
    this.#refs = fresh
    this.#noted = undefined
    this.#loaded = true
    this.#everLoaded = true
  }

  /** Whether `load` is still the last one begun (a failed load is retried only then). */
  pending(load: number): boolean {
    return load === this.#loads && !this.#loaded
  }
}

/**
 * At most `reads` catalogue statements per `intervalMs` for refs the node does
 * not know while its set is not current, node-wide (a fixed window): an outage
 * of the feed must not turn a flood of made-up refs back into a read each.
 */
export class ReadBudget {
  readonly #reads: number
  readonly #intervalMs: number
  #windowStart = 0
  #spent = 0

  constructor(reads: number, intervalMs: number) {
    this.#reads = reads
    this.#intervalMs = intervalMs
  }

  /** Spends one read if the window has one left. */
  take(now = Date.now()): boolean {
    if (now - this.#windowStart >= this.#intervalMs) {
      this.#windowStart = now
      this.#spent = 0
    }
    if (this.#spent >= this.#reads) return false
    this.#spent += 1
    return true
  }
}
