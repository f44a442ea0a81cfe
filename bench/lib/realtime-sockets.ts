// bench:realtime's client sockets, one kind per side: Baseplane (Phoenix
// vsn 2.0.0 over the `ws` package: phx_join, then kind 4 frames read in
// place), the bare uWS server (the same `ws` client and frames, no join: the
// server subscribes every subscriber as it opens) and socket.io (the
// socket.io-client package, websocket transport only). A subscriber hands
// each delivery's sequence number and send time to `onTick`; a publisher
// sends one broadcast at a time, as realtime-js's channel.send(), the bare
// server's publisher or socket.io's emit would.
import WebSocket from 'ws'
import { importPeer } from './peers.ts'
import { EVENT, readUserBroadcast, ROOM, tickPayload, TOPIC, userBroadcast, userBroadcastPush, type Tick, type TickPayload } from './realtime-wire.ts'

export type Side = 'baseplane' | 'uws' | 'socketio'

/** Where a side's sockets connect. */
export interface Target {
  side: Side
  /** Baseplane: the project's realtime socket URL with apikey and vsn; uWS: ws://host:port; socket.io: http://host:port. */
  url: string
  /** Baseplane: the token a channel joins with (realtime-js sends the anon key when nobody is signed in). */
  token?: string
}

export interface Subscriber {
  /** Why each attempt that ended before the socket was subscribed failed (it was opened again). */
  retries: string[]
  close(): void
}

export interface Publisher {
  send(seq: number, sentMicros: number): void
  close(): void
}

/** What the harness uses of socket.io-client (it lives in bench/peers, outside the type-checked tree). */
interface IoSocket {
  on(event: string, listener: (...args: never[]) => void): void
  once(event: string, listener: (...args: never[]) => void): void
  emit(event: string, ...args: unknown[]): void
  emitWithAck(event: string, ...args: unknown[]): Promise<unknown>
  disconnect(): void
}
type Io = (url: string, options: Record<string, unknown>) => IoSocket

let io: Io | undefined
async function socketIo(): Promise<Io> {
  io ??= (await importPeer<{ io: Io }>('socket.io-client')).io
  return io
}

/** Heartbeats as realtime-js sends them (every 25 s): Baseplane closes a socket silent for 60 s. */
const HEARTBEAT_MS = 25_000
/** A socket that ends before it is subscribed is opened again this often at most (docs/realtime.md: about one first socket in a hundred ends with 1006). */
const ATTEMPTS = 5

function phoenixJoin(token: string | undefined): string {
  const config = { broadcast: { ack: false, self: false }, presence: { enabled: false, key: '' }, postgres_changes: [], private: false }
  return JSON.stringify(['1', '1', TOPIC, 'phx_join', token ? { config, access_token: token } : { config }])
}

/** A `ws` socket open (and on Baseplane, its channel joined); rejects if it ends first. */
function openPhoenix(target: Target, role: 'sub' | 'pub'): Promise<WebSocket> {
  const url = target.side === 'uws' ? `${target.url}/?role=${role}` : target.url
  const ws = new WebSocket(url, { perMessageDeflate: false })
  return new Promise((resolve, reject) => {
    ws.once('error', reject)
    ws.once('close', (code) => reject(new Error(`socket closed: ${code}`)))
    ws.once('open', () => {
      if (target.side === 'uws') return resolve(ws)
      ws.on('message', function joined(data: Buffer, isBinary: boolean) {
        if (isBinary) return
        const [, ref, topic, event, payload] = JSON.parse(data.toString()) as [unknown, unknown, unknown, unknown, { status?: string; response?: unknown }]
        if (ref !== '1' || topic !== TOPIC || event !== 'phx_reply') return
        ws.off('message', joined)
        if (payload.status === 'ok') resolve(ws)
        else reject(new Error(`phx_join refused: ${JSON.stringify(payload.response)}`))
      })
      ws.send(phoenixJoin(target.token))
    })
  }).then(
    () => {
      ws.removeAllListeners('error').removeAllListeners('close')
      ws.on('error', () => {})
      return ws
    },
    (error: unknown) => {
      ws.terminate()
      throw error
    },
  )
}

