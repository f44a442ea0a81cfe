// The Phoenix channel messages realtime-js sends and reads, in both of the
// protocol versions it speaks (the socket's `vsn` query parameter):
//
// - 1.0.0: a JSON object `{topic, event, payload, ref, join_ref}` per text frame.
// - 2.0.0 (realtime-js's default): a JSON array `[join_ref, ref, topic, event,
//   payload]` per text frame, and binary frames for user broadcasts: kind 3
//   (client to server: `[3, joinRefLen, refLen, topicLen, eventLen, metaLen,
//   encoding]`, then the strings, then the payload) and kind 4 (server to
//   client: `[4, topicLen, eventLen, metaLen, encoding]`, then the strings and
//   the payload). Encoding 0 is bytes, 1 is JSON; each length is one byte.

export type ProtocolVersion = '1.0.0' | '2.0.0'

export const PROTOCOL_VERSIONS: readonly ProtocolVersion[] = ['1.0.0', '2.0.0']

export interface PhoenixMessage {
  joinRef: string | null
  ref: string | null
  topic: string
  event: string
  payload: unknown
}

/** A user broadcast's payload as the client reads it: its event, and its payload (JSON, or bytes). */
export interface UserBroadcast {
  type: 'broadcast'
  event: string
  payload: unknown
  meta?: Record<string, unknown>
}

/** A frame that is not a message of the socket's protocol version. */
export class FrameError extends Error {
  readonly code = 'bad_frame'
}

const USER_BROADCAST_PUSH = 3
const USER_BROADCAST = 4
const BINARY_ENCODING = 0
const JSON_ENCODING = 1
const MAX_FIELD_BYTES = 255

const decoder = new TextDecoder('utf-8', { fatal: true })
const encoder = new TextEncoder()

function text(bytes: Uint8Array): string {
  try {
    return decoder.decode(bytes)
  } catch {
    throw new FrameError('a binary frame holds text that is not UTF-8')
  }
}

function nullableString(value: unknown): string | null {
  if (value === null || value === undefined) return null
  if (typeof value === 'string') return value
  if (typeof value === 'number') return String(value)
  throw new FrameError('join_ref and ref must be strings or null')
}

function fromFields(joinRef: unknown, ref: unknown, topic: unknown, event: unknown, payload: unknown): PhoenixMessage {
  if (typeof topic !== 'string' || typeof event !== 'string') throw new FrameError('a message needs a topic and an event, both strings')
  return { joinRef: nullableString(joinRef), ref: nullableString(ref), topic, event, payload: payload ?? {} }
}

function parseJson(frame: string): unknown {
  try {
    return JSON.parse(frame)
  } catch {
    throw new FrameError('a text frame that is not JSON')
  }
}

/** A kind 3 frame: a user broadcast pushed by the client. */
function decodeBroadcastPush(bytes: Uint8Array): PhoenixMessage {
  if (bytes.length < 7) throw new FrameError('a binary broadcast frame shorter than its header')
  const lengths = [bytes[1]!, bytes[2]!, bytes[3]!, bytes[4]!, bytes[5]!]
  const encoding = bytes[6]!
  let offset = 7
  const fields = lengths.map((length) => {
    if (offset + length > bytes.length) throw new FrameError('a binary broadcast frame shorter than its header says')
    const field = text(bytes.subarray(offset, offset + length))
    offset += length
    return field
  })
  const [joinRef, ref, topic, event, metadata] = fields as [string, string, string, string, string]
  const body = bytes.subarray(offset)
  let payload: unknown
  if (encoding === JSON_ENCODING) payload = parseJson(text(body))
  else if (encoding === BINARY_ENCODING) payload = body.slice()
  else throw new FrameError(`a binary broadcast frame with encoding ${encoding} (0 bytes or 1 JSON)`)
  const broadcast: UserBroadcast = { type: 'broadcast', event, payload }
  if (metadata) {
    const meta = parseJson(metadata)
    if (meta && typeof meta === 'object' && !Array.isArray(meta)) broadcast.meta = meta as Record<string, unknown>
  }
  return { joinRef: joinRef || null, ref: ref || null, topic, event: 'broadcast', payload: broadcast }
}

