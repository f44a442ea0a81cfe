// The bytes of bench:realtime: one broadcast's JSON payload, the vsn 2.0.0
// frames that carry it (kind 3 from realtime-js to the server, kind 4 from
// the server to the subscribers; workers/realtime/frames.ts has the layout)
// and the clock the latency is read on. Written here rather than imported
// from workers/realtime so that the frames the peers are sent are the
// client's bytes, not Baseplane's idea of them.
//
// The payload's sequence number and send time are fixed-width digit strings
// at fixed places in the JSON text: Baseplane parses the payload and writes
// it out again byte for byte (JSON keeps key order and strings), and a
// subscriber reads both numbers without parsing JSON, so a delivery costs
// the harness as little as a delivery can.
import { performance } from 'node:perf_hooks'

export const TOPIC = 'realtime:bench'
export const EVENT = 'tick'
/** The socket.io room the subscribers join (the channel's name there). */
export const ROOM = 'bench'

const SEQ_DIGITS = 9
const SENT_DIGITS = 16

/** Microseconds on the machine's monotonic clock (process.hrtime's), comparable across processes. */
export const nowMicros: () => number = (() => {
  // performance.now() is cheap; its origin differs per process, so it is pinned to hrtime once.
  const base = Number(process.hrtime.bigint() / 1000n) - performance.now() * 1000
  return () => base + performance.now() * 1000
})()

const digits = (value: number, width: number): string => String(Math.floor(value)).padStart(width, '0')

/** A broadcast's user payload as an object (socket.io sends the object, the phoenix sides its JSON text). */
export interface TickPayload {
  seq: string
  sent: string
  pad: string
}

/** The payload of broadcast `seq` sent at `sentMicros`, its JSON text `bytes` long (at least the fixed fields). */
export function tickPayload(seq: number, sentMicros: number, bytes: number): TickPayload {
  const fixed = JSON.stringify({ seq: digits(0, SEQ_DIGITS), sent: digits(0, SENT_DIGITS), pad: '' }).length
  return { seq: digits(seq, SEQ_DIGITS), sent: digits(sentMicros, SENT_DIGITS), pad: 'x'.repeat(Math.max(0, bytes - fixed)) }
}

// Where the digits sit in the payload's JSON text: {"seq":"<9>","sent":"<16>",...
const SEQ_AT = '{"seq":"'.length
const SENT_AT = SEQ_AT + SEQ_DIGITS + '","sent":"'.length

const encoder = new TextEncoder()

function readDigits(bytes: Uint8Array, at: number, count: number): number {
  let value = 0
  for (let i = at; i < at + count; i++) value = value * 10 + bytes[i]! - 48
  return value
}

/** realtime-js's kind 3 frame (a user broadcast pushed by the client, JSON encoding): what Baseplane is sent. */
export function userBroadcastPush(joinRef: string, ref: string, payloadJson: string): Uint8Array {
  return frameOf([3, joinRef.length, ref.length, TOPIC.length, EVENT.length, 0, 1], [joinRef, ref, TOPIC, EVENT], payloadJson)
}

/** The kind 4 frame Baseplane sends each subscriber for that push: what the bare uWS server is sent and publishes as is. */
export function userBroadcast(payloadJson: string): Uint8Array {
  return frameOf([4, TOPIC.length, EVENT.length, 0, 1], [TOPIC, EVENT], payloadJson)
}

function frameOf(header: number[], fields: string[], payloadJson: string): Uint8Array {
  const parts = [Uint8Array.from(header), ...fields.map((field) => encoder.encode(field)), encoder.encode(payloadJson)]
  const frame = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0))
  let offset = 0
  for (const part of parts) {
    frame.set(part, offset)
    offset += part.length
  }
  return frame
}

/** A delivery as the subscribers read it. */
export interface Tick {
  seq: number
  sent: number
}

/** Reads a received kind 4 frame's sequence number and send time into `tick` (no allocation per delivery); false for any other frame. */
export function readUserBroadcast(frame: Uint8Array, tick: Tick): boolean {
  if (frame[0] !== 4 || frame.length < 5) return false
  const payload = 5 + frame[1]! + frame[2]! + frame[3]!
  if (frame.length < payload + SENT_AT + SENT_DIGITS) return false
  tick.seq = readDigits(frame, payload + SEQ_AT, SEQ_DIGITS)
  tick.sent = readDigits(frame, payload + SENT_AT, SENT_DIGITS)
  return true
}
