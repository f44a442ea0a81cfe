// /credentials and /vapid endpoints: credentials only with the service_role key.
// They run as the platform's login role (lib/db/platform-logins.ts), the only
// role that may touch keys, on which no owner code runs.
import type { DatabasePool } from '../../../lib/db/project-pools.ts'
import { json, type ServiceRequest, type ServiceResponse } from '../../../lib/service.ts'
import { deleteCredentials, describeCredentials } from '../credentials.ts'
import { pushErrors } from '../errors.ts'
import { providerFor } from '../providers/registry.ts'
import { mapDatabaseError, parseBody, requireServiceRole } from './request.ts'

export interface CredentialApiOptions {
  fcmTokenUrl: string | undefined
}

async function run<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (err) {
    mapDatabaseError(err, pushErrors.serviceRoleRequired)
  }
}

export async function getCredentials(request: ServiceRequest, pool: DatabasePool): Promise<ServiceResponse> {
  requireServiceRole(request)
  return json(200, await run(() => describeCredentials(pool)))
}

export async function putCredentials(
  request: ServiceRequest,
  pool: DatabasePool,
  platform: string,
  options: CredentialApiOptions,
): Promise<ServiceResponse> {
  requireServiceRole(request)
  const body = parseBody(request)
  const entry = providerFor(platform)
  if (!entry) throw pushErrors.notFound(request.method, request.path)
  const write = await entry.acceptCredentials(body, { fcmTokenUrl: options.fcmTokenUrl })
  return json(200, await run(() => write(pool)))
}

export async function removeCredentials(request: ServiceRequest, pool: DatabasePool, platform: string): Promise<ServiceResponse> {
  requireServiceRole(request)
  const entry = providerFor(platform)
  if (!entry?.storedKeys) throw pushErrors.notFound(request.method, request.path)
  const deleted = await run(() => deleteCredentials(pool, entry.platform))
  if (!deleted) throw pushErrors.credentialsNotFound(platform)
  return { status: 204, headers: {}, body: '' }
}

/** GET /vapid: the public half of the project's VAPID key pair, for the browser's subscribe(). */
export async function getVapid(_request: ServiceRequest, pool: DatabasePool): Promise<ServiceResponse> {
  const { rows } = await run(() => pool.query<{ key: string }>('select push.vapid_public_key() as key'))
  return json(200, { public_key: rows[0]?.key ?? null })
}
