// What a concern tells the data plane about itself, in a module small enough
// for the data plane to import without the concern's code: where it lives,
// its routes (the worker's router uses the same table), which of them a
// browser opens without an apikey, which count for the per-address throttle,
// and the shape the data plane answers its refusals in.
import type { ProjectRecord } from '../catalogue.ts'
import type { Concern, ServiceRequest } from '../service.ts'
import type { ErrorShape } from './errors.ts'
import type { RouteSpec } from './router.ts'

export interface ConcernRoute<Name extends string = string> extends RouteSpec {
  /** The worker's handler for it (the manifest names it; the worker holds it). */
  name: Name
  /** Opened by a browser from an email or a provider redirect, so it carries no apikey. */
  open?: boolean
  /** The body is handed to the worker as it arrives (lib/port-stream.ts), of any length, instead of read whole first. */
  streamsBody?: boolean
  /** 4xx answers count as failed attempts for the per-address throttle (SPEC 8.1). */
  throttled?: boolean | ((request: ServiceRequest) => boolean)
}

export interface ConcernManifest<Name extends string = string> {
  concern: Concern
  /** Path prefix below the project (`/auth/v1`); routes are relative to it. */
  prefix: string
  routes: readonly ConcernRoute<Name>[]
  /** The shape of the data plane's own refusals (no key, throttled, disabled) for this concern. */
  refusals: ErrorShape
  /** The worker may answer with a streamed body (ServiceResponse.streamed), so each request carries a reply port. */
  streamsAnswers?: boolean
  /** The catalogue flag that turns the concern on; absent when it is always on. */
  enabledBy?: keyof Pick<ProjectRecord, 'authEnabled' | 'pushEnabled'>
}

/** Whether the manifest's route counts this answer as a failed attempt. */
export function countsForThrottle(route: ConcernRoute | undefined, request: ServiceRequest): boolean {
  return typeof route?.throttled === 'function' ? route.throttled(request) : route?.throttled === true
}
