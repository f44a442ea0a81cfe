// Long-lived HTTP/2 sessions to one origin, shared by every request to it.
// Streams per session follow the peer's SETTINGS_MAX_CONCURRENT_STREAMS (APNs
// allows one until it has seen a valid token, then typically 1000); when every
// session is full, a new one opens up to `maxSessions`, then requests wait.
import http2 from 'node:http2'
import { AnswerBoundError, ByteBudget } from '../../../lib/bounded-body.ts'

/**
 * The most body bytes kept of one answer (lib/bounded-body.ts). APNs' and FCM's answers are a few
 * hundred bytes of JSON, but a Web Push endpoint is any URL a subscriber gave: past this the
 * stream is cancelled, so a hostile endpoint costs a stream's worth, not what it can push.
 */
export const MAX_ANSWER_BYTES = 256 * 1024

export interface Http2PoolOptions {
  maxSessions?: number
  /** Per-request deadline; the stream is cancelled after it (checked at least once a second). */
  requestTimeoutMs?: number
  /** Ceiling on streams per session even if the peer allows more. */
  maxStreamsPerSession?: number
  /** Body bytes kept of one answer (MAX_ANSWER_BYTES): past it the stream is cancelled and the request fails. */
  maxAnswerBytes?: number
}

export interface Http2Response {
  status: number
  headers: http2.IncomingHttpHeaders
  body: string
  /** Stops new streams on the session that answered (e.g. after APNs 500/503: retry on a new connection). */
  retireSession?: () => void
}

/** The caller withdrew the request while it waited for a stream (nothing was sent). */
export class CancelledError extends Error {
  constructor() {
    super('request withdrawn before it was sent')
    this.name = 'CancelledError'
  }
}

export class TransportError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'TransportError'
  }
}

/** The origin does not speak HTTP/2 (no h2 in ALPN, or no SETTINGS in answer to the preface). */
export class Http1OnlyError extends TransportError {
  constructor(origin: string) {
    super(`${origin} does not speak HTTP/2`)
    this.name = 'Http1OnlyError'
  }
}

const NOT_H2_ERRORS = new Set(['ERR_SSL_TLSV1_ALERT_NO_APPLICATION_PROTOCOL', 'ERR_HTTP2_ERROR', 'ERR_HTTP2_SESSION_ERROR'])

interface Entry {
  session: http2.ClientHttp2Session
  ready: boolean
  closed: boolean
  active: number
  limit: number
  /** Retires this session; made once per session and handed out with each of its responses. */
  retire: () => void
}

/** A stream in flight and when it is cancelled. */
interface Deadline {
  stream: http2.ClientHttp2Stream
  at: number
}

interface Waiter {
  resolve: (entry: Entry) => void
  reject: (err: Error) => void
}

export class Http2Pool {
  readonly origin: string
  readonly #entries: Entry[] = []
  readonly #waiters: Waiter[] = []
  readonly #maxSessions: number
  readonly #timeout: number
  readonly #maxStreams: number
  readonly #maxAnswerBytes: number
  #closed = false
  /**
   * Deadlines of the streams in flight, swept by one timer: a timer per
   * stream (stream.setTimeout) costs an allocation and timer-list work on
   * every one of thousands of requests a second.
   */
  readonly #deadlines = new Set<Deadline>()
  #sweeper: NodeJS.Timeout | undefined
  /** Set once the origin turned out to speak only HTTP/1.1. */
  http1Only = false

  constructor(origin: string, options: Http2PoolOptions = {}) {
    this.origin = origin
    this.#maxSessions = options.maxSessions ?? 4
    this.#timeout = options.requestTimeoutMs ?? 10000
    this.#maxStreams = options.maxStreamsPerSession ?? 1000
    this.#maxAnswerBytes = options.maxAnswerBytes ?? MAX_ANSWER_BYTES
  }

  /** Streams in flight across sessions (for tests and the benchmark). */
  get inFlight(): number {
    return this.#entries.reduce((n, e) => n + e.active, 0)
  }

  get sessions(): number {
    return this.#entries.length
  }

