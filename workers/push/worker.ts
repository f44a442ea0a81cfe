// The push service's Piscina task: {base_url}/push/v1 routed (manifest.ts's
// table) to thin handlers. Paths are relative to /push/v1. Credentials endpoints need the service_role
// key; sending and device registration run as the caller under RLS.
import { LRUCache } from 'lru-cache'
import { classifyDatabaseError } from '../../lib/db/database-errors.ts'
import type { DatabasePool } from '../../lib/db/project-pools.ts'
import { BaseplaneError } from '../../lib/errors.ts'
import { platformErrorResponse } from '../../lib/http/errors.ts'
import { Router } from '../../lib/http/router.ts'
import { log } from '../../lib/log.ts'
import type { ServiceHandler, ServiceRequest, ServiceResponse } from '../../lib/service.ts'
import { projectPools, workerSection } from '../../lib/worker-context.ts'
import { getCredentials, getVapid, putCredentials, removeCredentials } from './api/credentials.ts'
import { getDevices, postDevice, removeDevice } from './api/devices.ts'
import { getMessage, postMessages } from './api/messages.ts'
import { pushErrors } from './errors.ts'
import { syncPushSettings } from './install.ts'
import { pushManifest, type PushRouteName } from './manifest.ts'

export interface PushHandlerOptions {
  /** The project's pool of the API's login role: devices and messages, as the caller. */
  poolFor: (request: ServiceRequest) => DatabasePool
  /** The project's pool of the platform's login role (lib/db/platform-logins.ts): keys and push.settings, where no owner code runs. */
  platformPoolFor: (request: ServiceRequest) => DatabasePool
  /** OAuth token endpoint for checking FCM service accounts (Google's by default). */
  fcmTokenUrl?: string
  /** Accept http:// Web Push endpoints (tests); https only by default. */
  allowInsecureWebPushEndpoints?: boolean
  /** Where unexpected failures are reported (never into a response). */
  logError?: (err: unknown, request: ServiceRequest) => void
}

/** `pool` runs the caller's statements; `platform`, the platform's own (the provider keys). */
type Handler = (request: ServiceRequest, pool: DatabasePool, params: Record<string, string>, platform: DatabasePool) => Promise<ServiceResponse>

const router = new Router(pushManifest.routes, { ignoreTrailingSlash: true, decodeParams: true })

export function createPushHandler(options: PushHandlerOptions): ServiceHandler {
  const deviceOptions = { allowInsecureEndpoints: options.allowInsecureWebPushEndpoints ?? false }
  const credentialOptions = { fcmTokenUrl: options.fcmTokenUrl }
  const handlers: Record<PushRouteName, Handler> = {
    postDevice: (r, p) => postDevice(r, p, deviceOptions),
    getDevices: (r, p) => getDevices(r, p),
    removeDevice: (r, p, { id }) => removeDevice(r, p, id!),
    postMessages: (r, p) => postMessages(r, p),
    getMessage: (r, p, { id }) => getMessage(r, p, id!),
    getCredentials: (r, _p, _params, keys) => getCredentials(r, keys),
    putCredentials: (r, _p, { platform }, keys) => putCredentials(r, keys, platform!, credentialOptions),
    removeCredentials: (r, _p, { platform }, keys) => removeCredentials(r, keys, platform!),
    getVapid: (r, _p, _params, keys) => getVapid(r, keys),
  }
  // The fan-out trigger reads the plan and the deliveries cap from push.settings; bring them up to date
  // once per catalogue version this thread sees (the actor host does it too).
  const planSynced = new LRUCache<string, number>({ max: 10000 })

  return async function handlePush(request) {
    try {
      const match = router.match(request.method, request.path)
      if (match.kind === 'not_found') throw pushErrors.notFound(request.method, request.path)
      if (match.kind === 'method_not_allowed') throw pushErrors.methodNotAllowed(request.method, request.path, match.allow)
      const pool = options.poolFor(request)
      const platform = options.platformPoolFor(request)
      const { ref, version, plan } = request.project
      if (match.route.name === 'postMessages' && planSynced.get(ref) !== version) {
        await syncPushSettings(platform, { plan, deliveriesCap: request.project.caps.push_deliveries ?? null, version }).catch(() => {})
        planSynced.set(ref, version)
      }
      return await handlers[match.route.name](request, pool, match.params, platform)
    } catch (err) {
      // Before the catalogue check: a pool's database_busy is answered as this service's own 503.
      // A read-only refusal the quota did not cause is the server's (a standby, a promotion under way).
      const failure = classifyDatabaseError(err, { readOnlyByPlatform: request.project.readOnly === true })
      if (failure !== undefined) {
        options.logError?.(err, request)
        return platformErrorResponse(failure === 'timeout' ? pushErrors.requestTimeout() : pushErrors.databaseUnavailable())
      }
      if (BaseplaneError.is(err)) return platformErrorResponse(err)
      options.logError?.(err, request)
      return platformErrorResponse(pushErrors.internal())
    }
  }
}

let handler: ServiceHandler | undefined

/**
 * Push's platform-level settings in the worker options (optional: the
 * defaults are Google's token endpoint and https-only Web Push endpoints).
 */
export interface PushWorkerSettings {
  fcmTokenUrl?: string
  allowInsecureWebPushEndpoints?: boolean
}

/** Piscina entry. */
const handle: ServiceHandler = (request) => {
  if (handler === undefined) {
    const settings: PushWorkerSettings = workerSection('push')
    handler = createPushHandler({
      poolFor: (r) => projectPools().get(r.project.database),
      platformPoolFor: (r) => projectPools().get(r.project.platformDatabase ?? r.project.database),
      fcmTokenUrl: settings.fcmTokenUrl,
      allowInsecureWebPushEndpoints: settings.allowInsecureWebPushEndpoints ?? false,
      logError: (err, r) => log.error('push request failed', err, { ref: r.project.ref, method: r.method, path: r.path }),
    })
  }
  return handler(request)
}

export default handle
