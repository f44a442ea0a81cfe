// The one reader of answers from peers the platform calls on a tenant's
// behalf (Auth's send email hook, the operator webhook, Web Push endpoints,
// Google's certificates and token endpoints, FCM and APNs). Such a peer may be
// hostile or broken: reading its answer whole and measuring it afterwards
// (`response.text()`) lets it push hundreds of MiB into a thread every project
// shares, or hold the call open with a byte a second. So an answer is read
// under two bounds:
// - a byte limit, counted as the chunks arrive (ByteBudget): the first chunk
//   past it cancels the stream, which makes undici drop the connection, so the
//   bytes past the limit are never held;
// - one deadline over the whole exchange (connect, headers and body), so a
//   peer that trickles is cut like one that never answers.
// Past either, AnswerBoundError with a stable code; each caller maps it to its
// own documented error.

export type AnswerBound = 'answer_too_large' | 'answer_too_slow'

export class AnswerBoundError extends Error {
  readonly code: AnswerBound
  /** The bound that was passed: bytes for answer_too_large, milliseconds for answer_too_slow. */
  readonly limit: number

  constructor(code: AnswerBound, limit: number) {
    super(code === 'answer_too_large' ? `answer over ${limit} bytes` : `no complete answer within ${limit} ms`)
    this.name = 'AnswerBoundError'
    this.code = code
    this.limit = limit
  }
}

export interface AnswerBounds {
  /** The most bytes of body kept (a body of exactly this many is taken). */
  maxBytes: number
  /** From the request's start to the body's last byte. */
  timeoutMs: number
}

/** An answer's bytes counted against a limit as they arrive; the fetch reader and node streams (HTTP/2) share it. */
export class ByteBudget {
  readonly maxBytes: number
  readonly #chunks: Uint8Array[] = []
  #bytes = 0

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes
  }

  /** Keeps `chunk`, or throws AnswerBoundError (answer_too_large) when it would pass the limit (it is not kept then). */
  add(chunk: Uint8Array): void {
    if (this.#bytes + chunk.byteLength > this.maxBytes) throw new AnswerBoundError('answer_too_large', this.maxBytes)
    this.#bytes += chunk.byteLength
    this.#chunks.push(chunk)
  }

  get bytes(): number {
    return this.#bytes
  }

  /** What was kept, as one buffer. */
  concat(): Buffer {
    return Buffer.concat(this.#chunks, this.#bytes)
  }
}

/** A peer's answer whose status and headers are in, and whose body is read under the same bounds. */
export interface BoundedAnswer {
  readonly status: number
  readonly headers: Headers
  /** The body; AnswerBoundError past the byte limit or the deadline. */
  bytes(): Promise<Buffer>
  /** The body as UTF-8 (the same bounds). */
  text(): Promise<string>
  /** Drops the body unread (a connection with more body coming is closed, not drained). */
  discard(): Promise<void>
}

/**
 * fetch under `bounds`: AnswerBoundError (answer_too_slow) when the headers do
 * not come in time, and the answer's body read under the rest of the same
 * deadline. Other failures (a refused connection, a bad URL) are fetch's own.
 */
export async function fetchBounded(url: string | URL, init: Omit<RequestInit, 'signal'>, bounds: AnswerBounds): Promise<BoundedAnswer> {
  const signal = AbortSignal.timeout(bounds.timeoutMs)
  let response: Response
  try {
    response = await fetch(url, { ...init, signal })
  } catch (error) {
    if (signal.aborted) throw new AnswerBoundError('answer_too_slow', bounds.timeoutMs)
    throw withCause(error)
  }
  return answerOf(response, bounds, signal)
}

/**
 * fetch's own failure says only "fetch failed"; its reason (a refused connection, a
 * certificate not trusted) is its cause: folded into the message, so the errors callers
 * build from it (a credential check's answer, a delivery's reason) name it.
 */
function withCause(error: unknown): unknown {
  const cause = (error as { cause?: { message?: unknown } } | null)?.cause
  if (!(error instanceof Error) || typeof cause?.message !== 'string' || error.message.includes(cause.message)) return error
  error.message = `${error.message}: ${cause.message}`
  return error
}

function answerOf(response: Response, bounds: AnswerBounds, signal: AbortSignal): BoundedAnswer {
  const bytes = () => readBody(response, bounds, signal)
  return {
    status: response.status,
    headers: response.headers,
    bytes,
    text: async () => (await bytes()).toString('utf8'),
    discard: async () => {
      await response.body?.cancel().catch(() => {})
    },
  }
}

async function readBody(response: Response, bounds: AnswerBounds, signal: AbortSignal): Promise<Buffer> {
  const body = response.body
  if (body === null) return Buffer.alloc(0)
  // A declared length past the limit is refused before a byte of it is read.
  const declared = Number(response.headers.get('content-length') ?? Number.NaN)
  if (declared > bounds.maxBytes) {
    await body.cancel().catch(() => {})
    throw new AnswerBoundError('answer_too_large', bounds.maxBytes)
  }
  const budget = new ByteBudget(bounds.maxBytes)
  const reader = body.getReader()
  try {
    for (;;) {
      // undici errors the body stream when the fetch's signal aborts, so a trickled body ends here at the deadline.
      const { done, value } = await reader.read()
      if (done) return budget.concat()
      budget.add(value)
    }
  } catch (error) {
    await reader.cancel().catch(() => {})
    if (error instanceof AnswerBoundError) throw error
    if (signal.aborted) throw new AnswerBoundError('answer_too_slow', bounds.timeoutMs)
    throw error
  }
}

/**
 * A fetch for libraries that take one (gaxios' `fetchImplementation`): the
 * whole exchange under `bounds`, answered as a Response over the bytes read,
 * so a library that reads `response.text()` itself reads at most maxBytes.
 */
export function boundedFetchImplementation(bounds: AnswerBounds): typeof fetch {
  return async (input, init) => {
    const { signal: _ignored, ...rest } = init ?? {}
    const url = input instanceof Request ? input.url : input
    const answer = await fetchBounded(url, rest, bounds)
    const body = [101, 204, 205, 304].includes(answer.status) ? null : new Uint8Array(await answer.bytes())
    return new Response(body, { status: answer.status, headers: answer.headers })
  }
}
