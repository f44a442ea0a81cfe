// The operator's Push operations on one project, shared by the dashboard's
// Push page, the CLI (`baseplane push ...`) and the admin API: what identifies
// the stored provider keys (never the keys), storing checked keys and removing
// them, the devices, the delivery log, and a test notification to one device.
// Each runs in the project's own database as the server's admin role; the
// checks, the keys' storage and the message queue are Push's own, through its
// face (workers/push/face.ts), so nothing here is a copy; the reads the
// operator pages through are db/push.ts.
import type pg from 'pg'
import { BaseplaneError, platformErrors } from '../lib/errors.ts'
import type { ProjectRecord } from '../lib/catalogue.ts'
import {
  deleteCredentials,
  describeCredentials,
  insertMessages,
  parseMessage,
  pushErrors,
  setApnsCredentials,
  setFcmCredentials,
  stopAdvice,
  type ApnsCredentialsSummary,
  type CredentialStatus,
  type FcmCredentialsSummary,
} from '../workers/push/face.ts'
import type { ControlPlane } from './control-plane.ts'
import { getProject } from './projects.ts'
import * as db from './db/push.ts'
import { runAsProjectLogin, runInProjectDatabase } from './project-database.ts'
import { isUuid } from '../lib/uuid.ts'

export const PROVIDERS = ['apns', 'fcm'] as const
export type KeyedProvider = (typeof PROVIDERS)[number]
export const PLATFORMS = ['apns', 'fcm', 'web'] as const
export const LOG_STATUSES = ['sent', 'failed', 'retry', 'held', 'expired'] as const

const MAX_LIMIT = 500

export interface PushAdminOptions {
  /** The OAuth token endpoint service accounts are checked against (config BASEPLANE_FCM_TOKEN_URL). */
  fcmTokenUrl?: string
}

type Stopped = { stopped_reason: string | null; stopped_at: string | null; what_to_do: string | null }

/** Only what identifies each stored key, whether sending through it is stopped, and what to do then. */
export interface PushCredentialsView {
  ref: string
  apns: (NonNullable<CredentialStatus['apns']> & Stopped) | null
  fcm: (NonNullable<CredentialStatus['fcm']> & Stopped) | null
  web: CredentialStatus['web']
}

/** A device as the admin API and the CLI show it: its row, times as ISO text; `token_prefix` is the start of the token or endpoint, enough to tell devices apart (the rest is the app's). */
export type DeviceEntry = Omit<db.DeviceRow, 'deactivated_at' | 'created_at'> & { deactivated_at: string | null; created_at: string }

export interface DeviceFilter {
  platform?: string
  user?: string
  active?: boolean
  limit?: number
  offset?: number
}

export interface DevicePage {
  ref: string
  devices: DeviceEntry[]
  /** The offset of the next page; null on the last. */
  next_offset: number | null
}

/** A delivery attempt as the admin API and the CLI show it: the log's row, its id a number and its time ISO text. */
export type LogEntry = Omit<db.LogRow, 'id' | 'attempted_at'> & { id: number; attempted_at: string }

export interface LogFilter {
  status?: string
  provider?: string
  user?: string
  /** One message's attempts (its id, as the API's send and `push test` answer it). */
  message?: string
  limit?: number
  /** Entries older than this id (the `next_before` of the previous page). */
  before?: number
}

export interface LogPage {
  ref: string
  entries: LogEntry[]
  /** Pass as `before` for the next (older) page; null on the last. */
  next_before: number | null
}

async function pushProject(controlPlane: ControlPlane, ref: string): Promise<{ project: ProjectRecord; serverUrl: string }> {
  const project = await getProject(controlPlane, ref)
  if (!project.pushEnabled) throw platformErrors.productDisabled('push', project.ref)
  return { project, serverUrl: await controlPlane.serverUrl(project.dbServer) }
}

/**
 * `work` in one transaction on the project's database: as the server's admin role
 * for reads and the platform's own tables; `asServiceRole`, as the API's login role
 * switched to service_role, for a write to the owner's tables (push.messages), whose
 * triggers are the owner's code and must never run as the server's admin.
 */
async function inPushDatabase<T>(controlPlane: ControlPlane, ref: string, work: (db: pg.ClientBase) => Promise<T>, asServiceRole = false): Promise<T> {
  const { project, serverUrl } = await pushProject(controlPlane, ref)
  try {
    if (!asServiceRole) return await runInProjectDatabase(serverUrl, project.dbName, work)
    return await runAsProjectLogin(serverUrl, project, 'api', async (client) => {
      await db.actAsServiceRole(client)
      return work(client)
    })
  } catch (err) {
    const code = (err as { code?: string }).code
    if (code === '42P01' || code === '3F000') throw pushErrors.pushNotInstalled()
    throw err
  }
}

