// Provider keys: checked before they are stored, stored as rows of
// push.credentials, never returned (only what identifies them). Used by the
// HTTP API (PUT /credentials/apns|fcm, as the api role) and by the CLI
// (`baseplane push credentials set`, as the admin role).
import { Checks } from '../../lib/errors.ts'
import crypto from 'node:crypto'
import { SignJWT, importPKCS8 } from 'jose'
import pg from 'pg'
import type { ProjectRecord } from '../../lib/catalogue.ts'
import { adminUrlFor } from '../../lib/db/server-url.ts'
import { pushErrors } from './errors.ts'
import { createTokenSource, TokenError, type ServiceAccount } from './providers/fcm-token.ts'
import type { Platform } from './providers/provider.ts'

type Queryable = Pick<pg.ClientBase, 'query'>

export interface ApnsCredentialsInput {
  topic: string
  key_id: string
  team_id: string
  keys: { p8: string; key_id?: string }[]
  environment?: 'production' | 'sandbox'
}

export interface ApnsCredentialsSummary {
  platform: 'apns'
  topic: string
  key_id: string
  team_id: string
  environment: 'production' | 'sandbox'
  key_ids: string[]
  updated_at: string
}

export interface FcmCredentialsSummary {
  platform: 'fcm'
  project_id: string
  client_email: string
  private_key_id: string | null
  updated_at: string
}

export interface WebCredentialsSummary {
  platform: 'web'
  public_key: string
  subject: string
}

export interface CredentialOptions {
  /** OAuth token endpoint to check a service account against (platform override; Google's by default). */
  fcmTokenUrl?: string
}

const APPLE_ID = /^[A-Z0-9]{10}$/
const TOPIC = /^[A-Za-z0-9][A-Za-z0-9.\-_]{0,254}$/

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function requireString(body: Record<string, unknown>, field: string, check: (value: string) => boolean, rule: string): string {
  const value = body[field]
  if (typeof value !== 'string' || value.trim() === '') throw pushErrors.validation(`${field} is required (${rule})`, field)
  const trimmed = value.trim()
  if (!check(trimmed)) throw pushErrors.validation(`${field} must be ${rule}, got "${trimmed.slice(0, 80)}"`, field)
  return trimmed
}

/** A .p8 must be a PKCS#8 P-256 private key that can sign ES256. */
export async function checkP8(p8: string): Promise<void> {
  let key: crypto.KeyObject
  try {
    key = crypto.createPrivateKey({ key: p8, format: 'pem' })
  } catch {
    throw pushErrors.invalidApnsKey('it is not a PEM private key (the .p8 file starts with -----BEGIN PRIVATE KEY-----)')
  }
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    throw pushErrors.invalidApnsKey(`it is a ${key.asymmetricKeyType ?? 'unknown'} key, not an elliptic-curve P-256 key`)
  }
  try {
    const signing = await importPKCS8(p8.trim(), 'ES256')
    await new SignJWT({ iss: 'CHECK00000' }).setProtectedHeader({ alg: 'ES256', kid: 'CHECK00000' }).setIssuedAt().sign(signing)
  } catch {
    throw pushErrors.invalidApnsKey('it cannot sign an ES256 token (expected an unencrypted PKCS#8 key)')
  }
}

export async function validateApns(input: unknown): Promise<ApnsCredentialsInput> {
  if (!isObject(input)) throw pushErrors.validation('The body must be a JSON object with topic, key_id, team_id and keys')
  // Every field's problem at once (the dashboard shows each beside its input), before a key is parsed.
  const checks = new Checks()
  const topic = checks.check(() => requireString(input, 'topic', (v) => TOPIC.test(v), 'the app\'s bundle id, such as com.example.app'))
  const keyId = checks.check(() => requireString(input, 'key_id', (v) => APPLE_ID.test(v), 'the 10-character key id from the developer account'))
  const teamId = checks.check(() => requireString(input, 'team_id', (v) => APPLE_ID.test(v), 'the 10-character team id from the developer account'))
  const environment = input.environment ?? 'production'
  if (environment !== 'production' && environment !== 'sandbox') checks.refuse(pushErrors.validation('environment must be "production" or "sandbox"', 'environment'))
  if (!Array.isArray(input.keys) || input.keys.length === 0) checks.refuse(pushErrors.validation('keys must be a non-empty array of {"p8": "<contents of the .p8 file>"}', 'keys'))
  else if (input.keys.length > 4) checks.refuse(pushErrors.validation('keys holds at most 4 keys', 'keys'))
  // Past settle() every check above passed.
  checks.settle()
  const keys: { p8: string; key_id: string }[] = []
  for (const [i, entry] of (input.keys as unknown[]).entries()) {
    if (!isObject(entry) || typeof entry.p8 !== 'string' || entry.p8.trim() === '') {
      throw pushErrors.validation(`keys[${i}].p8 is required (the contents of the .p8 file)`, 'keys')
    }
    const own = entry.key_id === undefined ? keyId! : requireString(entry, 'key_id', (v) => APPLE_ID.test(v), 'a 10-character key id')
    await checkP8(entry.p8)
    keys.push({ p8: entry.p8.trim(), key_id: own })
  }
  return { topic: topic!, key_id: keyId!, team_id: teamId!, keys, environment: environment as ApnsCredentialsInput['environment'] }
}