  /** `cancelled` is asked once a stream is free: true withdraws the request unsent. */
  request(headers: http2.OutgoingHttpHeaders, body: string | Buffer, cancelled?: () => boolean): Promise<Http2Response> {
    // A free stream slot (the usual case) is taken without waiting: no promise, no microtask.
    const free = this.#closed || this.http1Only ? undefined : this.#free()
    if (free !== undefined) {
      free.active++
      return this.#sendOn(free, headers, body, cancelled)
    }
    return this.#waitForSlot().then((entry) => this.#sendOn(entry, headers, body, cancelled))
  }

  /** Sends on `entry`, whose stream slot is already counted; the slot is given back when the stream closes. */
  #sendOn(entry: Entry, headers: http2.OutgoingHttpHeaders, body: string | Buffer, cancelled?: () => boolean): Promise<Http2Response> {
    if (cancelled?.()) {
      this.#release(entry)
      return Promise.reject(new CancelledError())
    }
    return new Promise((resolve, reject) => {
      let stream: http2.ClientHttp2Stream
      try {
        stream = entry.session.request(headers, { endStream: false })
      } catch (err) {
        this.#release(entry)
        this.#retire(entry)
        reject(new TransportError((err as Error).message))
        return
      }
      let status = 0
      let responseHeaders: http2.IncomingHttpHeaders | undefined
      // Most answers have no body (APNs 200): chunks are counted as they come and decoded once, at the end.
      let answer: ByteBudget | undefined
      let overLimit: AnswerBoundError | undefined
      const deadline = this.#track(stream)
      stream.on('response', (h, flags) => {
        status = Number(h[':status'])
        responseHeaders = h
        // Headers that end the stream (APNs' 200) have no body: no reader at all then, and the
        // stream still ends and closes; otherwise the body is buffered until this listener comes.
        if ((flags & http2.constants.NGHTTP2_FLAG_END_STREAM) === 0) {
          stream.on('data', (chunk: Buffer) => {
            if (overLimit !== undefined) return
            try {
              ;(answer ??= new ByteBudget(this.#maxAnswerBytes)).add(chunk)
            } catch (error) {
              overLimit = error as AnswerBoundError
              stream.close(http2.constants.NGHTTP2_CANCEL)
            }
          })
        }
      })
      stream.on('error', (err) => reject(new TransportError(err.message)))
      // 'close' comes last whatever happened: the one place that settles and frees the slot.
      stream.on('close', () => {
        this.#deadlines.delete(deadline)
        this.#release(entry)
        if (overLimit !== undefined) {
          reject(new TransportError(overLimit.message))
          return
        }
        // A stream cancelled before any answer (the deadline), or reset mid-body, is no response.
        if (status === 0 || !stream.readableEnded) {
          reject(new TransportError(`stream closed without a complete response (code ${stream.rstCode ?? 'none'})`))
          return
        }
        const text = answer === undefined ? '' : answer.concat().toString('utf8')
        resolve({ status, headers: responseHeaders!, body: text, retireSession: entry.retire })
      })
      stream.end(body)
    })
  }

  #release(entry: Entry): void {
    entry.active--
    this.#drain()
  }

  #track(stream: http2.ClientHttp2Stream): Deadline {
    const deadline = { stream, at: Date.now() + this.#timeout }
    this.#deadlines.add(deadline)
    if (this.#sweeper === undefined) {
      this.#sweeper = setInterval(() => this.#sweep(), Math.min(1000, this.#timeout))
      this.#sweeper.unref()
    }
    return deadline
  }

  #sweep(): void {
    const now = Date.now()
    for (const deadline of this.#deadlines) {
      if (deadline.at > now) continue
      this.#deadlines.delete(deadline)
      deadline.stream.close(http2.constants.NGHTTP2_CANCEL)
    }
    if (this.#deadlines.size === 0) {
      clearInterval(this.#sweeper)
      this.#sweeper = undefined
    }
  }

