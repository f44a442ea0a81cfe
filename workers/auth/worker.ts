// Auth concern's Piscina task: answers {base_url}/auth/v1/*. Routes to one
// handler per endpoint family; every error becomes GoTrue's error shape, and
// a 4xx from sign-in, sign-up, recovery, OTP, verification or factor
// verification is reported to the data plane's per-address throttle.
import { BaseplaneError } from '../../lib/errors.ts'
import { log } from '../../lib/log.ts'
import type { ServiceHandler, ServiceRequest, ServiceResponse } from '../../lib/service.ts'
import { createUser, deleteUser, generateLink, getUserById, invite, listUsers, updateUser } from './admin.ts'
import { authErrorResponse, authErrors } from './errors.ts'
import { challengeFactor, deleteFactor, enrollFactor, verifyFactor } from './factors.ts'
import { authorize, callback } from './google.ts'
import { logout } from './logout.ts'
import { otp } from './otp.ts'
import { health, settings } from './public.ts'
import { recover } from './recover.ts'
import { authRequest, type AuthRequest } from './request.ts'
import { resend } from './resend.ts'
import { signup } from './signup.ts'
import { token } from './token.ts'
import { getUser, putUser } from './user.ts'
import { verifyGet, verifyPost } from './verify.ts'

type Handler = (req: AuthRequest, params: string[]) => Promise<ServiceResponse>

interface Route {
  method: string
  pattern: RegExp
  handler: Handler
  /** 4xx answers count as failed attempts for the per-address throttle (SPEC 8.1). */
  throttled?: boolean | ((request: ServiceRequest) => boolean)
}

const routes: Route[] = [
  { method: 'POST', pattern: /^\/signup$/, handler: signup, throttled: true },
  // Sign-in grants count; a failed refresh is not a sign-in attempt.
  { method: 'POST', pattern: /^\/token$/, handler: token, throttled: (r) => new URLSearchParams(r.query).get('grant_type') !== 'refresh_token' },
  { method: 'GET', pattern: /^\/user$/, handler: getUser },
  { method: 'PUT', pattern: /^\/user$/, handler: putUser },
  { method: 'POST', pattern: /^\/logout$/, handler: logout },
  { method: 'POST', pattern: /^\/recover$/, handler: recover, throttled: true },
  { method: 'POST', pattern: /^\/otp$/, handler: otp, throttled: true },
  { method: 'POST', pattern: /^\/magiclink$/, handler: otp, throttled: true },
  { method: 'POST', pattern: /^\/verify$/, handler: verifyPost, throttled: true },
  { method: 'GET', pattern: /^\/verify$/, handler: verifyGet, throttled: true },
  { method: 'POST', pattern: /^\/resend$/, handler: resend, throttled: true },
  { method: 'GET', pattern: /^\/settings$/, handler: async (req) => settings(req) },
  { method: 'GET', pattern: /^\/admin\/users$/, handler: listUsers },
  { method: 'POST', pattern: /^\/admin\/users$/, handler: createUser },
  { method: 'GET', pattern: /^\/admin\/users\/([^/]+)$/, handler: (req, [id]) => getUserById(req, id!) },
  { method: 'PUT', pattern: /^\/admin\/users\/([^/]+)$/, handler: (req, [id]) => updateUser(req, id!) },
  { method: 'DELETE', pattern: /^\/admin\/users\/([^/]+)$/, handler: (req, [id]) => deleteUser(req, id!) },
  { method: 'POST', pattern: /^\/invite$/, handler: invite },
  { method: 'POST', pattern: /^\/admin\/generate_link$/, handler: generateLink },
  { method: 'POST', pattern: /^\/factors$/, handler: enrollFactor },
  { method: 'POST', pattern: /^\/factors\/([^/]+)\/challenge$/, handler: (req, [id]) => challengeFactor(req, id!), throttled: true },
  { method: 'POST', pattern: /^\/factors\/([^/]+)\/verify$/, handler: (req, [id]) => verifyFactor(req, id!), throttled: true },
  { method: 'DELETE', pattern: /^\/factors\/([^/]+)$/, handler: (req, [id]) => deleteFactor(req, id!) },
  { method: 'GET', pattern: /^\/authorize$/, handler: authorize, throttled: true },
  { method: 'GET', pattern: /^\/callback$/, handler: callback, throttled: true },
  { method: 'POST', pattern: /^\/callback$/, handler: callback, throttled: true },
]

const handle: ServiceHandler = async (request: ServiceRequest): Promise<ServiceResponse> => {
  if (request.method === 'GET' && request.path === '/health') return health()
  const candidates = routes.filter((r) => r.pattern.test(request.path))
  const route = candidates.find((r) => r.method === request.method)
  const throttled = typeof route?.throttled === 'function' ? route.throttled(request) : route?.throttled === true
  try {
    if (route === undefined) throw authErrors.notFound()
    const params = route.pattern.exec(request.path)!.slice(1).map(decodeURIComponent)
    const response = await route.handler(authRequest(request), params)
    if (throttled && response.status >= 400 && response.status < 500) response.throttleFailure = true
    return response
  } catch (error) {
    const known = BaseplaneError.is(error) ? error : authErrors.unexpected()
    if (!BaseplaneError.is(error)) log.error('auth request failed', error, { ref: request.project.ref, path: request.path })
    const response = authErrorResponse(known, request.headers)
    if (throttled && known.status >= 400 && known.status < 500) response.throttleFailure = true
    return response
  }
}

export default handle
