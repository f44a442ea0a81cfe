// A stream of bytes between two threads over a MessagePort: Storage's bodies
// cross from the data plane's thread to its worker and back this way, each
// chunk moved (its memory transferred), never copied, and no faster than the
// receiving side reads: the receiver grants credit for a few chunks at a time,
// so what waits in a port is bounded whatever the body's length.
import type { MessagePort } from 'node:worker_threads'

/** Chunks the receiver lets wait unread in the port. */
const WINDOW = 4

type Frame = { chunk: ArrayBuffer } | { end: true } | { error: string; code?: string }
type Control = { credit: number } | { cancel: true }

/** A chunk's memory, moved when the chunk owns all of it, else copied once (a slice of a pooled buffer must not be moved). */
function transferable(chunk: Uint8Array): ArrayBuffer {
  const buffer = chunk.buffer
  if (buffer instanceof ArrayBuffer && chunk.byteOffset === 0 && chunk.byteLength === buffer.byteLength) return buffer
  // (Buffer's own slice() is a view of the same memory: the copy is made by hand.)
  const copy = new Uint8Array(chunk.byteLength)
  copy.set(chunk)
  return copy.buffer
}

/**
 * Posts one chunk, its memory moved. Memory a native module made (sharp's
 * output, some of node's own) may refuse to move: that chunk is copied once.
 */
function post(port: MessagePort, value: Uint8Array): void {
  const chunk = transferable(value)
  try {
    port.postMessage({ chunk } satisfies Frame, [chunk])
  } catch {
    const copy = new Uint8Array(value.byteLength)
    copy.set(value)
    port.postMessage({ chunk: copy.buffer } satisfies Frame, [copy.buffer])
  }
}

/** The error a sender's failure arrives as on the other side: its message, and its `code` when it has one. */
export class PortStreamError extends Error {
  readonly code: string | undefined
  constructor(message: string, code: string | undefined) {
    super(message)
    this.code = code
  }
}

/**
 * Sends `source` into `port`: each chunk once the receiver has credit for it,
 * then the end, or the source's failure. Resolves once all is sent, or when the
 * receiver cancels (it stopped reading); the source is then ended early.
 */
export async function sendToPort(source: AsyncIterable<Uint8Array>, port: MessagePort): Promise<void> {
  let credit = 0
  let cancelled = false
  let wake: (() => void) | undefined
  const onControl = (message: Control) => {
    if ('cancel' in message) cancelled = true
    else credit += message.credit
    wake?.()
  }
  port.on('message', onControl)
  port.once('close', () => {
    cancelled = true
    wake?.()
  })
  const iterator = source[Symbol.asyncIterator]()
  try {
    for (;;) {
      const next = await iterator.next()
      if (next.done) break
      while (credit === 0 && !cancelled) await new Promise<void>((resolve) => (wake = resolve))
      wake = undefined
      if (cancelled) return
      if (next.value.byteLength === 0) continue
      credit--
      post(port, next.value)
    }
    if (!cancelled) port.postMessage({ end: true } satisfies Frame)
  } catch (error) {
    if (!cancelled) port.postMessage({ error: (error as Error).message ?? String(error), code: (error as { code?: string }).code } satisfies Frame)
  } finally {
    port.off('message', onControl)
    if (cancelled) await iterator.return?.().catch(() => {})
  }
}

/**
 * What arrives on `port` from sendToPort, as an async iterable of chunks.
 * Ending the iteration early (a `break`, a failure downstream) tells the
 * sender to stop. The port is closed once the stream is over.
 */
export async function* receiveFromPort(port: MessagePort): AsyncGenerator<Uint8Array> {
  const frames: Frame[] = []
  let wake: (() => void) | undefined
  let closed = false
  const onFrame = (frame: Frame) => {
    frames.push(frame)
    wake?.()
  }
  const onClose = () => {
    closed = true
    wake?.()
  }
  port.on('message', onFrame)
  port.once('close', onClose)
  port.postMessage({ credit: WINDOW } satisfies Control)
  let finished = false
  try {
    for (;;) {
      const frame = frames.shift()
      if (frame === undefined) {
        if (closed) throw new PortStreamError('the stream ended before its last chunk', 'stream_cut')
        await new Promise<void>((resolve) => (wake = resolve))
        wake = undefined
        continue
      }
      if ('end' in frame) {
        finished = true
        return
      }
      if ('error' in frame) {
        finished = true
        throw new PortStreamError(frame.error, frame.code)
      }
      port.postMessage({ credit: 1 } satisfies Control)
      yield new Uint8Array(frame.chunk)
    }
  } finally {
    port.off('message', onFrame)
    port.off('close', onClose)
    if (!finished && !closed) port.postMessage({ cancel: true } satisfies Control)
    port.close()
  }
}
