// The push providers, one entry each: everything the rest of Push needs to
// know of a provider besides its `PushProvider` (sending and classifying
// answers, in its own module). The actor builds providers from the stored
// keys through `provider`, the credentials API stores keys through
// `acceptCredentials`, the devices API reads a device's address through
// `device`. Adding a provider is a `PushProvider` and one entry here (and the
// platform in the schema's check constraints).
import type pg from 'pg'
import { checkServiceAccount, setVapidSubject, storeApns, storeFcm, validateApns, validateServiceAccount, type CredentialOptions } from '../credentials.ts'
import { pushErrors } from '../errors.ts'
import type { StoredCredentials } from '../queue/load-credentials.ts'
import { ApnsProvider, APNS_PRODUCTION, APNS_SANDBOX } from './apns.ts'
import type { ApnsTokens } from './apns-token.ts'
import { requiredField, webSubscription, type DeviceAddress, type DeviceOptions } from './device-fields.ts'
import { FcmProvider, FCM_URL } from './fcm.ts'
import type { Platform, PushProvider } from './provider.ts'
import { WebPushProvider } from './webpush.ts'

type Queryable = Pick<pg.ClientBase, 'query'>

export interface PushEndpoints {
  /** APNs origin for both environments (tests); else Apple's production or sandbox host. */
  apnsUrl?: string
  fcmUrl?: string
  fcmTokenUrl?: string
}

/** What the actor gives every provider it builds. */
export interface ProviderContext {
  endpoints: PushEndpoints
  tokens: ApnsTokens
}

/** A provider the actor can send through, built only when the stored keys changed (`version`). */
export interface ProviderKeys {
  /** Identifies the keys: a provider built from the same version is kept. */
  version: string
  /** Sending is stopped until the keys change (a credential-level refusal was recorded). */
  stopped: boolean
  open(): PushProvider
}

export interface ProviderEntry {
  platform: Platform
  /**
   * Its keys are a row of push.credentials: DELETE /credentials/<platform>
   * removes them and a credential-level refusal is recorded there. (Web Push
   * signs with the project's own VAPID pair, which is never deleted.)
   */
  storedKeys: boolean
  /** The actor: the provider of the project's stored keys; undefined when it has none. */
  provider(stored: StoredCredentials, context: ProviderContext): ProviderKeys | undefined
  /**
   * PUT /credentials/<platform>: checks the body (refusals are thrown here),
   * then returns the write, which runs as the api role.
   */
  acceptCredentials(body: unknown, options: CredentialOptions): Promise<(db: Queryable) => Promise<unknown>>
  /** POST /devices: the device's address at this provider, from the request body. */
  device(body: Record<string, unknown>, options: DeviceOptions): DeviceAddress
}

const apns: ProviderEntry = {
  platform: 'apns',
  storedKeys: true,
  provider(stored, { endpoints, tokens }) {
    if (!stored.apns || stored.apns.keys.length === 0) return undefined
    const { version, topic, teamId, environment, keys, stopped } = stored.apns
    const key = keys[0]!
    return {
      version,
      stopped: stopped !== null,
      open: () => new ApnsProvider({
        url: endpoints.apnsUrl ?? (environment === 'sandbox' ? APNS_SANDBOX : APNS_PRODUCTION),
        topic,
        teamId,
        keyId: key.key_id,
        p8: key.p8,
        tokens,
      }),
    }
  },
  async acceptCredentials(body) {
    const input = await validateApns(body)
    return (db) => storeApns(db, input)
  },
  device(b) {
    const token = requiredField(b.token, 'token', 4096)
    if (!/^[0-9a-fA-F]{32,200}$/.test(token)) throw pushErrors.validation('token must be the APNs device token in hex')
    return { token, p256dh: null, auth: null }
  },
}

const fcm: ProviderEntry = {
  platform: 'fcm',
  storedKeys: true,
  provider(stored, { endpoints }) {
    if (!stored.fcm) return undefined
    const { version, account, stopped } = stored.fcm
    return {
      version,
      stopped: stopped !== null,
      open: () => new FcmProvider({ url: endpoints.fcmUrl ?? FCM_URL, tokenUrl: endpoints.fcmTokenUrl, account }),
    }
  },
  async acceptCredentials(body, options) {
    const account = validateServiceAccount(body)
    await checkServiceAccount(account, options)
    return (db) => storeFcm(db, account)
  },
  device(b) {
    return { token: requiredField(b.token, 'token', 4096), p256dh: null, auth: null }
  },
}

const web: ProviderEntry = {
  platform: 'web',
  storedKeys: false,
  provider(stored) {
    const vapid = stored.vapid
    if (!vapid) return undefined
    // Web Push never stops: its refusals are per subscription.
    return { version: `${vapid.publicKey}:${vapid.subject}`, stopped: false, open: () => new WebPushProvider(vapid) }
  },
  async acceptCredentials(body) {
    const subject = typeof body === 'object' && body !== null ? (body as Record<string, unknown>).subject : undefined
    // The subject is checked inside the write, as it always was (its refusals pass through unchanged).
    return (db) => setVapidSubject(db, subject)
  },
  device: webSubscription,
}

/** Every provider, in the order the actor builds them and claims their rows. */
export const PROVIDERS: readonly ProviderEntry[] = [apns, fcm, web]

/** The entry of a platform named in a request; undefined for a name that is none. */
export function providerFor(platform: unknown): ProviderEntry | undefined {
  return PROVIDERS.find((p) => p.platform === platform)
}

/** `"apns", "fcm" or "web"`: the platforms, for messages. */
export const PLATFORM_NAMES = PROVIDERS.map((p) => `"${p.platform}"`).join(', ').replace(/, ([^,]*)$/, ' or $1')