function oneOf(value: string | undefined, allowed: readonly string[], name: string): string | undefined {
  if (value === undefined || value === '') return undefined
  if (!allowed.includes(value)) throw platformErrors.invalidArgument(`${name} must be one of ${allowed.join(', ')}, got "${value.slice(0, 40)}"`, name)
  return value
}

function userId(value: string | undefined, name = 'user'): string | undefined {
  if (value === undefined || value === '') return undefined
  if (!isUuid(value)) throw platformErrors.invalidArgument(`${name} must be a user id (a UUID), got "${value.slice(0, 40)}"`, name)
  return value.toLowerCase()
}

function messageId(value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined
  if (!isUuid(value)) throw platformErrors.invalidArgument(`message must be a message id (a UUID), got "${value.slice(0, 40)}"`, 'message')
  return value.toLowerCase()
}

function count(value: number | undefined, name: string, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback
  if (!Number.isInteger(value) || value < min || value > max) throw platformErrors.invalidArgument(`${name} must be a whole number from ${min} to ${max}`, name)
  return value
}

export function provider(value: string): KeyedProvider {
  if (!(PROVIDERS as readonly string[]).includes(value)) throw platformErrors.invalidArgument(`provider must be apns or fcm, got "${value.slice(0, 40)}"`, 'provider')
  return value as KeyedProvider
}

const withAdvice = <T extends { stopped_reason: string | null; stopped_at: string | null }>(entry: T | null): (T & Stopped) | null =>
  entry && { ...entry, what_to_do: entry.stopped_reason ? stopAdvice(entry.stopped_reason) : null }

const credentialsView = (ref: string, status: CredentialStatus): PushCredentialsView => ({ ref, apns: withAdvice(status.apns), fcm: withAdvice(status.fcm), web: status.web })

export async function showPushCredentials(controlPlane: ControlPlane, ref: string): Promise<PushCredentialsView> {
  return credentialsView(ref, await inPushDatabase(controlPlane, ref, describeCredentials))
}

/**
 * Checks and stores a provider's keys as PUT /push/v1/credentials/apns|fcm does:
 * APNs `{topic, key_id, team_id, keys: [{p8}], environment?}`; FCM the
 * service-account file (its text or parsed JSON), which must obtain a token.
 */
export async function setPushCredentials(controlPlane: ControlPlane, ref: string, which: 'apns', input: unknown): Promise<ApnsCredentialsSummary>
export async function setPushCredentials(controlPlane: ControlPlane, ref: string, which: 'fcm', input: unknown, options?: PushAdminOptions): Promise<FcmCredentialsSummary>
export async function setPushCredentials(controlPlane: ControlPlane, ref: string, which: string, input: unknown, options?: PushAdminOptions): Promise<ApnsCredentialsSummary | FcmCredentialsSummary>
export async function setPushCredentials(controlPlane: ControlPlane, ref: string, which: string, input: unknown, options: PushAdminOptions = {}) {
  const keyed = provider(which)
  const { project, serverUrl } = await pushProject(controlPlane, ref)
  return keyed === 'apns' ? setApnsCredentials(project, serverUrl, input) : setFcmCredentials(project, serverUrl, input, { fcmTokenUrl: options.fcmTokenUrl })
}

/** Removes a provider's stored keys; sending through it stops (404 credentials_not_found when none are set). */
export async function removePushCredentials(controlPlane: ControlPlane, ref: string, which: string): Promise<{ ref: string; removed: KeyedProvider }> {
  const keyed = provider(which)
  const removed = await inPushDatabase(controlPlane, ref, (client) => deleteCredentials(client, keyed))
  if (!removed) throw pushErrors.credentialsNotFound(keyed)
  return { ref, removed: keyed }
}

/** Validated device filters (refused as invalid_argument, naming the field). */
export interface DeviceQuery {
  platform: string | null
  user: string | null
  active: boolean | null
  limit: number
  offset: number
}

/** Validated delivery-log filters. */
export interface LogQuery {
  status: string | null
  provider: string | null
  user: string | null
  message: string | null
  limit: number
  before: number | null
}

