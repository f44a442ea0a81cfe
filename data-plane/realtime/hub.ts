// This node's Realtime: which sockets hear which channel, and the presence
// they track. Delivery is uWebSockets.js's own publish: a channel's sockets
// subscribe to one uWS topic per protocol version (a frame differs by
// version), named by the project's ref and the channel's topic, so one
// project's `realtime:room` is never another's.
//
// On a fleet (a bus given), what fanOut delivers here is also published once
// on the channel's bus subject, which a node listens to while it has sockets
// on the channel; each node that hears it makes its own sockets' frames. A
// presence change instead goes to every node with the state it changes
// (fleet-presence.ts), since every node holds the fleet's presence.
import type { PhoenixMessage, ProtocolVersion, OutgoingFrame } from '../../workers/realtime/frames.ts'
import { encodeFrame, PROTOCOL_VERSIONS } from '../../workers/realtime/frames.ts'
import { PresenceTable, type PresenceDiff } from '../../workers/realtime/presence.ts'
import type { ProjectRecord } from '../../lib/catalogue.ts'
import type { RealtimeAuthorization } from './authorization.ts'
import { NO_BUS, type RealtimeBus } from './bus.ts'
import { NO_CHANGES, type ChannelChanges } from './changes/feed.ts'
import { decodeChannel, encodeChannel } from './envelope.ts'
import { FleetPresence } from './fleet-presence.ts'
import { RealtimeLimitsTable, type ProjectRealtime } from './limits.ts'
import { RealtimeSession, type SessionOptions } from './session.ts'
import { channelSubject, socketTopic, topicOfKey } from './topics.ts'

/** What the hub needs of the server: uWS's App.publish and App.numSubscribers. */
export interface TopicServer {
  publish(topic: string, data: string | Uint8Array, binary: boolean): void
  subscribers(topic: string): number
}

/** What a session's socket can do (realtime-socket.ts gives a uWS WebSocket these). */
export interface SocketLink {
  readonly vsn: ProtocolVersion
  send(frame: OutgoingFrame): void
  subscribe(topic: string): void
  unsubscribe(topic: string): void
  /** To every other socket subscribed to `topic`. */
  publish(topic: string, frame: OutgoingFrame): void
  end(code: number, reason: string): void
}

export interface HubOptions {
  /** This node's id (the catalogue's), which marks what it sends to the others. */
  nodeId: string
  /** Between nodes; NO_BUS on one node. */
  bus?: RealtimeBus
  /** Checks private channels against the project's policies; without it, private channels are refused. */
  authorization?: RealtimeAuthorization
  /** The fleet's live nodes now, which divide each project's limits (1 when absent). */
  nodes?: () => number
}

/** Until the HTTP engine attaches its server (a node:http engine never does: it serves no sockets). */
const NO_SERVER: TopicServer = { publish: () => {}, subscribers: () => 0 }

/** The channel key of a uWS topic (`socketTopic`'s inverse). */
/** The close of a socket past the project's sockets when as many wait already (4429: as HTTP's 429). */
const TOO_MANY_SOCKETS = { code: 4429, reason: 'ConnectionRateLimitReached: Too many connected users' }

const keyOfSocketTopic = (topic: string): string => topic.slice(topic.indexOf('|') + 1)

/** A channel's bus subscription, held while this node has sockets on it. */
interface Listening {
  sockets: number
  stop: () => void
}

export class RealtimeHub {
  readonly presence: PresenceTable
  readonly nodeId: string
  readonly bus: RealtimeBus
  readonly authorization: RealtimeAuthorization | undefined
  /** Each project's sockets and rates on this node, against its plan's limits. */
  readonly limits: RealtimeLimitsTable
  /** Postgres Changes and broadcasts from SQL (changes/feed.ts), set by the platform once its reader thread runs. */
  changes: ChannelChanges = NO_CHANGES
  #server: TopicServer = NO_SERVER
  readonly #sessions = new Map<RealtimeSession, { link: SocketLink; counters: ProjectRealtime; counted: boolean; waiting: boolean }>()
  /** The uWS topics each session's socket is subscribed to (uWS drops them itself when the socket closes). */
  readonly #topics = new Map<RealtimeSession, Set<string>>()
  /** Channel key -> its bus subscription, on a fleet. */
  readonly #listening = new Map<string, Listening>()
  readonly #fleetPresence: FleetPresence | undefined

