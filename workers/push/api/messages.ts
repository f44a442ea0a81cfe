// POST /messages (send one or many) and GET /messages/<id>.
import crypto from 'node:crypto'
import type { DatabasePool } from '../../../lib/db/project-pools.ts'
import { withRequestTransaction } from '../../../lib/db/request-transaction.ts'
import { json, type ServiceRequest, type ServiceResponse } from '../../../lib/service.ts'
import { pushErrors } from '../errors.ts'
import { firstUnseenDevice, insertMessages, readMessage, type MessageInput } from '../store/messages.ts'
import { mapDatabaseError, parseBody, requireIdentity } from './request.ts'
import { isUuid } from '../../../lib/uuid.ts'

const MAX_BATCH = 1000

function optionalString(b: Record<string, unknown>, field: string, max: number, at: string): string | null {
  const value = b[field]
  if (value === undefined || value === null) return null
  if (typeof value !== 'string') throw pushErrors.validation(`${at}${field} must be a string`)
  if (value.length > max) throw pushErrors.validation(`${at}${field} is longer than ${max} characters`)
  return value
}

export function parseMessage(value: unknown, at = ''): MessageInput {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw pushErrors.validation(`${at || 'The body'} must be a JSON object`)
  const b = value as Record<string, unknown>
  const known = new Set(['user_id', 'device_id', 'title', 'body', 'data', 'ttl', 'collapse_key', 'priority', 'send_at'])
  for (const key of Object.keys(b)) if (!known.has(key)) throw pushErrors.validation(`${at}${key} is not a message field`)
  const userId = optionalString(b, 'user_id', 36, at)
  const deviceId = optionalString(b, 'device_id', 36, at)
  if ((userId === null) === (deviceId === null)) throw pushErrors.validation(`${at}exactly one of user_id and device_id is required`)
  if (userId !== null && !isUuid(userId)) throw pushErrors.validation(`${at}user_id must be a UUID`)
  if (deviceId !== null && !isUuid(deviceId)) throw pushErrors.validation(`${at}device_id must be a UUID`)
  const data = b.data ?? null
  if (data !== null && (typeof data !== 'object' || Array.isArray(data))) throw pushErrors.validation(`${at}data must be a JSON object`)
  const ttl = b.ttl ?? null
  if (ttl !== null && (!Number.isInteger(ttl) || (ttl as number) < 0 || (ttl as number) > 2419200)) {
    throw pushErrors.validation(`${at}ttl must be whole seconds from 0 to 2419200 (28 days)`)
  }
  const priority = b.priority ?? null
  if (priority !== null && priority !== 'high' && priority !== 'normal') throw pushErrors.validation(`${at}priority must be "high" or "normal"`)
  const sendAt = optionalString(b, 'send_at', 64, at)
  if (sendAt !== null && Number.isNaN(Date.parse(sendAt))) throw pushErrors.validation(`${at}send_at must be an ISO 8601 time`)
  const collapseKey = optionalString(b, 'collapse_key', 64, at)
  if (collapseKey !== null && (collapseKey === '' || Buffer.byteLength(collapseKey) > 64)) throw pushErrors.validation(`${at}collapse_key must be 1 to 64 bytes`)
  return {
    id: crypto.randomUUID(),
    user_id: userId,
    device_id: deviceId,
    title: optionalString(b, 'title', 1000, at),
    body: optionalString(b, 'body', 4000, at),
    data: data as Record<string, unknown> | null,
    ttl: ttl as number | null,
    collapse_key: collapseKey,
    priority: priority as 'high' | 'normal' | null,
    send_at: sendAt,
  }
}

export async function postMessages(request: ServiceRequest, pool: DatabasePool): Promise<ServiceResponse> {
  const identity = requireIdentity(request)
  const body = parseBody(request)
  const many = Array.isArray(body)
  const list = many ? body : [body]
  if (list.length === 0 || list.length > MAX_BATCH) throw pushErrors.validation(`Send 1 to ${MAX_BATCH} messages per request`)
  const messages = list.map((m, i) => parseMessage(m, many ? `[${i}].` : ''))
  try {
    await withRequestTransaction(pool, identity, request.project.roleTimeouts, async (client) => {
      await insertMessages(client, messages)
      // A device the caller cannot see is refused as absent; throwing rolls the insert back.
      const unseen = await firstUnseenDevice(client, [...new Set(messages.flatMap((m) => (m.device_id === null ? [] : [m.device_id.toLowerCase()])))])
      if (unseen !== undefined) throw pushErrors.deviceNotFound(unseen)
    })
  } catch (err) {
    mapDatabaseError(err, pushErrors.sendNotAllowed)
  }
  return json(201, many ? messages.map((m) => ({ id: m.id })) : { id: messages[0]!.id })
}

export async function getMessage(request: ServiceRequest, pool: DatabasePool, id: string): Promise<ServiceResponse> {
  const identity = requireIdentity(request)
  if (!isUuid(id)) throw pushErrors.messageNotFound(id)
  let message
  try {
    message = await withRequestTransaction(pool, identity, request.project.roleTimeouts, (client) => readMessage(client, id))
  } catch (err) {
    mapDatabaseError(err, () => pushErrors.messageNotFound(id))
  }
  if (!message) throw pushErrors.messageNotFound(id)
  return json(200, { ...message, send_at: message.send_at.toISOString(), created_at: message.created_at.toISOString() })
}
