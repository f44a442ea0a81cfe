// One Realtime socket's conversation, as realtime-js holds it: the `phoenix`
// heartbeat; channels joined (`phx_join`), left (`phx_leave`) and ended
// (`phx_close`); broadcasts with `self` and `ack`; presence `track` and
// `untrack`; `access_token` checking the caller again. Each channel runs as
// the caller its token names (or the socket's apikey): a token that expires
// ends the channel with a `system` message, then `phx_close`, as Supabase
// Realtime does.
import type { ProjectRecord } from '../../lib/catalogue.ts'
import { callerOf } from '../../lib/jwt.ts'
import { log } from '../../lib/log.ts'
import type { RequestIdentity } from '../../lib/roles.ts'
import { encodeFrame, type PhoenixMessage, type UserBroadcast } from '../../workers/realtime/frames.ts'
import { joinConfigOf, type JoinConfig } from '../../workers/realtime/join.ts'
import { newRef, type PresenceDiff, type PresenceEntries, type Tracker } from '../../workers/realtime/presence.ts'
import { expiredToken, reasonOf, refusals, tokenRefusal, type Refusal } from '../../workers/realtime/reasons.ts'
import type { ChannelReads } from './authorization.ts'
import type { RealtimeHub, SocketLink } from './hub.ts'
import { payloadBytes, type ProjectRealtime } from './limits.ts'
import { channelKey, socketTopic } from './topics.ts'

/** A token's expiry is checked again at least this often (a timer cannot wait for a far `exp`). */
const EXPIRY_CHECK_CEILING_MS = 60 * 60 * 1000

interface Channel {
  readonly topic: string
  readonly key: string
  readonly joinRef: string | null
  readonly config: JoinConfig
  readonly tracker: Tracker
  identity: RequestIdentity
  token: string | undefined
  presence: boolean
  expiry?: NodeJS.Timeout
  /** A private channel's policies for its caller: reads checked at the join, each write at its first use. */
  policies?: ChannelPolicies
  /** Leaves the node's change feed (hub.changes). */
  leaveChanges?: () => void
}

interface ChannelPolicies {
  reads: ChannelReads
  broadcastWrite?: Promise<boolean>
  presenceWrite?: Promise<boolean>
}

/** The channel's name as its policies see it (`realtime.topic()`): the topic without `realtime:`. */
const subTopicOf = (topic: string): string => topic.slice('realtime:'.length)



/** A join's answer: the channel, or the refusal its reply carries. */
type Joined = { channel: Channel } | { refusal: Refusal }

export interface SessionOptions {
  project: ProjectRecord
  /** Who the socket's apikey names: a channel joined without a token runs as it. */
  keyIdentity: RequestIdentity
  hub: RealtimeHub
  link: SocketLink
  /** The project's counters and limits on this node; the socket is counted already. */
  counters: ProjectRealtime
  /** Whether the socket is past the project's concurrent sockets (asked at every join, which is then refused with Realtime's reason). */
  overConnections?: () => boolean
}

export class RealtimeSession {
  #project: ProjectRecord
  readonly #keyIdentity: RequestIdentity
  readonly #hub: RealtimeHub
  readonly #link: SocketLink
  readonly #counters: ProjectRealtime
  readonly #overConnections: () => boolean
  readonly #channels = new Map<string, Channel>()
  /** Joins in flight, by topic: a second join of a topic waits for the first. */
  readonly #joining = new Map<string, Promise<unknown>>()
  #closed = false

  constructor(options: SessionOptions) {
    this.#project = options.project
    this.#keyIdentity = options.keyIdentity
    this.#hub = options.hub
    this.#link = options.link
    this.#counters = options.counters
    this.#overConnections = options.overConnections ?? (() => false)
  }

  /** Its project's ref. */
  get ref(): string {
    return this.#project.ref
  }

  /** The project's record as it is now (rotated keys, another plan): what later checks use. */
  projectChanged(fresh: ProjectRecord): void {
    this.#project = fresh
  }

