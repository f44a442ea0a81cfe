// The push service's Piscina task: {base_url}/push/v1 routed to thin handlers.
// Paths are relative to /push/v1. Credentials endpoints need the service_role
// key; sending and device registration run as the caller under RLS.
import { LRUCache } from 'lru-cache'
import type pg from 'pg'
import { BaseplaneError } from '../../lib/errors.ts'
import { log } from '../../lib/log.ts'
import type { ServiceHandler, ServiceRequest, ServiceResponse } from '../../lib/service.ts'
import { projectPools, workerOptions } from '../../lib/worker-context.ts'
import { getCredentials, getVapid, putCredentials, removeCredentials } from './api/credentials.ts'
import { getDevices, postDevice, removeDevice } from './api/devices.ts'
import { getMessage, postMessages } from './api/messages.ts'
import { errorResponse, pushErrors } from './errors.ts'
import { syncPlan } from './install.ts'

export interface PushHandlerOptions {
  /** The project's connection pool (the data plane's login role). */
  poolFor: (request: ServiceRequest) => pg.Pool
  /** OAuth token endpoint for checking FCM service accounts (Google's by default). */
  fcmTokenUrl?: string
  /** Accept http:// Web Push endpoints (tests); https only by default. */
  allowInsecureWebPushEndpoints?: boolean
  /** Where unexpected failures are reported (never into a response). */
  logError?: (err: unknown, request: ServiceRequest) => void
}

type Route = (request: ServiceRequest, pool: pg.Pool, param: string) => Promise<ServiceResponse>

export function createPushHandler(options: PushHandlerOptions): ServiceHandler {
  const deviceOptions = { allowInsecureEndpoints: options.allowInsecureWebPushEndpoints ?? false }
  const credentialOptions = { fcmTokenUrl: options.fcmTokenUrl }
  const routes: Record<string, Partial<Record<string, Route>>> = {
    '/devices': { POST: (r, p) => postDevice(r, p, deviceOptions), GET: (r, p) => getDevices(r, p) },
    '/devices/:id': { DELETE: (r, p, id) => removeDevice(r, p, id) },
    '/messages': { POST: (r, p) => postMessages(r, p) },
    '/messages/:id': { GET: (r, p, id) => getMessage(r, p, id) },
    '/credentials': { GET: (r, p) => getCredentials(r, p) },
    '/credentials/:platform': {
      PUT: (r, p, platform) => putCredentials(r, p, platform, credentialOptions),
      DELETE: (r, p, platform) => removeCredentials(r, p, platform),
    },
    '/vapid': { GET: (r, p) => getVapid(r, p) },
  }
  // The fan-out trigger reads the plan from push.settings; bring it up to date
  // once per catalogue version this thread sees (the actor host does it too).
  const planSynced = new LRUCache<string, number>({ max: 10000 })

  return async function handlePush(request) {
    try {
      const path = request.path.replace(/\/+$/, '')
      const parts = path.split('/')
      const [pattern, param] =
        parts.length === 3 && routes[`/${parts[1]}/:id`]
          ? [`/${parts[1]}/:id`, decodeURIComponent(parts[2]!)]
          : parts.length === 3 && routes[`/${parts[1]}/:platform`]
            ? [`/${parts[1]}/:platform`, decodeURIComponent(parts[2]!)]
            : [path, '']
      const methods = routes[pattern]
      if (!methods) throw pushErrors.notFound(request.method, request.path)
      const route = methods[request.method.toUpperCase()]
      if (!route) throw pushErrors.methodNotAllowed(request.method, request.path, Object.keys(methods))
      const pool = options.poolFor(request)
      const { ref, version, plan } = request.project
      if (request.method === 'POST' && pattern === '/messages' && planSynced.get(ref) !== version) {
        await syncPlan(pool, plan).catch(() => {})
        planSynced.set(ref, version)
      }
      return await route(request, pool, param)
    } catch (err) {
      if (BaseplaneError.is(err)) return errorResponse(err)
      options.logError?.(err, request)
      return errorResponse(pushErrors.internal())
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
    const settings: PushWorkerSettings = workerOptions().push
    handler = createPushHandler({
      poolFor: (r) => projectPools().get(r.project.database),
      fcmTokenUrl: settings.fcmTokenUrl,
      allowInsecureWebPushEndpoints: settings.allowInsecureWebPushEndpoints ?? false,
      logError: (err, r) => log.error('push request failed', err, { ref: r.project.ref, method: r.method, path: r.path }),
    })
  }
  return handler(request)
}

export default handle