/** One frame from the client, text or binary, as a message of `vsn`. */
export function decodeFrame(vsn: ProtocolVersion, frame: ArrayBuffer, isBinary: boolean): PhoenixMessage {
  const bytes = new Uint8Array(frame)
  if (isBinary) {
    if (vsn === '1.0.0') throw new FrameError('binary frames need vsn=2.0.0')
    if (bytes[0] !== USER_BROADCAST_PUSH) throw new FrameError(`a binary frame of kind ${bytes[0]} (the client sends kind 3)`)
    return decodeBroadcastPush(bytes)
  }
  const parsed = parseJson(text(bytes))
  if (vsn === '2.0.0') {
    if (!Array.isArray(parsed) || parsed.length !== 5) throw new FrameError('a vsn 2.0.0 text frame is [join_ref, ref, topic, event, payload]')
    return fromFields(parsed[0], parsed[1], parsed[2], parsed[3], parsed[4])
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new FrameError('a vsn 1.0.0 frame is {topic, event, payload, ref, join_ref}')
  const message = parsed as Record<string, unknown>
  return fromFields(message.join_ref, message.ref, message.topic, message.event, message.payload)
}

/** A frame for the client: text unless binary is needed, or kind 4 for a user broadcast on 2.0.0. */
export interface OutgoingFrame {
  data: string | Uint8Array
  binary: boolean
}

function isUserBroadcast(message: PhoenixMessage): message is PhoenixMessage & { payload: UserBroadcast } {
  const payload = message.payload as Partial<UserBroadcast> | undefined
  return message.event === 'broadcast' && payload?.type === 'broadcast' && typeof payload.event === 'string'
}

/** A kind 4 frame, or undefined where a field is longer than the header can say. */
function encodeUserBroadcast(topic: string, broadcast: UserBroadcast): Uint8Array | undefined {
  const topicBytes = encoder.encode(topic)
  const eventBytes = encoder.encode(broadcast.event)
  const metaBytes = encoder.encode(broadcast.meta && Object.keys(broadcast.meta).length > 0 ? JSON.stringify(broadcast.meta) : '')
  if (topicBytes.length > MAX_FIELD_BYTES || eventBytes.length > MAX_FIELD_BYTES || metaBytes.length > MAX_FIELD_BYTES) return undefined
  const binary = broadcast.payload instanceof Uint8Array
  const body = binary ? (broadcast.payload as Uint8Array) : encoder.encode(JSON.stringify(broadcast.payload ?? {}))
  const frame = new Uint8Array(5 + topicBytes.length + eventBytes.length + metaBytes.length + body.length)
  frame.set([USER_BROADCAST, topicBytes.length, eventBytes.length, metaBytes.length, binary ? BINARY_ENCODING : JSON_ENCODING])
  let offset = 5
  for (const part of [topicBytes, eventBytes, metaBytes, body]) {
    frame.set(part, offset)
    offset += part.length
  }
  return frame
}

/**
 * `message` as a frame of `vsn`, or undefined where that version cannot carry
 * it (a broadcast of bytes to a 1.0.0 client, which has no binary frames).
 */
export function encodeFrame(vsn: ProtocolVersion, message: PhoenixMessage): OutgoingFrame | undefined {
  if (vsn === '2.0.0' && isUserBroadcast(message)) {
    const frame = encodeUserBroadcast(message.topic, message.payload)
    if (frame) return { data: frame, binary: true }
  }
  if (isUserBroadcast(message) && message.payload.payload instanceof Uint8Array) return undefined
  const data =
    vsn === '2.0.0'
      ? JSON.stringify([message.joinRef, message.ref, message.topic, message.event, message.payload])
      : JSON.stringify({ topic: message.topic, event: message.event, payload: message.payload, ref: message.ref, join_ref: message.joinRef })
  return { data, binary: false }
}
