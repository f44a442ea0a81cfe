// POST /devices, GET /devices, DELETE /devices/<id>.
import net from 'node:net'
import type pg from 'pg'
import { withRequestTransaction } from '../../../lib/db/request-transaction.ts'
import { json, type ServiceRequest, type ServiceResponse } from '../../../lib/service.ts'
import { pushErrors } from '../errors.ts'
import { deleteDevice, listDevices, registerDevice, type DeviceInput, type DeviceRow } from '../store/devices.ts'
import { mapDatabaseError, parseBody, requireIdentity, UUID } from './request.ts'

export interface DeviceOptions {
  /** Accept http:// Web Push endpoints (local test receivers); https only otherwise. */
  allowInsecureEndpoints: boolean
}

function isPrivateHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase()
  if (host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.local') || host.endsWith('.internal')) return true
  if (net.isIPv6(host)) return host === '::1' || host === '::' || /^f[cd]/.test(host) || host.startsWith('fe80') || host.startsWith('::ffff:')
  if (!net.isIPv4(host)) return false
  const [a, b] = host.split('.').map(Number) as [number, number]
  return a === 10 || a === 127 || a === 0 || (a === 169 && b === 254) || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127)
}

function str(value: unknown, field: string, max: number): string {
  if (typeof value !== 'string' || value.length === 0) throw pushErrors.validation(`${field} is required`)
  if (value.length > max) throw pushErrors.validation(`${field} is longer than ${max} characters`)
  return value
}

export function parseDevice(body: unknown, mayNameUser: boolean, options: DeviceOptions): DeviceInput {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw pushErrors.validation('The body must be a JSON object')
  const b = body as Record<string, unknown>
  const platform = b.platform
  if (platform !== 'apns' && platform !== 'fcm' && platform !== 'web') throw pushErrors.validation('platform must be "apns", "fcm" or "web"')
  const app = b.app === undefined || b.app === null ? null : str(b.app, 'app', 200)
  let userId: string | null | undefined
  if (b.user_id !== undefined) {
    if (!mayNameUser) throw pushErrors.validation('user_id may be given only with the service_role key; a user registers their own devices')
    if (b.user_id !== null && (typeof b.user_id !== 'string' || !UUID.test(b.user_id))) throw pushErrors.validation('user_id must be a UUID')
    userId = b.user_id as string | null
  }
  if (platform === 'web') {
    // A PushSubscription as the browser serialises it: {endpoint, keys: {p256dh, auth}}.
    const sub = (b.subscription ?? b) as Record<string, unknown>
    const endpoint = str(sub.endpoint ?? b.token, 'subscription.endpoint', 4096)
    let url: URL
    try {
      url = new URL(endpoint)
    } catch {
      throw pushErrors.validation('subscription.endpoint must be a URL')
    }
    if (url.protocol !== 'https:' && !(options.allowInsecureEndpoints && url.protocol === 'http:')) {
      throw pushErrors.validation('subscription.endpoint must be an https: URL')
    }
    // The platform POSTs to this URL: not to itself or a private network (push services have public names).
    if (!options.allowInsecureEndpoints && isPrivateHost(url.hostname)) {
      throw pushErrors.validation('subscription.endpoint must be a push service on the public internet')
    }
    const keys = (sub.keys ?? {}) as Record<string, unknown>
    const p256dh = str(keys.p256dh, 'subscription.keys.p256dh', 200)
    const auth = str(keys.auth, 'subscription.keys.auth', 100)
    if (Buffer.from(p256dh, 'base64url').length !== 65) throw pushErrors.validation('subscription.keys.p256dh must be a base64url P-256 public key (65 bytes)')
    if (Buffer.from(auth, 'base64url').length !== 16) throw pushErrors.validation('subscription.keys.auth must be a base64url 16-byte secret')
    return { platform, token: endpoint, p256dh, auth, app, userId }
  }
  const token = str(b.token, 'token', 4096)
  if (platform === 'apns' && !/^[0-9a-fA-F]{32,200}$/.test(token)) throw pushErrors.validation('token must be the APNs device token in hex')
  return { platform, token, p256dh: null, auth: null, app, userId }
}

function view(row: DeviceRow) {
  return {
    id: row.id,
    user_id: row.user_id,
    platform: row.platform,
    // A Web Push endpoint is a capability URL: shown to its owner, like the token.
    token: row.token,
    app: row.app,
    active: row.active,
    deactivated_at: row.deactivated_at?.toISOString() ?? null,
    deactivated_reason: row.deactivated_reason,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  }
}

export async function postDevice(request: ServiceRequest, pool: pg.Pool, options: DeviceOptions): Promise<ServiceResponse> {
  const identity = requireIdentity(request)
  const isService = identity.role === 'service_role'
  if (!isService && (identity.role !== 'authenticated' || typeof identity.claims.sub !== 'string')) throw pushErrors.userTokenRequired()
  const input = parseDevice(parseBody(request), isService, options)
  try {
    const row = await withRequestTransaction(pool, identity, (client) => registerDevice(client, input))
    return json(201, view(row))
  } catch (err) {
    mapDatabaseError(err, pushErrors.deviceNotAllowed)
  }
}

export async function getDevices(request: ServiceRequest, pool: pg.Pool): Promise<ServiceResponse> {
  const identity = requireIdentity(request)
  const userId = new URLSearchParams(request.query).get('user_id') ?? undefined
  if (userId !== undefined && !UUID.test(userId)) throw pushErrors.validation('user_id must be a UUID')
  try {
    const rows = await withRequestTransaction(pool, identity, (client) => listDevices(client, userId))
    return json(200, rows.map(view))
  } catch (err) {
    mapDatabaseError(err, pushErrors.deviceNotAllowed)
  }
}

export async function removeDevice(request: ServiceRequest, pool: pg.Pool, id: string): Promise<ServiceResponse> {
  const identity = requireIdentity(request)
  if (!UUID.test(id)) throw pushErrors.deviceNotFound(id)
  let deleted: boolean
  try {
    deleted = await withRequestTransaction(pool, identity, (client) => deleteDevice(client, id))
  } catch (err) {
    mapDatabaseError(err, pushErrors.deviceNotAllowed)
  }
  if (!deleted) throw pushErrors.deviceNotFound(id)
  return { status: 204, headers: {}, body: '' }
}
