// Settings every node of a fleet must share, kept in the catalogue: the first
// node to start writes them, every later node adopts them or, where it was
// configured with another value, refuses to start and says which.
//
// The admin token is the fleet's for good (a node configured with another
// always refuses). The other shared settings (SHARED_SETTINGS) are the
// configuration of the nodes that run: a node that disagrees with the stored
// value refuses while another node is live, and replaces it when none is, so
// a fleet changes one by stopping every node and starting them with the new
// value, never by running with two.
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import type pg from 'pg'
import { LIVE_NODE_SECONDS } from '../lib/catalogue.ts'
import type { PlatformConfig } from '../lib/config.ts'
import { withPoolTransaction } from '../lib/db/request-transaction.ts'
import { ConfigError } from '../lib/errors.ts'
import { log } from '../lib/log.ts'
import { fleetSetting, fleetSettings, insertFleetSettingIfAbsent, lockFleetSettings, upsertFleetSetting } from './db/fleet-settings.ts'
import { countLiveNodes } from './db/nodes.ts'

const ADMIN_TOKEN = 'admin_token'

/** Where a node's own admin token came from, if it has one. */
export interface LocalAdminToken {
  token: string | undefined
  /** `BASEPLANE_ADMIN_TOKEN`, or the home's `admin-token` file. */
  source: string
}

/** The node's configured admin token: BASEPLANE_ADMIN_TOKEN, else the one in <home>/admin-token, else none. */
export function localAdminToken(config: { adminToken: string | undefined; home: string }): LocalAdminToken {
  if (config.adminToken) return { token: config.adminToken, source: 'BASEPLANE_ADMIN_TOKEN' }
  const file = path.join(config.home, 'admin-token')
  try {
    return { token: fs.readFileSync(file, 'utf8').trim() || undefined, source: file }
  } catch {
    return { token: undefined, source: file }
  }
}

function sameToken(a: string, b: string): boolean {
  const hash = (text: string) => crypto.createHash('sha256').update(text).digest()
  return crypto.timingSafeEqual(hash(a), hash(b))
}

/**
 * The fleet's admin token. The first node stores its own (configured, or made
 * now); a later node without one adopts the fleet's and keeps it in its home
 * (for the CLI there); a later node configured with another refuses, since its
 * admin API would then answer to a token the others refuse.
 */
export async function fleetAdminToken(catalogue: pg.Pool, config: { adminToken: string | undefined; home: string }): Promise<string> {
  const local = localAdminToken(config)
  const offered = local.token ?? crypto.randomBytes(32).toString('base64url')
  await insertFleetSettingIfAbsent(catalogue, ADMIN_TOKEN, offered)
  const fleet = (await fleetSetting(catalogue, ADMIN_TOKEN))!
  if (local.token !== undefined && !sameToken(local.token, fleet)) {
    throw new ConfigError(
      `the admin token of ${local.source} is not this fleet's: the catalogue holds the one the first node started with, and every node must answer to the same. ` +
        `Give this node that token (BASEPLANE_ADMIN_TOKEN, or the admin-token file of the first node's home), or remove ${local.source} to adopt it.`,
    )
  }
  if (config.adminToken === undefined && local.token === undefined) {
    fs.mkdirSync(config.home, { recursive: true })
    fs.writeFileSync(path.join(config.home, 'admin-token'), fleet + '\n', { mode: 0o600 })
  }
  return fleet
}

/** A setting every node must agree on: its environment variable and its value on this node ('' when unset). */
interface SharedSetting {
  name: string
  env: string
  value: string
  /** How a value is named in a refusal, where not as itself. */
  show?: (value: string) => string
}

type SharedConfig = Pick<PlatformConfig, 'host' | 'port' | 'publicUrl' | 'baseDomain' | 'throttle' | 'push' | 'usage' | 'lifecycle' | 'natsServers'> & {
  /**
   * Where this node keeps Storage's bytes, as the fleet must share it (server/storage-backend.ts):
   * `local:<token>` (the token of the shared-disk marker its folder holds) or `s3:<endpoint>/<bucket>/<prefix>`.
   */
  storageIdentity?: string
}

/**
 * What every node must agree on besides the admin token: the addresses that
 * go into links and tokens, the throttle's figures (its counts are shared, so
 * different limits would be applied to the same counts), and the push
 * providers' endpoints, and how long usage is kept. A public URL left to its default (this node's own
 * host and port) is no setting: only one given explicitly is shared.
 */
