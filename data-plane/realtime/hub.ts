// This node's Realtime: which sockets hear which channel, and the presence
// they track. Delivery is uWebSockets.js's own publish: a channel's sockets
// subscribe to one uWS topic per protocol version (a frame differs by
// version), named by the project's ref and the channel's topic, so one
// project's `realtime:room` is never another's.
import type { PhoenixMessage, ProtocolVersion, OutgoingFrame } from '../../workers/realtime/frames.ts'
import { encodeFrame, PROTOCOL_VERSIONS } from '../../workers/realtime/frames.ts'
import { PresenceTable } from '../../workers/realtime/presence.ts'
import { NO_BUS, type RealtimeBus } from './bus.ts'
import { NO_CHANGES, type ChannelChanges } from './changes/feed.ts'
import { RealtimeSession, type SessionOptions } from './session.ts'
import { socketTopic } from './topics.ts'

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
}

/** Until the HTTP engine attaches its server (a node:http engine never does: it serves no sockets). */
const NO_SERVER: TopicServer = { publish: () => {}, subscribers: () => 0 }

export class RealtimeHub {
  readonly presence = new PresenceTable()
  readonly nodeId: string
  readonly bus: RealtimeBus
  /** Postgres Changes and broadcasts from SQL (changes/feed.ts), set by the platform once its reader thread runs. */
  changes: ChannelChanges = NO_CHANGES
  #server: TopicServer = NO_SERVER
  readonly #sessions = new Map<RealtimeSession, SocketLink>()

  constructor(options: HubOptions) {
    this.nodeId = options.nodeId
    this.bus = options.bus ?? NO_BUS
  }

  /** The uWS app whose publish delivers to this node's sockets. */
  attach(server: TopicServer): void {
    this.#server = server
  }

  /** The session of a socket just opened. */
  open(options: Omit<SessionOptions, 'hub'>): RealtimeSession {
    const session = new RealtimeSession({ ...options, hub: this })
    this.#sessions.set(session, options.link)
    return session
  }

  /** A socket closed: its session's presences leave. */
  closed(session: RealtimeSession): void {
    this.#sessions.delete(session)
    session.closed()
  }

  /** Ends every socket (the node stops): realtime-js reconnects, to another node where there is one. */
  closeAll(code: number, reason: string): void {
    for (const [session, link] of [...this.#sessions]) {
      this.closed(session)
      link.end(code, reason)
    }
  }

  /**
   * `message` to every socket on the channel `key`, each in its version's
   * frame (made only where a version has listeners); `except` (the sender)
   * left out.
   */
  fanOut(key: string, message: PhoenixMessage, except?: SocketLink): void {
    for (const vsn of PROTOCOL_VERSIONS) {
      const topic = socketTopic(vsn, key)
      if (this.#server.subscribers(topic) === 0) continue
      const frame = encodeFrame(vsn, message)
      if (frame === undefined) continue
      if (except) except.publish(topic, frame)
      else this.#server.publish(topic, frame.data, frame.binary)
    }
  }
}
