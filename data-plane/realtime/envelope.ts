// What goes between nodes on the bus. A channel's message is sent once, as the
// node's own sockets were sent it, and each receiving node makes the frames of
// its sockets' protocol versions itself (encodeFrame), as fanOut does here.
// JSON alone would lose a broadcast's bytes (a vsn 2.0.0 kind-3 frame with
// binary payload), so the envelope is a JSON header followed by those bytes:
//
//   [1 byte version = 1][4 bytes header length, big-endian][header JSON][body]
//
// The header names the node it came from (a node ignores its own) and the
// message; where the broadcast's payload is bytes, the header holds null in its
// place and the body holds them.
import type { PhoenixMessage, UserBroadcast } from '../../workers/realtime/frames.ts'
import type { NodeState, PresenceDiff } from '../../workers/realtime/presence.ts'

/** A bus message that is not one this version of Baseplane writes. */
export class EnvelopeError extends Error {
  readonly code = 'bad_envelope'
}

const VERSION = 1
const HEADER_AT = 5

/** A channel's message as another node sent it. */
export interface ChannelEnvelope {
  origin: string
  message: PhoenixMessage
}

interface ChannelHeader {
  o: string
  m: PhoenixMessage
  /** The broadcast's payload is the body's bytes. */
  b?: 1
}

const encoder = new TextEncoder()
const decoder = new TextDecoder('utf-8', { fatal: true })

function bytesOf(message: PhoenixMessage): Uint8Array | undefined {
  const broadcast = message.payload as Partial<UserBroadcast> | undefined
  return message.event === 'broadcast' && broadcast?.payload instanceof Uint8Array ? broadcast.payload : undefined
}

export function encodeChannel(origin: string, message: PhoenixMessage): Uint8Array {
  const bytes = bytesOf(message)
  const header: ChannelHeader = bytes
    ? { o: origin, m: { ...message, payload: { ...(message.payload as UserBroadcast), payload: null } }, b: 1 }
    : { o: origin, m: message }
  const head = encoder.encode(JSON.stringify(header))
  const body = bytes ?? new Uint8Array(0)
  const out = new Uint8Array(HEADER_AT + head.length + body.length)
  out[0] = VERSION
  new DataView(out.buffer).setUint32(1, head.length)
  out.set(head, HEADER_AT)
  out.set(body, HEADER_AT + head.length)
  return out
}

export function decodeChannel(data: Uint8Array): ChannelEnvelope {
  if (data.length < HEADER_AT || data[0] !== VERSION) throw new EnvelopeError(`a channel message of version ${data[0]} (this node reads ${VERSION})`)
  const length = new DataView(data.buffer, data.byteOffset, data.byteLength).getUint32(1)
  if (HEADER_AT + length > data.length) throw new EnvelopeError('a channel message shorter than its header says')
  const header = parse(data.subarray(HEADER_AT, HEADER_AT + length)) as Partial<ChannelHeader>
  const message = header.m
  if (typeof header.o !== 'string' || !message || typeof message.topic !== 'string' || typeof message.event !== 'string') {
    throw new EnvelopeError('a channel message without its origin, topic or event')
  }
  if (header.b === 1) {
    const broadcast = message.payload as UserBroadcast
    message.payload = { ...broadcast, payload: data.slice(HEADER_AT + length) }
  }
  return { origin: header.o, message }
}

/**
 * What the nodes tell each other about presence (data-plane/realtime/fleet-presence.ts):
 * a change (`diff`, numbered per node so a missed one shows), a heartbeat
 * (`beat`, with the last number), everything a node tracks (`state`), a request
 * for it (`sync`, from everyone or from `of`), and a node stopping (`bye`).
 */
export type PresenceMessage =
  | { k: 'diff'; o: string; s: number; c: string; d: PresenceDiff }
  | { k: 'beat'; o: string; s: number }
  | { k: 'state'; o: string; s: number; t: NodeState }
  | { k: 'sync'; o: string; of?: string }
  | { k: 'bye'; o: string }

const PRESENCE_KINDS = new Set(['diff', 'beat', 'state', 'sync', 'bye'])

export function encodePresence(message: PresenceMessage): Uint8Array {
  return encoder.encode(JSON.stringify(message))
}

export function decodePresence(data: Uint8Array): PresenceMessage {
  const message = parse(data) as Partial<PresenceMessage> | null
  if (!message || typeof message !== 'object' || typeof message.o !== 'string' || !PRESENCE_KINDS.has(message.k as string)) {
    throw new EnvelopeError('a presence message without its kind or origin')
  }
  return message as PresenceMessage
}

function parse(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(decoder.decode(bytes))
  } catch {
    throw new EnvelopeError('a bus message whose header is not JSON')
  }
}
