// /credentials endpoints: only with the service_role key. They run as the
// data plane's own login role, the only API-side role that may touch keys.
import type pg from 'pg'
import { json, type ServiceRequest, type ServiceResponse } from '../../../lib/service.ts'
import {
  checkServiceAccount,
  deleteCredentials,
  describeCredentials,
  setVapidSubject,
  storeApns,
  storeFcm,
  validateApns,
  validateServiceAccount,
} from '../credentials.ts'
import { pushErrors } from '../errors.ts'
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

export async function getCredentials(request: ServiceRequest, pool: pg.Pool): Promise<ServiceResponse> {
  requireServiceRole(request)
  return json(200, await run(() => describeCredentials(pool)))
}

export async function putCredentials(
  request: ServiceRequest,
  pool: pg.Pool,
  platform: string,
  options: CredentialApiOptions,
): Promise<ServiceResponse> {
  requireServiceRole(request)
  const body = parseBody(request)
  if (platform === 'apns') {
    const input = await validateApns(body)
    return json(200, await run(() => storeApns(pool, input)))
  }
  if (platform === 'fcm') {
    const account = validateServiceAccount(body)
    await checkServiceAccount(account, { fcmTokenUrl: options.fcmTokenUrl })
    return json(200, await run(() => storeFcm(pool, account)))
  }
  if (platform === 'web') {
    const subject = typeof body === 'object' && body !== null ? (body as Record<string, unknown>).subject : undefined
    return json(200, await run(() => setVapidSubject(pool, subject)))
  }
  throw pushErrors.notFound(request.method, request.path)
}

export async function removeCredentials(request: ServiceRequest, pool: pg.Pool, platform: string): Promise<ServiceResponse> {
  requireServiceRole(request)
  if (platform !== 'apns' && platform !== 'fcm') throw pushErrors.notFound(request.method, request.path)
  const deleted = await run(() => deleteCredentials(pool, platform))
  if (!deleted) throw pushErrors.credentialsNotFound(platform)
  return { status: 204, headers: {}, body: '' }
}

/** GET /vapid: the public half of the project's VAPID key pair, for the browser's subscribe(). */
export async function getVapid(_request: ServiceRequest, pool: pg.Pool): Promise<ServiceResponse> {
  const { rows } = await run(() => pool.query<{ key: string }>('select push.vapid_public_key() as key'))
  return json(200, { public_key: rows[0]?.key ?? null })
}
