// This node's part in Postgres Changes and broadcasts from SQL. A project with
// channels here wants a change reader (the reader thread takes the project's
// lease if it is free: one reader across the fleet); the last channel gone,
// it no longer does, and an idle project ends up with no replication
// connection and no slot. What the reader on this node decodes is published
// on the bus (`rtc.<ref>`) for the other nodes and delivered here; what a
// reader elsewhere publishes is delivered here to this node's subscribers.
// Rows of realtime.messages become broadcasts through hub.fanOut, on the
// reader's node only (fanOut crosses nodes itself).
import type pg from 'pg'
import type { ProjectRecord } from '../../../lib/catalogue.ts'
import { log } from '../../../lib/log.ts'
import type { RequestIdentity } from '../../../lib/roles.ts'
import type { ChangeBatch, ReaderStatus, SqlBroadcast } from '../../../workers/realtime/changes/messages.ts'
import type { ChangeReaders } from '../../../workers/realtime/changes/reader-thread.ts'
import type { PostgresChangesBinding } from '../../../workers/realtime/join.ts'
import type { RealtimeBus } from '../bus.ts'
import type { RealtimeHub } from '../hub.ts'
import { channelKey } from '../topics.ts'
import { BindingError, checkBindings } from './bindings.ts'
import { checkPool } from './check-pool.ts'
import { deliver, type Subscriber, type TimedChange } from './delivery.ts'

/** A joined channel, as the session hands it over. */
export interface ChangeChannel {
  project: ProjectRecord
  topic: string
  bindings: readonly PostgresChangesBinding[]
  identity(): RequestIdentity
  push(event: 'postgres_changes' | 'system', payload: Record<string, unknown>): void
}

/** What a session needs: a channel joined; the answer is called when it leaves. */
export interface ChannelChanges {
  join(channel: ChangeChannel): () => void
}

/** No change reading (a node:http engine, a test without it): channels join and hear no changes. */
export const NO_CHANGES: ChannelChanges = { join: () => () => {} }

/** Supabase Realtime's message once changes flow to a channel. */
const SUBSCRIBED = 'Subscribed to PostgreSQL'
/** How often a reader's node tells the fleet its reader streams, for channels that joined elsewhere since. */
const STATUS_EVERY_MS = 5000

interface ChannelSubscriber extends Subscriber {
  channel: ChangeChannel
  ready: boolean
  announced: boolean
  refused: boolean
}

interface ProjectChanges {
  project: ProjectRecord
  channels: number
  subscribers: Set<ChannelSubscriber>
  pool: pg.Pool
  status: ReaderStatus | undefined
  /** The node whose reader `status` is from: another node's is another reader (its node died), whose channels hear again that changes flow. */
  statusFrom: string | undefined
  /** Whether the reader streaming is this node's. */
  local: boolean
  queue: TimedChange[]
  draining: boolean
  leaveBus: () => void
}

interface Envelope {
  from: string
  batch?: ChangeBatch
  status?: ReaderStatus
}

const subject = (ref: string) => `rtc.${ref}`
const encoder = new TextEncoder()
const decoder = new TextDecoder()

export class ChangeFeed implements ChannelChanges {
  readonly #hub: RealtimeHub
  readonly #bus: RealtimeBus
  readonly #nodeId: string
  readonly #projects = new Map<string, ProjectChanges>()
  readonly #startReaders: (feed: ChangeFeed) => Promise<ChangeReaders>
  #readers: ChangeReaders | undefined
  #starting: Promise<ChangeReaders | undefined> | undefined
  #closed = false
  readonly #statusTimer: NodeJS.Timeout

  /** `startReaders`: starts the node's reader thread, its events to this feed; called when a first channel joins. */
  constructor(hub: RealtimeHub, startReaders: (feed: ChangeFeed) => Promise<ChangeReaders>) {
    this.#hub = hub
    this.#bus = hub.bus
    this.#nodeId = hub.nodeId
    this.#startReaders = startReaders
    this.#statusTimer = setInterval(() => this.#repeatStatus(), STATUS_EVERY_MS)
    this.#statusTimer.unref()
  }

  /** The reader thread, once started (tests end it to see it replaced). */
  get readers(): ChangeReaders | undefined {
    return this.#readers
  }

