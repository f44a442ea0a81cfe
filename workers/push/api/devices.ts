// POST /devices, GET /devices, DELETE /devices/<id>.
import type { DatabasePool } from '../../../lib/db/project-pools.ts'
import { withRequestTransaction } from '../../../lib/db/request-transaction.ts'
import { json, type ServiceRequest, type ServiceResponse } from '../../../lib/service.ts'
import { pushErrors } from '../errors.ts'
import { requiredField, type DeviceOptions } from '../providers/device-fields.ts'
import { PLATFORM_NAMES, providerFor } from '../providers/registry.ts'
import { deleteDevice, listDevices, registerDevice, type DeviceInput, type DeviceRow } from '../store/devices.ts'
import { mapDatabaseError, parseBody, requireIdentity } from './request.ts'
import { isUuid } from '../../../lib/uuid.ts'

export function parseDevice(body: unknown, mayNameUser: boolean, options: DeviceOptions): DeviceInput {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw pushErrors.validation('The body must be a JSON object')
  const b = body as Record<string, unknown>
  const entry = providerFor(b.platform)
  if (!entry) throw pushErrors.validation(`platform must be ${PLATFORM_NAMES}`)
  const app = b.app === undefined || b.app === null ? null : requiredField(b.app, 'app', 200)
  let userId: string | null | undefined
  if (b.user_id !== undefined) {
    if (!mayNameUser) throw pushErrors.validation('user_id may be given only with the service_role key; a user registers their own devices')
    if (b.user_id !== null && (typeof b.user_id !== 'string' || !isUuid(b.user_id))) throw pushErrors.validation('user_id must be a UUID')
    userId = b.user_id as string | null
  }
  return { platform: entry.platform, ...entry.device(b, options), app, userId }
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

export async function postDevice(request: ServiceRequest, pool: DatabasePool, options: DeviceOptions): Promise<ServiceResponse> {
  const identity = requireIdentity(request)
  const isService = identity.role === 'service_role'
  if (!isService && (identity.role !== 'authenticated' || typeof identity.claims.sub !== 'string')) throw pushErrors.userTokenRequired()
  const input = parseDevice(parseBody(request), isService, options)
  try {
    const row = await withRequestTransaction(pool, identity, request.project.roleTimeouts, (client) => registerDevice(client, input))
    return json(201, view(row))
  } catch (err) {
    mapDatabaseError(err, pushErrors.deviceNotAllowed)
  }
}

export async function getDevices(request: ServiceRequest, pool: DatabasePool): Promise<ServiceResponse> {
  const identity = requireIdentity(request)
  const userId = new URLSearchParams(request.query).get('user_id') ?? undefined
  if (userId !== undefined && !isUuid(userId)) throw pushErrors.validation('user_id must be a UUID')
  try {
    const rows = await withRequestTransaction(pool, identity, request.project.roleTimeouts, (client) => listDevices(client, userId))
    return json(200, rows.map(view))
  } catch (err) {
    mapDatabaseError(err, pushErrors.deviceNotAllowed)
  }
}

export async function removeDevice(request: ServiceRequest, pool: DatabasePool, id: string): Promise<ServiceResponse> {
  const identity = requireIdentity(request)
  if (!isUuid(id)) throw pushErrors.deviceNotFound(id)
  let deleted: boolean
  try {
    deleted = await withRequestTransaction(pool, identity, request.project.roleTimeouts, (client) => deleteDevice(client, id))
  } catch (err) {
    mapDatabaseError(err, pushErrors.deviceNotAllowed)
  }
  if (!deleted) throw pushErrors.deviceNotFound(id)
  return { status: 204, headers: {}, body: '' }
}
