// Auth concern's Piscina task: answers {base_url}/auth/v1/*. Routes (the
// table is manifest.ts's) to one handler per endpoint family; every error
// becomes GoTrue's error shape, and a 4xx from sign-in, sign-up, recovery,
// OTP, verification or factor verification is reported to the data plane's per-address throttle.
import { classifyDatabaseError } from '../../lib/db/database-errors.ts'
import { BaseplaneError } from '../../lib/errors.ts'
import { countsForThrottle } from '../../lib/http/manifest.ts'
import { Router } from '../../lib/http/router.ts'
import { log } from '../../lib/log.ts'
import type { AuthProjectContext, ServiceHandler, ServiceRequest, ServiceResponse, ServiceUsage } from '../../lib/service.ts'
import { createUser, deleteUser, generateLink, getUserById, invite, listMail, listUsers, updateUser } from './admin.ts'
import { deleteUserFactor, listUserFactors } from './admin-factors.ts'
import { oauthServer, passkeys, recoveryCodesDelete, recoveryCodesEnroll, recoveryCodesStatus, recoveryCodesVerify, sso } from './disabled.ts'
import { authErrorResponse, authErrors } from './errors.ts'
import { challengeFactor, deleteFactor, enrollFactor, verifyFactor } from './factors.ts'
import { linkIdentity, unlinkIdentity } from './identities.ts'
import { authorize, callback } from './google.ts'
import { jwks } from './jwks.ts'
import { logout } from './logout.ts'
import { authManifest, type AuthRouteName } from './manifest.ts'
import { otp } from './otp.ts'
import { health, settings } from './public.ts'
import { reauthenticate } from './reauthenticate.ts'
import { recover } from './recover.ts'
import { authRequest, type AuthRequest } from './request.ts'
import { resend } from './resend.ts'
import { signup } from './signup.ts'
import { token } from './token.ts'
import { getUser, putUser } from './user.ts'
import { verifyGet, verifyPost } from './verify.ts'

type Handler = (req: AuthRequest, params: Record<string, string>) => Promise<ServiceResponse>

/** A handler of a route with an `:id` (its manifest path names it). */
const byId =
  (handler: (req: AuthRequest, id: string) => Promise<ServiceResponse>): Handler =>
  (req, { id }) =>
    handler(req, id!)

const handlers: Record<Exclude<AuthRouteName, 'health'>, Handler> = {
  signup,
  token,
  getUser,
  putUser,
  logout,
  recover,
  otp,
  verifyPost,
  verifyGet,
  resend,
  settings: async (req) => settings(req),
  jwks,
  listUsers,
  listMail,
  createUser,
  getUserById: byId(getUserById),
  updateUser: byId(updateUser),
  deleteUser: byId(deleteUser),
  listUserFactors: byId(listUserFactors),
  deleteUserFactor: (req, { id, factorId }) => deleteUserFactor(req, id!, factorId!),
  reauthenticate,
  invite,
  generateLink,
  enrollFactor,
  challengeFactor: byId(challengeFactor),
  verifyFactor: byId(verifyFactor),
  deleteFactor: byId(deleteFactor),
  authorize,
  callback,
  sso,
  linkIdentity,
  unlinkIdentity: byId(unlinkIdentity),
  passkeys,
  recoveryCodesStatus,
  recoveryCodesEnroll,
  recoveryCodesVerify,
  recoveryCodesDelete,
  oauthServer,
}

const router = new Router(authManifest.routes, { decodeParams: true })

const handle: ServiceHandler<AuthProjectContext> = async (request: ServiceRequest<AuthProjectContext>): Promise<ServiceResponse> => {
  let throttled = false
  let req: AuthRequest | undefined
  try {
    const match = router.match(request.method, request.path)
    // GoTrue answers a known path under another method as not found, too.
    if (match.kind !== 'found') throw authErrors.notFound()
    if (match.route.name === 'health') return health()
    throttled = countsForThrottle(match.route, request)
    req = authRequest(request)
    const response = await handlers[match.route.name](req, match.params)
    if (throttled && response.status >= 400 && response.status < 500) response.throttleFailure = true
    if (req.usage !== undefined) usageOf(req.usage, response)
    return response
  } catch (error) {
    // The pool (db/pool.ts) already turns database failures into catalogue errors; this catches any other path.
    const failure = classifyDatabaseError(error)
    const known =
      failure === 'timeout' ? authErrors.requestTimeout()
      : failure === 'unavailable' ? authErrors.databaseUnavailable()
      : BaseplaneError.is(error) ? error
      : authErrors.unexpected()
    if (failure !== undefined || !BaseplaneError.is(error)) log.error('auth request failed', error, { ref: request.project.ref, path: request.path })
    const response: ServiceResponse = authErrorResponse(known, request.headers)
    if (throttled && known.status >= 400 && known.status < 500) response.throttleFailure = true
    // Mail sent before the failure was sent all the same.
    if (req?.usage !== undefined) usageOf(req.usage, response)
    return response
  }
}

/** The request's usage note, sent with its answer when it holds anything (usage-note.ts). */
function usageOf(note: ServiceUsage, response: ServiceResponse): void {
  // A session issued inside work that then failed was never handed out (its transaction rolled back).
  if (response.status >= 400) note.session = note.user = undefined
  if (note.session !== undefined || note.mails !== undefined) response.usage = note
}

export default handle
