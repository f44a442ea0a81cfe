// Realtime's HTTP API (`{base_url}/realtime/v1/api`), which supabase-js's
// `httpSend()` and a channel's send() before it joins call: a batch of
// broadcasts (`POST /broadcast`) and one broadcast with its topic and event in
// the path (`POST /broadcast/{topic}/events/{event}`, JSON or
// `application/octet-stream`, `?private=true`, `?persist=true`), both 202 as
// Supabase Realtime answers them. Private messages pass the project's insert
// policies on realtime.messages first (the service role's key skips them, as
// Supabase's super user does); the plan's messages per second and payload
// size hold as on a socket.
import type { ProjectRecord } from '../../lib/catalogue.ts'
import type { OutgoingResponse } from '../../lib/http.ts'
import type { RequestIdentity } from '../../lib/roles.ts'
import type { PhoenixMessage, UserBroadcast } from '../../workers/realtime/frames.ts'
import type { RealtimeHub } from './hub.ts'
import { payloadBytes } from './limits.ts'
import { channelKey } from './topics.ts'

/** What the data plane hands the API: the project, who asks, and the request. */
export interface RealtimeApiCall {
  project: ProjectRecord
  identity: RequestIdentity
  method: string
  /** Below `/realtime/v1/api`. */
  path: string
  query: string
  headers: Record<string, string | undefined>
  body: () => Promise<string>
}

/** One broadcast to send: its channel's name (without `realtime:`), event, payload and whether the channel is private. */
interface Outgoing {
  topic: string
  event: string
  payload: unknown
  private: boolean
  id?: string
}