export function deviceQuery(filter: DeviceFilter = {}): DeviceQuery {
  return {
    platform: oneOf(filter.platform, PLATFORMS, 'platform') ?? null,
    user: userId(filter.user) ?? null,
    active: filter.active ?? null,
    limit: count(filter.limit, 'limit', 50, 1, MAX_LIMIT),
    offset: count(filter.offset, 'offset', 0, 0, 1_000_000),
  }
}

export function logQuery(filter: LogFilter = {}): LogQuery {
  return {
    status: oneOf(filter.status, LOG_STATUSES, 'status') ?? null,
    provider: oneOf(filter.provider, PLATFORMS, 'provider') ?? null,
    user: userId(filter.user) ?? null,
    message: messageId(filter.message) ?? null,
    limit: count(filter.limit, 'limit', 50, 1, MAX_LIMIT),
    before: filter.before === undefined ? null : count(filter.before, 'before', 0, 1, Number.MAX_SAFE_INTEGER),
  }
}

async function readDevices(client: pg.ClientBase, ref: string, q: DeviceQuery): Promise<DevicePage> {
  const rows = await db.devices(client, { ...q, limit: q.limit + 1 })
  const devices = rows.slice(0, q.limit).map((r) => ({
    ...r,
    token_prefix: r.token_prefix.length === 16 ? `${r.token_prefix}…` : r.token_prefix,
    deactivated_at: r.deactivated_at?.toISOString() ?? null,
    created_at: r.created_at.toISOString(),
  }))
  return { ref, devices, next_offset: rows.length > q.limit ? q.offset + q.limit : null }
}

async function readLog(client: pg.ClientBase, ref: string, q: LogQuery): Promise<LogPage> {
  const rows = await db.deliveryLog(client, { ...q, limit: q.limit + 1 })
  const entries = rows.slice(0, q.limit).map((r) => ({ ...r, id: Number(r.id), attempted_at: r.attempted_at.toISOString() }))
  return { ref, entries, next_before: rows.length > q.limit ? entries[entries.length - 1]!.id : null }
}

/** The project's devices, newest first, filtered and paged. */
export async function listPushDevices(controlPlane: ControlPlane, ref: string, filter: DeviceFilter = {}): Promise<DevicePage> {
  const q = deviceQuery(filter)
  return inPushDatabase(controlPlane, ref, (client) => readDevices(client, ref, q))
}

/** Delivery attempts, newest first: one row per attempt, with the provider's reason. */
export async function pushDeliveryLog(controlPlane: ControlPlane, ref: string, filter: LogFilter = {}): Promise<LogPage> {
  const q = logQuery(filter)
  return inPushDatabase(controlPlane, ref, (client) => readLog(client, ref, q))
}

/** What the Push page shows, read over one connection: the credentials, and the devices and log asked for. */
export async function pushOverview(
  controlPlane: ControlPlane,
  ref: string,
  queries: { devices?: DeviceQuery; log?: LogQuery },
): Promise<{ credentials: PushCredentialsView; devices?: DevicePage; log?: LogPage }> {
  return inPushDatabase(controlPlane, ref, async (client) => ({
    credentials: credentialsView(ref, await describeCredentials(client)),
    devices: queries.devices && (await readDevices(client, ref, queries.devices)),
    log: queries.log && (await readLog(client, ref, queries.log)),
  }))
}

export interface TestNotification {
  title?: string
  body?: string
}

/**
 * A notification to one device, sent as the API sends: an insert into
 * push.messages as service_role, which the project's actor delivers. The
 * outcome shows in the delivery log.
 */
export async function sendTestNotification(controlPlane: ControlPlane, ref: string, deviceId: string, input: TestNotification = {}): Promise<{ ref: string; id: string; device_id: string }> {
  // The operator's words, not the API's ("visible to this caller"): the control plane sees every device.
  if (!isUuid(deviceId)) throw platformErrors.invalidArgument(`"${deviceId.slice(0, 40)}" is not a device id (a UUID)`, 'device_id')
  const message = parseMessage({
    device_id: deviceId,
    title: input.title?.trim() || 'Test notification',
    body: input.body?.trim() || `Sent by the operator of project ${ref} from Baseplane.`,
    data: { baseplane_test: true },
  })
  await inPushDatabase(controlPlane, ref, async (client) => {
    const device = await db.deviceState(client, deviceId)
    if (!device) throw new BaseplaneError('device_not_found', `Project ${ref} has no device ${deviceId.toLowerCase()}`, 404)
    if (!device.active) throw pushErrors.deviceInactive(deviceId, device.deactivated_reason)
    await insertMessages(client, [message])
  }, true)
  return { ref, id: message.id, device_id: deviceId.toLowerCase() }
}