export function validateServiceAccount(input: unknown): ServiceAccount & { token_uri?: string } {
  if (!isObject(input)) throw pushErrors.invalidServiceAccount('the body must be the service-account JSON file')
  if (input.type !== 'service_account') throw pushErrors.invalidServiceAccount('"type" must be "service_account"')
  const projectId = requireString(input, 'project_id', (v) => /^[a-z][a-z0-9-]{4,61}[a-z0-9]$/.test(v), 'a Google Cloud project id')
  const email = requireString(input, 'client_email', (v) => /^[^@\s]+@[^@\s]+$/.test(v), 'the service account\'s email')
  if (typeof input.private_key !== 'string') throw pushErrors.invalidServiceAccount('"private_key" is missing')
  let key: crypto.KeyObject
  try {
    key = crypto.createPrivateKey({ key: input.private_key, format: 'pem' })
  } catch {
    throw pushErrors.invalidServiceAccount('"private_key" is not a PEM private key')
  }
  if (key.asymmetricKeyType !== 'rsa') throw pushErrors.invalidServiceAccount('"private_key" must be an RSA key')
  const keyId = typeof input.private_key_id === 'string' ? input.private_key_id : undefined
  return { project_id: projectId, client_email: email, private_key: input.private_key, private_key_id: keyId }
}

/** Proves the service account works: it must obtain an access token from the token endpoint. */
export async function checkServiceAccount(account: ServiceAccount, options: CredentialOptions = {}): Promise<void> {
  try {
    await createTokenSource(account, options.fcmTokenUrl).getToken()
  } catch (err) {
    if (err instanceof TokenError && !err.refused) throw pushErrors.tokenEndpointUnreachable(err.message)
    throw pushErrors.serviceAccountRefused(err instanceof Error ? err.message : String(err))
  }
}

/** Stores checked APNs keys and wakes the actor (a stop recorded for the old keys is cleared). */
export async function storeApns(db: Queryable, input: ApnsCredentialsInput): Promise<ApnsCredentialsSummary> {
  const { rows } = await db.query<{ updated_at: Date }>(
    `insert into push.credentials (platform, topic, key_id, team_id, environment, secret)
     values ('apns', $1, $2, $3, $4, $5)
     on conflict (platform) do update set topic = excluded.topic, key_id = excluded.key_id, team_id = excluded.team_id,
       environment = excluded.environment, secret = excluded.secret, version = push.credentials.version + 1,
       stopped_reason = null, stopped_at = null, updated_at = now()
     returning updated_at`,
    [input.topic, input.key_id, input.team_id, input.environment ?? 'production', JSON.stringify({ keys: input.keys })],
  )
  await db.query(`select pg_notify('baseplane_push', 'credentials')`)
  return {
    platform: 'apns',
    topic: input.topic,
    key_id: input.key_id,
    team_id: input.team_id,
    environment: input.environment ?? 'production',
    key_ids: input.keys.map((k) => k.key_id ?? input.key_id),
    updated_at: rows[0]!.updated_at.toISOString(),
  }
}

export async function storeFcm(db: Queryable, account: ServiceAccount): Promise<FcmCredentialsSummary> {
  const { rows } = await db.query<{ updated_at: Date }>(
    `insert into push.credentials (platform, project_id, client_email, private_key_id, secret)
     values ('fcm', $1, $2, $3, $4)
     on conflict (platform) do update set project_id = excluded.project_id, client_email = excluded.client_email,
       private_key_id = excluded.private_key_id, secret = excluded.secret, version = push.credentials.version + 1,
       stopped_reason = null, stopped_at = null, updated_at = now()
     returning updated_at`,
    [account.project_id, account.client_email, account.private_key_id ?? null, JSON.stringify(account)],
  )
  await db.query(`select pg_notify('baseplane_push', 'credentials')`)
  return {
    platform: 'fcm',
    project_id: account.project_id,
    client_email: account.client_email,
    private_key_id: account.private_key_id ?? null,
    updated_at: rows[0]!.updated_at.toISOString(),
  }
}

interface StoredState {
  created_at: string
  stopped_reason: string | null
  stopped_at: string | null
}