/** Opens with retries; returns the socket and why the attempts before it failed. */
export async function withRetries<T>(open: () => Promise<T>): Promise<{ socket: T; retries: string[] }> {
  const retries: string[] = []
  for (;;) {
    try {
      return { socket: await open(), retries }
    } catch (error) {
      if (retries.length === ATTEMPTS - 1) throw error
      retries.push(error instanceof Error ? error.message : String(error))
    }
  }
}

export function heartbeats(ws: WebSocket): NodeJS.Timeout {
  let ref = 1
  // Spread over the interval so that a thousand sockets do not beat at once.
  const timer = setInterval(() => ws.send(JSON.stringify([null, `hb${++ref}`, 'phoenix', 'heartbeat', {}])), HEARTBEAT_MS + Math.random() * 1000)
  timer.unref()
  return timer
}

/**
 * One subscriber of `target`'s channel. `onTick` is handed the same object
 * each time (and the frame, where there is one to compare); `onLost` is
 * called if the socket ends before close().
 */
export async function subscribe(target: Target, onTick: (tick: Tick, frame: Uint8Array | undefined) => void, onLost: () => void): Promise<Subscriber> {
  const tick: Tick = { seq: 0, sent: 0 }
  if (target.side === 'socketio') {
    const connect = await socketIo()
    const { socket, retries } = await withRetries(() => openSocketIo(connect, target.url))
    await socket.emitWithAck('join', ROOM)
    socket.on(EVENT, (payload: TickPayload) => {
      tick.seq = Number(payload.seq)
      tick.sent = Number(payload.sent)
      onTick(tick, undefined)
    })
    let closing = false
    socket.on('disconnect', () => closing || onLost())
    return {
      retries,
      close: () => {
        closing = true
        socket.disconnect()
      },
    }
  }
  const { socket: ws, retries } = await withRetries(() => openPhoenix(target, 'sub'))
  ws.on('message', (data: Buffer, isBinary: boolean) => {
    if (isBinary && readUserBroadcast(data, tick)) onTick(tick, data)
  })
  const beat = heartbeats(ws)
  let closing = false
  ws.on('close', () => closing || onLost())
  return {
    retries,
    close: () => {
      closing = true
      clearInterval(beat)
      ws.terminate()
    },
  }
}

function openSocketIo(connect: Io, url: string): Promise<IoSocket> {
  // forceNew: one connection per subscriber (io() would otherwise multiplex them all over one).
  const socket = connect(url, { transports: ['websocket'], forceNew: true, reconnection: false })
  return new Promise((resolve, reject) => {
    socket.once('connect', () => resolve(socket))
    socket.once('connect_error', (error: Error) => {
      socket.disconnect()
      reject(error)
    })
  })
}

/** The side's publisher: realtime-js's kind 3 frame to Baseplane, Baseplane's kind 4 frame to the bare server, an emit to socket.io. */
export async function publisher(target: Target, payloadBytes: number): Promise<Publisher> {
  const json = (seq: number, sent: number) => JSON.stringify(tickPayload(seq, sent, payloadBytes))
  if (target.side === 'socketio') {
    const connect = await socketIo()
    const { socket } = await withRetries(() => openSocketIo(connect, target.url))
    return { send: (seq, sent) => socket.emit('pub', tickPayload(seq, sent, payloadBytes)), close: () => socket.disconnect() }
  }
  const { socket: ws } = await withRetries(() => openPhoenix(target, 'pub'))
  const beat = heartbeats(ws)
  const frame = target.side === 'baseplane' ? (seq: number, sent: number) => userBroadcastPush('1', String(seq), json(seq, sent)) : (seq: number, sent: number) => userBroadcast(json(seq, sent))
  return {
    send: (seq, sent) => ws.send(frame(seq, sent), { binary: true }),
    close: () => {
      clearInterval(beat)
      ws.terminate()
    },
  }
}