  /** One message from the client. */
  receive(message: PhoenixMessage): void {
    if (message.topic === 'phoenix') {
      if (message.event === 'heartbeat') this.#reply(message, 'ok', {})
      return
    }
    if (message.event === 'phx_join') {
      const before = this.#joining.get(message.topic) ?? Promise.resolve()
      const joined = before.then(() => this.#join(message))
      this.#joining.set(message.topic, joined)
      void joined.finally(() => {
        if (this.#joining.get(message.topic) === joined) this.#joining.delete(message.topic)
      })
      return
    }
    const channel = this.#channels.get(message.topic)
    if (channel === undefined) {
      // Phoenix's answer to a message for a channel the socket has not joined.
      if (message.ref !== null) this.#reply(message, 'error', { reason: refusals.unmatchedTopic().message })
      return
    }
    switch (message.event) {
      case 'phx_leave':
        this.#leave(channel)
        this.#reply(message, 'ok', {})
        this.#push(channel, 'phx_close', {}, channel.joinRef)
        return
      case 'broadcast':
        return this.#broadcast(channel, message)
      case 'presence':
        return this.#presenceMessage(channel, message)
      case 'access_token':
        void this.#accessToken(channel, message.payload)
        return
      default:
        // Supabase Realtime ignores what it does not know, and so does this.
        return
    }
  }

  /** The socket is gone: its presences leave every channel. */
  closed(): void {
    this.#closed = true
    for (const channel of this.#channels.values()) this.#forget(channel)
    this.#channels.clear()
  }

  async #join(message: PhoenixMessage): Promise<void> {
    const joined = await this.#admit(message).catch((error: unknown): Joined => {
      log.error('realtime join failed', error, { ref: this.#project.ref })
      return { refusal: { code: 'UnknownErrorOnChannel', message: 'Unknown Error on Channel' } }
    })
    if (this.#closed) return
    if ('refusal' in joined) return this.#reply(message, 'error', { reason: reasonOf(joined.refusal) })
    const { channel } = joined
    // Joining a topic again replaces the channel (realtime-js rejoins after a reconnect of the channel).
    const before = this.#channels.get(channel.topic)
    if (before) this.#leave(before)
    this.#channels.set(channel.topic, channel)
    this.#link.subscribe(socketTopic(this.#link.vsn, channel.key))
    this.#armExpiry(channel)
    if (this.#hub.bus.fleet) {
      // Answered once NATS has the channel's subscription: what another node sends after the reply reaches this socket.
      await this.#hub.bus.flushed()
      if (this.#closed || this.#channels.get(channel.topic) !== channel) return
    }
    const bindings = channel.config.postgresChanges.map((binding, i) => ({ ...binding, id: i + 1 }))
    this.#reply(message, 'ok', { postgres_changes: bindings })
    // Every channel counts (a broadcast from SQL needs the project's reader too); its bindings get their changes.
    channel.leaveChanges = this.#hub.changes.join({
      project: this.#project,
      topic: channel.topic,
      bindings: channel.config.postgresChanges,
      identity: () => channel.identity,
      push: (event, payload) => this.#push(channel, event, payload),
    })
    if (channel.presence && (channel.policies?.reads.presence ?? true)) this.#push(channel, 'presence_state', this.#hub.presence.state(channel.key))
    if (channel.policies && channel.config.broadcast.replay) await this.#replay(channel, channel.config.broadcast.replay)
  }

  /** A private channel's kept broadcasts since `since`, before anything newer (Supabase's broadcast replay). */
  async #replay(channel: Channel, replay: { since: number; limit: number }): Promise<void> {
    const authorization = this.#hub.authorization
    if (!authorization) return
    const kept = await authorization.replay(this.#project, channel.identity, subTopicOf(channel.topic), replay.since, replay.limit).catch((error: unknown) => {
      log.error('realtime replay failed', error, { ref: this.#project.ref })
      return []
    })
    if (this.#channels.get(channel.topic) !== channel) return
    for (const message of kept) {
      const broadcast: UserBroadcast = { type: 'broadcast', event: message.event, payload: message.binary ?? message.payload, meta: { id: message.id, replayed: true } }
      this.#push(channel, 'broadcast', broadcast as unknown as Record<string, unknown>)
    }
  }

  async #admit(message: PhoenixMessage): Promise<Joined> {
    const topic = message.topic
    if (!topic.startsWith('realtime:') || topic === 'realtime:') return { refusal: refusals.topicRequired() }
    const config = joinConfigOf(message.payload)
    if (this.#overConnections()) return { refusal: refusals.tooManyConnections() }
    if (!this.#channels.has(topic) && this.#channels.size >= this.#counters.limits.channelsPerConnection) return { refusal: refusals.tooManyChannels() }
    if (!this.#counters.take('joins')) return { refusal: refusals.tooManyJoins() }
    const verified = await this.#identify(config.accessToken)
    if ('refusal' in verified) return verified
    let policies: ChannelPolicies | undefined
    if (config.private) {
      const reads = await this.#reads(verified.identity, topic)
      if ('refusal' in reads) return reads
      policies = { reads }
    }
    return {
      channel: {
        topic,
        key: channelKey(this.#project.ref, topic, config.private),
        joinRef: message.joinRef ?? message.ref,
        config,
        tracker: { id: newRef(), key: config.presence.key || crypto.randomUUID() },
        identity: verified.identity,
        token: config.accessToken,
        presence: config.presence.enabled,
        ...(policies ? { policies } : {}),
      },
    }
  }

  /** What the caller may read on the private channel `topic`; refused when not even its broadcasts. */
  async #reads(identity: RequestIdentity, topic: string): Promise<ChannelReads | { refusal: Refusal }> {
    const authorization = this.#hub.authorization
    if (!authorization) return { refusal: refusals.privateNotServed() }
    const reads = await authorization.reads(this.#project, identity, subTopicOf(topic)).catch((error: unknown) => {
      log.error('realtime authorization failed', error, { ref: this.#project.ref })
      return undefined
    })
    if (reads === undefined) return { refusal: refusals.notAuthorized() }
    // Supabase Realtime lets a private channel be joined by who may read its broadcasts.
    if (!reads.broadcast) return { refusal: refusals.unreadable(subTopicOf(topic)) }
    return reads
  }

  /** Whether the caller may send `extension` on the private channel: checked once, then kept until its token changes. */
  #mayWrite(channel: Channel, extension: 'broadcast' | 'presence'): Promise<boolean> {
    const policies = channel.policies
    const authorization = this.#hub.authorization
    if (policies === undefined) return Promise.resolve(true)
    if (authorization === undefined) return Promise.resolve(false)
    const key = extension === 'broadcast' ? 'broadcastWrite' : 'presenceWrite'
    policies[key] ??= authorization.mayWrite(this.#project, channel.identity, subTopicOf(channel.topic), extension).catch((error: unknown) => {
      log.error('realtime authorization failed', error, { ref: this.#project.ref })
      // Not kept: the next send asks again.
      delete policies[key]
      return false
    })
    return policies[key]
  }

  async #identify(token: string | undefined): Promise<{ identity: RequestIdentity } | { refusal: Refusal }> {
    if (token === undefined) return { identity: this.#keyIdentity }
    try {
      return { identity: await callerOf(this.#project, token) }
    } catch (error) {
      return { refusal: tokenRefusal(error, token) }
    }
  }

  /** Ends the channel when its token's `exp` passes (checked again at least hourly). */
  #armExpiry(channel: Channel): void {
    clearTimeout(channel.expiry)
    const exp = channel.identity.claims.exp
    if (typeof exp !== 'number') return
    const left = exp * 1000 - Date.now()
    channel.expiry = setTimeout(
      () => {
        if (this.#channels.get(channel.topic) !== channel) return
        if (exp * 1000 > Date.now()) return this.#armExpiry(channel)
        this.#shutdown(channel, expiredToken(channel.token ?? '').message)
      },
      Math.min(Math.max(left, 0), EXPIRY_CHECK_CEILING_MS),
    )
    channel.expiry.unref()
  }

  async #accessToken(channel: Channel, payload: unknown): Promise<void> {
    const token = (payload as { access_token?: unknown } | undefined)?.access_token
    if (typeof token !== 'string' || token === '' || token.startsWith('sb_') || token === channel.token) return
    const verified = await this.#identify(token)
    if (this.#closed || this.#channels.get(channel.topic) !== channel) return
    if ('refusal' in verified) return this.#shutdown(channel, verified.refusal.message)
    if (channel.policies) {
      // Another caller: the policies are asked again, as Supabase Realtime does.
      const reads = await this.#reads(verified.identity, channel.topic)
      if (this.#closed || this.#channels.get(channel.topic) !== channel) return
      if ('refusal' in reads) return this.#shutdown(channel, reads.refusal.message)
      channel.policies = { reads }
    }
    channel.identity = verified.identity
    channel.token = token
    this.#armExpiry(channel)
  }

  #broadcast(channel: Channel, message: PhoenixMessage): void {
    const sent = message.payload as Partial<UserBroadcast> | undefined
    if (sent?.type !== 'broadcast' || typeof sent.event !== 'string') return
    if (payloadBytes(sent.payload) > this.#counters.limits.payloadBytes) {
      if (channel.config.broadcast.ack) this.#reply(message, 'error', { reason: reasonOf(refusals.payloadTooLarge()) })
      return
    }
    if (!this.#counters.take('messages')) return this.#shutdown(channel, refusals.tooManyMessages().message)
    const broadcast: UserBroadcast = { type: 'broadcast', event: sent.event, payload: sent.payload ?? {} }
    const persist = sent.meta?.persist
    if (channel.policies === undefined) return this.#deliver(channel, message, broadcast)
    // A private channel: the policies decide the first send (in order: every send waits on the same answer).
    if (persist !== undefined && persist !== false) return void this.#store(channel, message, broadcast)
    void this.#mayWrite(channel, 'broadcast').then((allowed) => {
      if (!allowed || this.#channels.get(channel.topic) !== channel) return
      this.#deliver(channel, message, broadcast)
    })
  }

  #deliver(channel: Channel, message: PhoenixMessage, broadcast: UserBroadcast): void {
    const out: PhoenixMessage = { joinRef: null, ref: null, topic: channel.topic, event: 'broadcast', payload: broadcast }
    this.#hub.fanOut(channel.key, out, this.#link)
    if (channel.config.broadcast.self) {
      const frame = encodeFrame(this.#link.vsn, out)
      if (frame) this.#link.send(frame)
    }
    if (channel.config.broadcast.ack) this.#reply(message, 'ok', {})
  }

  /**
   * A broadcast kept for replay (`persist`): stored in realtime.messages as the
   * caller (the policies decide), from where the project's change reader
   * delivers it, with its id, to every subscriber (the sender too: the row is its).
   */
  async #store(channel: Channel, message: PhoenixMessage, broadcast: UserBroadcast): Promise<void> {
    const authorization = this.#hub.authorization
    const payload = broadcast.payload
    const stored = await authorization
      ?.store(this.#project, channel.identity, subTopicOf(channel.topic), broadcast.event, payload instanceof Uint8Array ? undefined : payload, payload instanceof Uint8Array ? payload : undefined)
      .catch((error: unknown) => {
        log.error('realtime store failed', error, { ref: this.#project.ref })
        return undefined
      })
    if (channel.config.broadcast.ack && this.#channels.get(channel.topic) === channel) {
      this.#reply(message, stored ? 'ok' : 'error', stored ? {} : { reason: reasonOf(refusals.unwritable(subTopicOf(channel.topic))) })
    }
  }

  #presenceMessage(channel: Channel, message: PhoenixMessage): void {
    if (!this.#counters.take('presence')) return this.#shutdown(channel, refusals.tooManyPresence().message)
    if (channel.policies === undefined) return this.#presence(channel, message)
    void this.#mayWrite(channel, 'presence').then((allowed) => {
      if (this.#channels.get(channel.topic) !== channel) return
      if (allowed) return this.#presence(channel, message)
      this.#reply(message, 'error', { reason: reasonOf(refusals.unwritable(subTopicOf(channel.topic))) })
    })
  }

  #presence(channel: Channel, message: PhoenixMessage): void {
    const sent = (message.payload ?? {}) as { event?: unknown; payload?: unknown }
    if (sent.event === 'track') {
      const meta = sent.payload
      if (!meta || typeof meta !== 'object' || Array.isArray(meta)) return this.#reply(message, 'error', { reason: refusals.presencePayload().message })
      // Tracking turns presence on for a channel that joined without it: it is sent the state first.
      if (!channel.presence) {
        channel.presence = true
        this.#push(channel, 'presence_state', this.#hub.presence.state(channel.key))
      }
      this.#diff(channel, this.#hub.presence.track(channel.key, channel.tracker, meta as Record<string, unknown>))
    } else if (sent.event === 'untrack') {
      this.#diff(channel, this.#hub.presence.untrack(channel.key, channel.tracker))
    }
    this.#reply(message, 'ok', {})
  }

  #diff(channel: Channel, diff: PresenceDiff | undefined): void {
    if (diff === undefined) return
    this.#hub.fanOut(channel.key, { joinRef: null, ref: null, topic: channel.topic, event: 'presence_diff', payload: diff })
  }

  /** The channel ends: a `system` message saying why, then `phx_close`. */
  #shutdown(channel: Channel, why: string): void {
    this.#system(channel, 'system', 'error', why)
    this.#leave(channel)
    this.#push(channel, 'phx_close', {}, channel.joinRef)
  }

  #system(channel: Channel, extension: string, status: 'ok' | 'error', text: string): void {
    this.#push(channel, 'system', { message: text, status, extension, channel: channel.topic.slice('realtime:'.length) })
  }

  #leave(channel: Channel): void {
    this.#forget(channel)
    this.#channels.delete(channel.topic)
    this.#link.unsubscribe(socketTopic(this.#link.vsn, channel.key))
  }

  /** What the channel leaves behind on this node: its presence (everyone else is told) and its timer. */
  #forget(channel: Channel): void {
    clearTimeout(channel.expiry)
    channel.leaveChanges?.()
    this.#diff(channel, this.#hub.presence.untrack(channel.key, channel.tracker))
  }

  #reply(to: PhoenixMessage, status: 'ok' | 'error', response: unknown): void {
    this.#send({ joinRef: to.joinRef, ref: to.ref, topic: to.topic, event: 'phx_reply', payload: { status, response } })
  }

  #push(channel: Channel, event: string, payload: PresenceEntries | Record<string, unknown>, ref: string | null = null): void {
    this.#send({ joinRef: channel.joinRef, ref, topic: channel.topic, event, payload })
  }

  #send(message: PhoenixMessage): void {
    if (this.#closed) return
    const frame = encodeFrame(this.#link.vsn, message)
    if (frame) this.#link.send(frame)
  }
}