  async close(): Promise<void> {
    this.#closed = true
    clearInterval(this.#statusTimer)
    for (const state of this.#projects.values()) {
      state.leaveBus()
      void state.pool.end().catch(() => {})
    }
    this.#projects.clear()
    await (await this.#starting)?.stop()
  }

  /** The thread is started on the first want (a node whose sockets never join a channel runs none). */
  #want(ref: string): void {
    if (this.#readers) return this.#readers.want(ref)
    this.#starting ??= this.#startReaders(this).then(
      (readers) => {
        this.#readers = readers
        if (this.#closed) return readers
        for (const wanted of this.#projects.keys()) readers.want(wanted)
        return readers
      },
      (error: unknown) => {
        log.error('realtime change reader thread did not start', error)
        this.#starting = undefined
        return undefined
      },
    )
  }

  join(channel: ChangeChannel): () => void {
    const state = this.#project(channel.project)
    state.channels++
    let subscriber: ChannelSubscriber | undefined
    if (channel.bindings.length > 0) {
      const added: ChannelSubscriber = {
        channel,
        bindings: [],
        identity: channel.identity,
        push: (payload) => channel.push('postgres_changes', payload),
        ready: false,
        announced: false,
        refused: false,
      }
      subscriber = added
      state.subscribers.add(added)
      checkBindings(state.pool, channel.bindings).then(
        (bindings) => {
          added.bindings = bindings
          added.ready = true
          this.#tell(state, added)
        },
        (error: unknown) => {
          added.refused = true
          state.subscribers.delete(added)
          if (!(error instanceof BindingError)) log.error('realtime bindings not checked', error, { ref: channel.project.ref })
          this.#system(channel, 'error', error instanceof BindingError ? error.message : 'Unable to subscribe to changes: the database did not answer')
        },
      )
    }
    let left = false
    return () => {
      if (left) return
      left = true
      if (subscriber) state.subscribers.delete(subscriber)
      if (--state.channels === 0) this.#drop(state)
    }
  }

  /** A transaction decoded by this node's reader. */
  onBatch(batch: ChangeBatch): void {
    const state = this.#projects.get(batch.ref)
    const rows = batch.changes.filter((c) => c.kind === 'row')
    if (this.#bus.fleet && rows.length > 0) this.#publish(batch.ref, { from: this.#nodeId, batch: { ...batch, changes: rows } })
    for (const change of batch.changes) if (change.kind === 'broadcast') this.#broadcast(batch.ref, change)
    if (state) this.#enqueue(state, batch)
  }

  /** How this node's reader of a project stands. */
  onStatus(status: ReaderStatus): void {
    const state = this.#projects.get(status.ref)
    if (state) {
      state.local = status.state !== 'stopped'
      this.#setStatus(state, status, this.#nodeId)
    }
    if (this.#bus.fleet) this.#publish(status.ref, { from: this.#nodeId, status })
  }

  #project(project: ProjectRecord): ProjectChanges {
    let state = this.#projects.get(project.ref)
    if (state) return state
    const created: ProjectChanges = {
      project,
      channels: 0,
      subscribers: new Set(),
      pool: checkPool(project),
      status: undefined,
      statusFrom: undefined,
      local: false,
      queue: [],
      draining: false,
      leaveBus: () => {},
    }
    state = created
    this.#projects.set(project.ref, created)
    if (this.#bus.fleet) created.leaveBus = this.#bus.subscribe(subject(project.ref), (data) => this.#heard(created, data))
    this.#want(project.ref)
    return created
  }

  #drop(state: ProjectChanges): void {
    this.#projects.delete(state.project.ref)
    state.leaveBus()
    this.#readers?.unwant(state.project.ref)
    void state.pool.end().catch(() => {})
  }

  #heard(state: ProjectChanges, data: Uint8Array): void {
    let envelope: Envelope
    try {
      envelope = JSON.parse(decoder.decode(data)) as Envelope
    } catch {
      return
    }
    if (envelope.from === this.#nodeId || this.#projects.get(state.project.ref) !== state) return
    if (envelope.status && !state.local) this.#setStatus(state, envelope.status, envelope.from)
    if (envelope.batch) this.#enqueue(state, envelope.batch)
  }

  #publish(ref: string, envelope: Envelope): void {
    this.#bus.publish(subject(ref), encoder.encode(JSON.stringify(envelope)))
  }

  #repeatStatus(): void {
    if (!this.#bus.fleet) return
    for (const state of this.#projects.values()) if (state.local && state.status) this.#publish(state.project.ref, { from: this.#nodeId, status: state.status })
  }

  #setStatus(state: ProjectChanges, status: ReaderStatus, from: string): void {
    const before = state.status
    // A reader on another node than the last status's: the old one ended without a word (its node died).
    const replaced = state.statusFrom !== undefined && state.statusFrom !== from
    state.status = status
    state.statusFrom = from
    for (const subscriber of state.subscribers) {
      // A reader started again (another slot): its channels hear that changes flow again.
      if (status.state === 'stopped' || replaced) subscriber.announced = false
      if (status.state !== 'stopped' && (before?.state !== status.state || !subscriber.announced)) this.#tell(state, subscriber)
    }
  }

  /** A checked subscriber hears how its changes stand, once per state. */
  #tell(state: ProjectChanges, subscriber: ChannelSubscriber): void {
    const status = state.status
    if (!subscriber.ready || status === undefined || subscriber.announced) return
    if (status.state === 'streaming') {
      subscriber.announced = true
      this.#system(subscriber.channel, 'ok', SUBSCRIBED)
    } else if (status.state === 'unavailable') {
      subscriber.announced = true
      this.#system(subscriber.channel, 'error', status.message)
    }
  }

  #system(channel: ChangeChannel, status: 'ok' | 'error', message: string): void {
    channel.push('system', { message, status, extension: 'postgres_changes', channel: channel.topic.slice('realtime:'.length) })
  }

  #broadcast(ref: string, change: SqlBroadcast): void {
    const topic = `realtime:${change.topic}`
    const payload = change.binary ? new Uint8Array(Buffer.from(change.payload as string, 'base64')) : change.payload
    this.#hub.fanOut(channelKey(ref, topic, change.private), {
      joinRef: null,
      ref: null,
      topic,
      event: 'broadcast',
      payload: { type: 'broadcast', event: change.event, payload, meta: { id: change.id } },
    })
  }

  #enqueue(state: ProjectChanges, batch: ChangeBatch): void {
    for (const change of batch.changes) if (change.kind === 'row') state.queue.push({ change, commitTimestamp: batch.commitTimestamp, xid: batch.xid })
    void this.#drain(state)
  }

  /** Delivers the queue in order; what arrives during a check is checked together after it. */
  async #drain(state: ProjectChanges): Promise<void> {
    if (state.draining) return
    state.draining = true
    try {
      while (state.queue.length > 0) {
        const changes = state.queue.splice(0)
        const subscribers = [...state.subscribers].filter((s) => s.ready)
        if (subscribers.length === 0) continue
        await deliver(state.pool, changes, subscribers).catch((error: unknown) => log.error('realtime changes not delivered', error, { ref: state.project.ref, changes: changes.length }))
      }
    } finally {
      state.draining = false
    }
  }
}