function sharedSettings(config: SharedConfig): SharedSetting[] {
  const ownDefault = `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${config.port}`
  return [
    { name: 'public_url', env: 'BASEPLANE_PUBLIC_URL', value: config.publicUrl === ownDefault ? '' : config.publicUrl },
    { name: 'base_domain', env: 'BASEPLANE_BASE_DOMAIN', value: config.baseDomain ?? '' },
    { name: 'throttle_max_failures', env: 'BASEPLANE_THROTTLE_MAX_FAILURES', value: String(config.throttle.maxFailures) },
    { name: 'throttle_window_seconds', env: 'BASEPLANE_THROTTLE_WINDOW_SECONDS', value: String(config.throttle.windowSeconds) },
    { name: 'throttle_block_seconds', env: 'BASEPLANE_THROTTLE_BLOCK_SECONDS', value: String(config.throttle.blockSeconds) },
    { name: 'apns_url', env: 'BASEPLANE_APNS_URL', value: config.push.apnsUrl ?? '' },
    { name: 'fcm_url', env: 'BASEPLANE_FCM_URL', value: config.push.fcmUrl },
    { name: 'fcm_token_url', env: 'BASEPLANE_FCM_TOKEN_URL', value: config.push.fcmTokenUrl },
    // Whichever node prunes the usage rollups applies its own figures: they must be the fleet's.
    { name: 'usage_retention_months', env: 'BASEPLANE_USAGE_RETENTION_MONTHS', value: String(config.usage.retentionMonths) },
    { name: 'usage_hourly_retention_months', env: 'BASEPLANE_USAGE_HOURLY_RETENTION_MONTHS', value: String(config.usage.hourlyRetentionMonths) },
    // Whichever node sweeps pauses by its own figure, and every node answers a paused project's requests.
    { name: 'pause_idle_days', env: 'BASEPLANE_PAUSE_IDLE_DAYS', value: String(config.lifecycle.pauseIdleDays ?? 0) },
    { name: 'wake_on_request', env: 'BASEPLANE_WAKE_ON_REQUEST', value: String(config.lifecycle.wakeOnRequest) },
    // Any node delivers any event (control-plane/event-outbox.ts), and appending reads the URL from here (db/events.ts):
    // the secret is compared by its hash, so the catalogue does not keep a second copy of it.
    { name: 'operator_webhook_url', env: 'BASEPLANE_OPERATOR_WEBHOOK_URL', value: config.lifecycle.operatorWebhook?.url ?? '' },
    { name: 'operator_webhook_secret_sha256', env: 'BASEPLANE_OPERATOR_WEBHOOK_SECRET', value: secretHash(config.lifecycle.operatorWebhook?.secret) },
    // Whether Realtime crosses nodes on NATS, not the URL: nodes may reach one NATS cluster at different
    // addresses, and the URL may hold credentials. A node without the bus in a fleet with it would keep
    // its sockets' messages to itself (and the reverse), so both refuse while the other kind runs.
    { name: 'realtime_bus', env: 'BASEPLANE_NATS_URL', value: config.natsServers ? 'nats' : '', show: (value) => (value === '' ? 'unset' : 'set') },
    // Every node serves every object: one S3 store, or one disk they all mount. Two nodes on local folders of
    // their own would each hold half of the objects, so a node whose folder lacks the marker the others wrote refuses.
    ...(config.storageIdentity === undefined
      ? []
      : [{ name: 'storage_backend', env: 'BASEPLANE_STORAGE_BACKEND', value: config.storageIdentity, show: storageShown }]),
  ]
}

function storageShown(value: string): string {
  if (value.startsWith('local:')) return `local disk with shared-disk marker ${value.slice(6, 14)}… (BASEPLANE_STORAGE_ROOT must be one folder every node mounts)`
  return value === '' ? '(unset)' : `"${value}"`
}

/** A secret as a shared setting: its SHA-256, '' when unset. */
function secretHash(secret: string | undefined): string {
  return secret === undefined ? '' : crypto.createHash('sha256').update(secret).digest('hex')
}

const shown = (value: string) => (value === '' ? '(unset)' : `"${value}"`)

/**
 * Checks this node's shared settings against the fleet's (see the top of
 * this file): stores them when the catalogue has none or no other node is
 * live, refuses with every disagreement named when another node runs with
 * other values. In one transaction, under a lock, so two nodes starting at
 * once cannot both write.
 */
export async function checkFleetSettings(catalogue: pg.Pool, config: SharedConfig): Promise<void> {
  const mine = sharedSettings(config)
  await withPoolTransaction(catalogue, async (client) => {
    await lockFleetSettings(client)
    const stored = await fleetSettings(client, mine.map((setting) => setting.name))
    const differing = mine.filter((setting) => stored.has(setting.name) && stored.get(setting.name) !== setting.value)
    if (differing.length > 0) {
      if ((await countLiveNodes(client, LIVE_NODE_SECONDS)) > 0) {
        const show = (setting: SharedSetting, value: string) => (setting.show ?? shown)(value)
        const lines = differing.map((setting) => `${setting.env} is ${show(setting, setting.value)} here but ${show(setting, stored.get(setting.name)!)} on the running nodes`)
        throw new ConfigError(
          `this node's settings differ from the fleet's, and every node must agree: ${lines.join('; ')}. ` +
            `Start it with the fleet's values, or stop every node and start them all with the new ones.`,
        )
      }
      log.info("no other node is running: the fleet takes this node's settings", {
        changed: Object.fromEntries(differing.map((setting) => [setting.env, { from: stored.get(setting.name), to: setting.value }])),
      })
    }
    for (const setting of mine) {
      await upsertFleetSetting(client, setting.name, setting.value)
    }
    if (config.natsServers === undefined && (await countLiveNodes(client, LIVE_NODE_SECONDS)) > 0) {
      log.info("other nodes run on this catalogue and none names a Realtime bus: each node's Realtime messages reach only its own sockets; set BASEPLANE_NATS_URL on every node")
    }
  })
}
