// POST /token?grant_type=password|refresh_token|pkce|id_token (and web3,
// which is not offered).
import type { ServiceResponse } from '../../lib/service.ts'
import { json } from '../../lib/service.ts'
import { challengeMatches, deleteFlowState, FLOW_STATE_EXPIRY_SECONDS, lockFlowState } from './db/flow-state.ts'
import { transaction } from './db/pool.ts'
import { userByEmail, userById } from './db/users.ts'
import { authErrors } from './errors.ts'
import { idTokenGrant } from './id-token.ts'
import { passwordMatches } from './passwords.ts'
import { str, type AuthRequest } from './request.ts'
import { issueSession, refreshSession } from './tokens.ts'

export async function token(req: AuthRequest): Promise<ServiceResponse> {
  const grant = req.query.get('grant_type')
  switch (grant) {
    case 'password':
      return json(200, await passwordGrant(req))
    case 'refresh_token': {
      const refresh = str(req.body, 'refresh_token')
      if (!refresh) throw authErrors.refreshTokenInvalid()
      return json(200, await refreshSession(req, refresh))
    }
    case 'pkce':
      return json(200, await pkceGrant(req))
    case 'id_token':
      return json(200, await idTokenGrant(req))
    case 'web3':
      throw authErrors.web3Disabled()
    default:
      throw authErrors.invalidCredentials('unsupported_grant_type')
  }
}

async function passwordGrant(req: AuthRequest) {
  const email = str(req.body, 'email')
  const phone = str(req.body, 'phone')
  const password = str(req.body, 'password') ?? ''
  if (email && phone) throw authErrors.validation('Only an email address or phone number should be provided on login.')
  if (!email && !phone) throw authErrors.validation('missing email or phone')
  if (phone) throw authErrors.phoneLoginDisabled()
  const user = await userByEmail(req.pool, email!.trim().toLowerCase())
  if (!passwordMatches(password, user?.encrypted_password ?? null) || user === undefined) throw authErrors.invalidCredentials()
  if (user.banned_until && user.banned_until > new Date()) throw authErrors.userBanned()
  if (!user.email_confirmed_at) throw authErrors.emailNotConfirmed()
  return issueSession(req.pool, req, user, { method: 'password' })
}

async function pkceGrant(req: AuthRequest) {
  const authCode = str(req.body, 'auth_code')
  const verifier = str(req.body, 'code_verifier')
  if (!authCode || !verifier) throw authErrors.validation('invalid request: both auth code and code verifier should be non-empty')
  // GoTrue's order: not found, expired, verifier; the row goes only with the session it gave.
  const { flow, session } = await transaction(req.pool, async (client) => {
    const flow = await lockFlowState(client, authCode, FLOW_STATE_EXPIRY_SECONDS)
    if (flow === undefined || flow.user_id === null) throw authErrors.flowStateNotFound()
    if (flow.expired) throw authErrors.flowStateExpired()
    if (!challengeMatches(flow, verifier)) throw authErrors.badCodeVerifier()
    const user = await userById(client, flow.user_id)
    if (user === undefined) throw authErrors.flowStateNotFound()
    if (user.banned_until && user.banned_until > new Date()) throw authErrors.userBanned()
    const session = await issueSession(client, req, user, { method: flow.authentication_method })
    await deleteFlowState(client, flow.id)
    return { flow, session }
  })
  return {
    ...session,
    ...(flow.provider_access_token ? { provider_token: flow.provider_access_token } : {}),
    ...(flow.provider_refresh_token ? { provider_refresh_token: flow.provider_refresh_token } : {}),
  }
}