const json = (status: number, body: unknown): OutgoingResponse => ({ status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
const refused = (status: number, message: string): OutgoingResponse => json(status, { message })
const ACCEPTED: OutgoingResponse = { status: 202, headers: {}, body: '' }

const SINGLE = /^\/broadcast\/([^/]+)\/events\/([^/]+)$/

/** Answers a request below `/realtime/v1/api`. */
export async function realtimeApi(hub: RealtimeHub, call: RealtimeApiCall): Promise<OutgoingResponse> {
  if (call.path === '/ping' && call.method === 'GET') return json(200, { message: 'Success' })
  if (call.path === '/broadcast') {
    if (call.method !== 'POST') return refused(405, 'Method not allowed: POST a batch of messages')
    return batch(hub, call)
  }
  const single = SINGLE.exec(call.path)
  if (single) {
    if (call.method !== 'POST') return refused(405, 'Method not allowed: POST the message')
    return one(hub, call, decodeURIComponent(single[1]!), decodeURIComponent(single[2]!))
  }
  return refused(404, `No Realtime API route ${call.method} ${call.path}: POST /broadcast or /broadcast/{topic}/events/{event}`)
}

async function batch(hub: RealtimeHub, call: RealtimeApiCall): Promise<OutgoingResponse> {
  let body: unknown
  try {
    body = JSON.parse(await call.body())
  } catch {
    return refused(400, 'The body must be JSON: {"messages": [{"topic", "event", "payload", "private"}]}')
  }
  const messages = (body as { messages?: unknown } | null)?.messages
  if (!Array.isArray(messages) || messages.length === 0) return json(422, { message: 'messages must be a list of one or more messages', errors: { messages: ["can't be blank"] } })
  const outgoing: Outgoing[] = []
  for (const [i, message] of messages.entries()) {
    const entry = (message ?? {}) as Record<string, unknown>
    const missing = ['topic', 'event', 'payload'].filter((field) => entry[field] === undefined || entry[field] === null || (field !== 'payload' && typeof entry[field] !== 'string'))
    if (missing.length > 0) return json(422, { message: `messages[${i}]: ${missing.join(', ')} required`, errors: { messages: [Object.fromEntries(missing.map((field) => [field, ["can't be blank"]]))] } })
    outgoing.push({
      topic: entry.topic as string,
      event: entry.event as string,
      payload: entry.payload,
      private: entry.private === true,
      ...(typeof entry.id === 'string' ? { id: entry.id } : {}),
    })
  }
  const over = limitsRefusal(hub, call.project, outgoing)
  if (over) return over
  // Each private topic's policies are asked once for the batch; a topic they refuse is left out (as Supabase does).
  const allowed = new Map<string, Promise<boolean>>()
  for (const message of outgoing) {
    if (message.private && !allowed.has(message.topic)) allowed.set(message.topic, mayWrite(hub, call, message.topic))
  }
  for (const message of outgoing) {
    if (message.private && !(await allowed.get(message.topic))) continue
    send(hub, call.project, message)
  }
  return ACCEPTED
}

async function one(hub: RealtimeHub, call: RealtimeApiCall, topic: string, event: string): Promise<OutgoingResponse> {
  const query = new URLSearchParams(call.query)
  const isPrivate = query.get('private') === 'true'
  const persist = query.has('persist') || query.has('persist[ttl]')
  const type = (call.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase()
  let payload: unknown
  const text = await call.body()
  if (type === 'application/octet-stream') payload = new Uint8Array(Buffer.from(text, 'latin1'))
  else if (type === 'application/json' || type === '') {
    try {
      payload = JSON.parse(text)
    } catch {
      return refused(400, 'The body must be JSON, or application/octet-stream for a binary payload')
    }
  } else return refused(415, `Content-Type ${type} is not served: send application/json or application/octet-stream`)
  if (persist && !isPrivate) return refused(400, 'A message can only be kept (persist) on a private channel: add ?private=true')
  const message: Outgoing = { topic, event, payload, private: isPrivate }
  const over = limitsRefusal(hub, call.project, [message])
  if (over) return over
  if (persist) {
    // Kept as the caller (its policies decide); the project's change reader delivers it with its id.
    const authorization = hub.authorization
    if (!authorization) return refused(503, 'This node does not keep messages')
    const binary = payload instanceof Uint8Array ? payload : undefined
    const id = await authorization.store(call.project, call.identity, topic, event, binary ? undefined : payload, binary)
    return id === undefined ? refused(403, `You do not have permissions to write to this Channel topic: ${topic}`) : ACCEPTED
  }
  if (isPrivate && !(await mayWrite(hub, call, topic))) return refused(403, `You do not have permissions to write to this Channel topic: ${topic}`)
  send(hub, call.project, message)
  return ACCEPTED
}

/** 413 or 429 past the plan's payload size or messages per second; nothing is counted then. */
function limitsRefusal(hub: RealtimeHub, project: ProjectRecord, messages: Outgoing[]): OutgoingResponse | undefined {
  const counters = hub.limits.of(project.ref, project.plan)
  const limit = counters.limits.payloadBytes
  if (messages.some((message) => payloadBytes(message.payload) > limit)) return refused(413, 'Payload size exceeded')
  if (!counters.take('messages', messages.length)) {
    return refused(429, messages.length > 1 ? 'Too many messages to broadcast, please reduce the batch size' : 'You have exceeded your rate limit')
  }
  return undefined
}

/** The service role's key or token sends anywhere; anyone else as the policies say. */
function mayWrite(hub: RealtimeHub, call: RealtimeApiCall, topic: string): Promise<boolean> {
  if (call.identity.role === 'service_role') return Promise.resolve(true)
  const authorization = hub.authorization
  if (!authorization) return Promise.resolve(false)
  return authorization.mayWrite(call.project, call.identity, topic, 'broadcast')
}

function send(hub: RealtimeHub, project: ProjectRecord, message: Outgoing): void {
  const topic = `realtime:${message.topic}`
  const broadcast: UserBroadcast = { type: 'broadcast', event: message.event, payload: message.payload, ...(message.id ? { meta: { id: message.id } } : {}) }
  const out: PhoenixMessage = { joinRef: null, ref: null, topic, event: 'broadcast', payload: broadcast }
  hub.fanOut(channelKey(project.ref, topic, message.private), out)
}