  constructor(options: HubOptions) {
    this.nodeId = options.nodeId
    this.bus = options.bus ?? NO_BUS
    this.authorization = options.authorization
    this.limits = new RealtimeLimitsTable(options.nodes)
    this.presence = new PresenceTable(this.nodeId)
    this.#fleetPresence = this.bus.fleet
      ? new FleetPresence({ table: this.presence, bus: this.bus, deliver: (key, diff) => this.#deliverDiff(key, diff) })
      : undefined
  }

  /** The uWS app whose publish delivers to this node's sockets. */
  attach(server: TopicServer): void {
    this.#server = server
  }

  /** The session of a socket just opened. */
  open(options: Omit<SessionOptions, 'hub' | 'counters' | 'overConnections'>): RealtimeSession {
    const counters = this.limits.of(options.project.ref, options.project.plan)
    // Past the project's sockets, the socket stays open and its joins are refused with the reason (as Supabase
    // answers); each join asks again, so once a place is free the socket is counted and its join let in.
    // As many may wait as the figure; past that a socket is closed as it opens (realtime-js connects again later).
    const topics = new Set<string>()
    const link = this.#counted(options.link, topics)
    const counted = counters.open()
    const waiting = !counted && counters.wait()
    const entry = { link, counters, counted, waiting }
    const overConnections = () => {
      if (entry.counted) return false
      entry.counted = counters.open()
      if (entry.counted && entry.waiting) {
        entry.waiting = false
        counters.waited()
      }
      return !entry.counted
    }
    const session = new RealtimeSession({ ...options, link, hub: this, counters, overConnections })
    this.#sessions.set(session, entry)
    this.#topics.set(session, topics)
    // Closed on the next turn, outside the handshake's own callback (see realtime-socket.ts open).
    if (!counted && !waiting) setImmediate(() => link.end(TOO_MANY_SOCKETS.code, TOO_MANY_SOCKETS.reason))
    return session
  }

  /** A socket closed: its session's presences leave. */
  closed(session: RealtimeSession): void {
    const entry = this.#sessions.get(session)
    if (entry === undefined) return
    this.#sessions.delete(session)
    if (entry.counted) entry.counters.close()
    if (entry.waiting) entry.counters.waited()
    session.closed()
    for (const topic of this.#topics.get(session) ?? []) this.#unlisten(keyOfSocketTopic(topic))
    this.#topics.delete(session)
  }

  /** Ends every socket (the node stops): realtime-js reconnects, to another node where there is one. */
  closeAll(code: number, reason: string): void {
    for (const [session, { link }] of [...this.#sessions]) {
      this.closed(session)
      link.end(code, reason)
    }
  }

  /** Whether a socket of the project is open on this node. */
  serves(ref: string): boolean {
    for (const session of this.#sessions.keys()) if (session.ref === ref) return true
    return false
  }

  /**
   * The project's record changed: its sockets go on with the new one (its
   * keys, its plan), or close with the reason its upgrade would now be refused
   * with when it is suspended, paused or gone (realtime-js tries again, and is
   * let in once it is active).
   */
  projectChanged(ref: string, fresh: ProjectRecord | undefined): void {
    if (fresh === undefined) return this.closeProject(ref, 4404, 'project_not_found: No such project')
    if (fresh.state === 'suspended') return this.closeProject(ref, 4403, 'project_suspended: This project is suspended; its operator can resume it')
    if (fresh.state === 'paused') return this.closeProject(ref, 4403, 'project_paused: This project is paused; it is woken by its next request')
    for (const session of this.#sessions.keys()) if (session.ref === ref) session.projectChanged(fresh)
  }

  /** Ends the sockets of one project (suspended, paused, deleted): `reason` is what the client is told. */
  closeProject(ref: string, code: number, reason: string): void {
    for (const [session, { link }] of [...this.#sessions]) {
      if (session.ref !== ref) continue
      this.closed(session)
      link.end(code, reason)
    }
  }

  /** The node stops (after closeAll): the other nodes are told its presences are gone. */
  close(): void {
    this.#fleetPresence?.close()
    for (const listening of this.#listening.values()) listening.stop()
    this.#listening.clear()
  }

  /**
   * `message` to every socket on the channel `key`, each in its version's
   * frame (made only where a version has listeners); `except` (the sender)
   * left out. On a fleet, to every other node's sockets too.
   */
  fanOut(key: string, message: PhoenixMessage, except?: SocketLink): void {
    this.#deliver(key, message, except)
    if (!this.bus.fleet) return
    if (message.event === 'presence_diff') this.#fleetPresence?.changed(key, message.payload as PresenceDiff)
    else this.bus.publish(channelSubject(key), encodeChannel(this.nodeId, message))
  }

  /** To this node's sockets only. */
  #deliver(key: string, message: PhoenixMessage, except?: SocketLink): void {
    for (const vsn of PROTOCOL_VERSIONS) {
      const topic = socketTopic(vsn, key)
      if (this.#server.subscribers(topic) === 0) continue
      const frame = encodeFrame(vsn, message)
      if (frame === undefined) continue
      if (except) except.publish(topic, frame)
      else this.#server.publish(topic, frame.data, frame.binary)
    }
  }

  #deliverDiff(key: string, diff: PresenceDiff): void {
    this.#deliver(key, { joinRef: null, ref: null, topic: topicOfKey(key), event: 'presence_diff', payload: diff })
  }

  /** The socket's link, counting the channels it subscribes to so the hub listens on the bus while any socket here is on one. */
  #counted(link: SocketLink, topics: Set<string>): SocketLink {
    if (!this.bus.fleet) return link
    return {
      vsn: link.vsn,
      send: (frame) => link.send(frame),
      publish: (topic, frame) => link.publish(topic, frame),
      end: (code, reason) => link.end(code, reason),
      subscribe: (topic) => {
        link.subscribe(topic)
        if (topics.has(topic)) return
        topics.add(topic)
        this.#listen(keyOfSocketTopic(topic))
      },
      unsubscribe: (topic) => {
        link.unsubscribe(topic)
        if (!topics.delete(topic)) return
        this.#unlisten(keyOfSocketTopic(topic))
      },
    }
  }

  #listen(key: string): void {
    const listening = this.#listening.get(key)
    if (listening) {
      listening.sockets++
      return
    }
    const stop = this.bus.subscribe(channelSubject(key), (data) => {
      const { origin, message } = decodeChannel(data)
      if (origin !== this.nodeId) this.#deliver(key, message)
    })
    this.#listening.set(key, { sockets: 1, stop })
  }

  #unlisten(key: string): void {
    const listening = this.#listening.get(key)
    if (listening === undefined || --listening.sockets > 0) return
    listening.stop()
    this.#listening.delete(key)
  }
}