  /** Every session full (or none yet): the next slot #drain frees, its count already taken. */
  #waitForSlot(): Promise<Entry> {
    if (this.#closed) return Promise.reject(new TransportError('pool closed'))
    if (this.http1Only) return Promise.reject(new Http1OnlyError(this.origin))
    return new Promise((resolve, reject) => {
      this.#waiters.push({ resolve, reject })
      this.#grow()
    })
  }

  #free(): Entry | undefined {
    let best: Entry | undefined
    for (const e of this.#entries) {
      if (e.ready && !e.closed && e.active < e.limit && (best === undefined || e.active < best.active)) best = e
    }
    return best
  }

  #grow(): void {
    const connecting = this.#entries.some((e) => !e.ready && !e.closed)
    if (!connecting && this.#entries.length < this.#maxSessions) this.#connect()
  }

  #connect(): void {
    const session = http2.connect(this.origin, { maxSessionMemory: 64, peerMaxConcurrentStreams: 1 })
    const entry: Entry = { session, ready: false, closed: false, active: 0, limit: 1, retire: () => this.#retire(entry) }
    this.#entries.push(entry)
    session.on('remoteSettings', (settings) => {
      entry.limit = Math.max(1, Math.min(settings.maxConcurrentStreams ?? this.#maxStreams, this.#maxStreams))
      entry.ready = true
      this.#drain()
    })
    let connected = false
    const notH2 = () => {
      this.http1Only = true
      this.#retire(entry)
      for (const waiter of this.#waiters.splice(0)) waiter.reject(new Http1OnlyError(this.origin))
    }
    session.on('connect', () => {
      connected = true
      // TLS without h2 in ALPN: an HTTP/1.1-only server.
      if (this.origin.startsWith('https:') && session.alpnProtocol !== 'h2') notH2()
    })
    session.on('goaway', () => this.#retire(entry))
    session.on('close', () => {
      // Connected, then closed without ever sending SETTINGS: it did not understand the HTTP/2 preface.
      if (connected && !entry.ready && !entry.closed && !this.http1Only && !this.#closed) return notH2()
      this.#retire(entry)
    })
    session.on('error', (err: Error & { code?: string }) => {
      const neverReady = !entry.ready
      if (neverReady && err.code !== undefined && NOT_H2_ERRORS.has(err.code)) return notH2()
      this.#retire(entry)
      // A session that never came up fails the requests waiting for it, rather than looping on connects.
      if (neverReady && !this.#entries.some((e) => e.ready && !e.closed)) {
        for (const waiter of this.#waiters.splice(0)) waiter.reject(new TransportError(err.message))
      }
    })
  }

  #retire(entry: Entry): void {
    if (entry.closed) return
    entry.closed = true
    const index = this.#entries.indexOf(entry)
    if (index >= 0) this.#entries.splice(index, 1)
    if (!entry.session.closed) entry.session.close()
    this.#drain()
  }

  #drain(): void {
    while (this.#waiters.length > 0) {
      const free = this.#free()
      if (!free) break
      free.active++
      this.#waiters.shift()!.resolve(free)
    }
    if (this.#waiters.length > 0 && !this.#closed) {
      // Every ready session is full: open another if allowed (APNs spreads load over connections).
      // Not while a session still has a one-stream limit: APNs lifts it once a token is accepted.
      const allFull = this.#entries.every((e) => e.ready && e.limit > 1 && e.active >= e.limit)
      if (allFull) this.#grow()
    }
  }

  async close(): Promise<void> {
    this.#closed = true
    clearInterval(this.#sweeper)
    this.#sweeper = undefined
    for (const waiter of this.#waiters.splice(0)) waiter.reject(new TransportError('pool closed'))
    await Promise.all(
      this.#entries.splice(0).map(
        (e) =>
          new Promise<void>((resolve) => {
            e.closed = true
            if (e.session.closed || e.session.destroyed) return resolve()
            const timer = setTimeout(() => {
              e.session.destroy()
              resolve()
            }, 2000)
            e.session.close(() => {
              clearTimeout(timer)
              resolve()
            })
          }),
      ),
    )
  }
}