export interface CredentialStatus {
  apns: (Omit<ApnsCredentialsSummary, 'key_ids'> & StoredState) | null
  fcm: (FcmCredentialsSummary & StoredState) | null
  web: WebCredentialsSummary
}

/** What identifies the stored keys, and whether sending through them is stopped. Never the keys. */
export async function describeCredentials(db: Queryable): Promise<CredentialStatus> {
  const { rows } = await db.query<Record<string, string | Date | null>>(
    `select platform, topic, key_id, team_id, environment, project_id, client_email, private_key_id,
            stopped_reason, stopped_at, created_at, updated_at from push.credentials`,
  )
  const web = (await db.query<{ public_key: string; subject: string }>('select public_key, subject from push.vapid_keys')).rows[0]
  const iso = (v: unknown) => (v instanceof Date ? v.toISOString() : null)
  const apns = rows.find((r) => r.platform === 'apns')
  const fcm = rows.find((r) => r.platform === 'fcm')
  return {
    apns: apns
      ? {
          platform: 'apns',
          topic: apns.topic as string,
          key_id: apns.key_id as string,
          team_id: apns.team_id as string,
          environment: apns.environment as 'production' | 'sandbox',
          created_at: iso(apns.created_at)!,
          updated_at: iso(apns.updated_at)!,
          stopped_reason: apns.stopped_reason as string | null,
          stopped_at: iso(apns.stopped_at),
        }
      : null,
    fcm: fcm
      ? {
          platform: 'fcm',
          project_id: fcm.project_id as string,
          client_email: fcm.client_email as string,
          private_key_id: fcm.private_key_id as string | null,
          created_at: iso(fcm.created_at)!,
          updated_at: iso(fcm.updated_at)!,
          stopped_reason: fcm.stopped_reason as string | null,
          stopped_at: iso(fcm.stopped_at),
        }
      : null,
    web: { platform: 'web', public_key: web?.public_key ?? '', subject: web?.subject ?? '' },
  }
}

export async function deleteCredentials(db: Queryable, platform: Platform): Promise<boolean> {
  const result = await db.query('delete from push.credentials where platform = $1', [platform])
  await db.query(`select pg_notify('baseplane_push', 'credentials')`)
  return (result.rowCount ?? 0) > 0
}

/** Sets the VAPID `sub` claim (a mailto: or https: URL the push services may contact). */
export async function setVapidSubject(db: Queryable, subject: unknown): Promise<WebCredentialsSummary> {
  if (typeof subject !== 'string' || !/^(mailto:[^@\s]+@[^@\s]+|https:\/\/[^\s]+)$/.test(subject)) {
    throw pushErrors.validation('subject must be a mailto: address or an https: URL')
  }
  if (/localhost/i.test(subject)) throw pushErrors.validation('subject must not name localhost: Apple\'s push service refuses it')
  const { rows } = await db.query<{ public_key: string; subject: string }>(
    `update push.vapid_keys set subject = $1, updated_at = now() returning public_key, subject`,
    [subject],
  )
  await db.query(`select pg_notify('baseplane_push', 'credentials')`)
  return { platform: 'web', public_key: rows[0]!.public_key, subject: rows[0]!.subject }
}

async function asAdmin<T>(project: ProjectRecord, serverUrl: string, work: (db: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrlFor(serverUrl, project.dbName), application_name: 'baseplane-cli' })
  client.on('error', () => {})
  await client.connect()
  try {
    return await work(client)
  } catch (err) {
    const code = (err as { code?: string }).code
    if (code === '42P01' || code === '3F000') throw pushErrors.pushNotInstalled()
    throw err
  } finally {
    await client.end().catch(() => {})
  }
}

/** CLI: `baseplane push credentials set REF apns --topic T --key-id K --team-id T --file key.p8`. */
export async function setApnsCredentials(project: ProjectRecord, serverUrl: string, input: unknown): Promise<ApnsCredentialsSummary> {
  const checked = await validateApns(input)
  return asAdmin(project, serverUrl, (db) => storeApns(db, checked))
}

/** CLI: `baseplane push credentials set REF fcm --file service-account.json` (the file's parsed JSON or its text). */
export async function setFcmCredentials(
  project: ProjectRecord,
  serverUrl: string,
  input: unknown,
  options: CredentialOptions = {},
): Promise<FcmCredentialsSummary> {
  let parsed = input
  if (typeof input === 'string') {
    try {
      parsed = JSON.parse(input)
    } catch {
      throw pushErrors.invalidServiceAccount('the file is not JSON')
    }
  }
  const account = validateServiceAccount(parsed)
  await checkServiceAccount(account, options)
  return asAdmin(project, serverUrl, (db) => storeFcm(db, account))
}
