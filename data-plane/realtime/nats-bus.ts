// The fleet's Realtime bus on NATS (BASEPLANE_NATS_URL). The node serves
// whether or not NATS answers, as Supabase's nodes do: it connects in the
// background at start (retrying every second, said once in the log), and
// when the connection breaks its sockets stay open and keep hearing what is
// sent on this node while the client reconnects. What is published while the
// bus is away is dropped and counted, not queued: a broadcast is of its
// moment (a cursor, a typing mark), and presence is made whole again on
// reconnection (fleet-presence.ts). One line when the bus breaks, one when it
// is back with what was not sent.
import { connect, Events, type NatsConnection, type Subscription } from 'nats'
import { describeError, log } from '../../lib/log.ts'
import type { BusHandler, RealtimeBus } from './bus.ts'

/** Between attempts of the first connection (the client itself retries after that). */
const CONNECT_RETRY_MS = 1000
/** Between the client's reconnection attempts, forever. */
const RECONNECT_WAIT_MS = 1000
/** A connection without an answer to 2 pings 5 s apart is taken as broken (a partition, not a refused connection, shows this way). */
const PING_INTERVAL_MS = 5000
const MAX_PINGS_OUT = 2
/** How long a stop waits for what was published to be flushed. */
const DRAIN_TIMEOUT_MS = 2000
/** How long `flushed` waits for NATS's answer (a connection that is breaking is not waited for longer). */
const FLUSH_TIMEOUT_MS = 1000

export interface NatsBusOptions {
  /** NATS servers (nats:// or tls:// URLs, credentials allowed). */
  servers: readonly string[]
  /** This node's id, shown to NATS as the connection's name. */
  nodeId: string
}

/** The servers as the log may show them: without credentials. */
export function shownServers(servers: readonly string[]): string {
  return servers
    .map((server) => {
      try {
        const url = new URL(server)
        url.username = ''
        url.password = ''
        return url.toString().replace(/\/$/, '')
      } catch {
        return '(not a URL)'
      }
    })
    .join(',')
}

export class NatsBus implements RealtimeBus {
  readonly fleet = true
  readonly #options: NatsBusOptions
  readonly #handlers = new Map<string, Set<BusHandler>>()
  readonly #subscriptions = new Map<string, Subscription>()
  readonly #listeners: Array<() => void> = []
  #connection: NatsConnection | undefined
  #connected = false
  /** Whether the log has said the bus is away (so it says when it is back). */
  #away = false
  #notSent = 0
  #closed = false
  #retry: NodeJS.Timeout | undefined

  constructor(options: NatsBusOptions) {
    this.#options = options
  }

  get connected(): boolean {
    return this.#connected
  }

  /** Starts connecting, in the background: the node does not wait for NATS to serve. */
  start(): void {
    void this.#connect()
  }

  publish(subject: string, data: Uint8Array): void {
    if (!this.#connected || this.#connection === undefined) {
      this.#notSent++
      return
    }
    try {
      this.#connection.publish(subject, data)
    } catch {
      // The client refuses while it is closing or its connection just broke: the same loss as away.
      this.#notSent++
    }
  }

  subscribe(subject: string, handler: BusHandler): () => void {
    let handlers = this.#handlers.get(subject)
    if (handlers === undefined) {
      this.#handlers.set(subject, (handlers = new Set()))
      this.#listen(subject)
    }
    handlers.add(handler)
    return () => {
      if (!handlers.delete(handler) || handlers.size > 0) return
      this.#handlers.delete(subject)
      this.#subscriptions.get(subject)?.unsubscribe()
      this.#subscriptions.delete(subject)
    }
  }

  async flushed(): Promise<void> {
    const connection = this.#connection
    if (!this.#connected || connection === undefined) return
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, FLUSH_TIMEOUT_MS)))
    await Promise.race([connection.flush().catch(() => {}), late])
    clearTimeout(timer)
  }

  onConnect(listener: () => void): void {
    this.#listeners.push(listener)
  }

  async close(): Promise<void> {
    this.#closed = true
    clearTimeout(this.#retry)
    const connection = this.#connection
    this.#connection = undefined
    this.#connected = false
    if (connection === undefined || connection.isClosed()) return
    const drained = connection.drain().catch(() => {})
    const late = new Promise<void>((resolve) => setTimeout(resolve, DRAIN_TIMEOUT_MS).unref())
    await Promise.race([drained, late])
    if (!connection.isClosed()) await connection.close().catch(() => {})
  }

  async #connect(): Promise<void> {
    while (!this.#closed) {
      try {
        const connection = await connect({
          servers: [...this.#options.servers],
          name: `baseplane ${this.#options.nodeId}`,
          // The node's sockets were sent its messages already: NATS need not send them back.
          noEcho: true,
          reconnect: true,
          maxReconnectAttempts: -1,
          reconnectTimeWait: RECONNECT_WAIT_MS,
          pingInterval: PING_INTERVAL_MS,
          maxPingOut: MAX_PINGS_OUT,
        })
        if (this.#closed) {
          await connection.close()
          return
        }
        this.#connection = connection
        for (const subject of this.#handlers.keys()) this.#listen(subject)
        void this.#watch(connection)
        this.#up()
        return
      } catch (error) {
        this.#down(error)
        await new Promise<void>((resolve) => (this.#retry = setTimeout(resolve, CONNECT_RETRY_MS)))
      }
    }
  }

  /** The client's reports: a break, a reconnection (it subscribes again by itself). */
  async #watch(connection: NatsConnection): Promise<void> {
    for await (const status of connection.status()) {
      if (this.#closed) return
      if (status.type === Events.Disconnect) this.#down(undefined)
      else if (status.type === Events.Reconnect) this.#up()
    }
  }

  #listen(subject: string): void {
    const connection = this.#connection
    if (connection === undefined || this.#subscriptions.has(subject)) return
    const subscription = connection.subscribe(subject, {
      callback: (error, message) => {
        if (error) return
        for (const handler of this.#handlers.get(subject) ?? []) {
          try {
            handler(message.data)
          } catch (thrown) {
            log.error('a Realtime message from another node could not be delivered', thrown, { subject })
          }
        }
      },
    })
    this.#subscriptions.set(subject, subscription)
  }

  #down(error: unknown): void {
    this.#connected = false
    if (this.#away || this.#closed) return
    this.#away = true
    log.error(
      "the Realtime bus (NATS) is away: each node's Realtime messages reach only its own sockets until it is back; retrying every second",
      // The client's reason alone (CONNECTION_REFUSED, ...): its stack says nothing an operator can act on.
      error === undefined ? undefined : describeError(error),
      { servers: shownServers(this.#options.servers) },
    )
  }

  #up(): void {
    this.#connected = true
    if (this.#away) {
      this.#away = false
      log.info('the Realtime bus (NATS) is back: Realtime messages cross nodes again', { servers: shownServers(this.#options.servers), notSent: this.#notSent })
    } else {
      log.debug('connected to the Realtime bus (NATS)', { servers: shownServers(this.#options.servers) })
    }
    this.#notSent = 0
    for (const listener of this.#listeners) listener()
  }
}
