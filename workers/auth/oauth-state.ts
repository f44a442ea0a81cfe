// The OAuth `state` that goes to Google and comes back to /callback: a
// short-lived HS256 JWT (as GoTrue's through v2.185) naming the flow_state row
// and carrying a one-time secret whose hash that row keeps. It is signed with
// a key derived from the project's JWT secret, so a state is never an access
// token and an access token is never a state.
import crypto from 'node:crypto'
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose'
import { hs256Key } from '../../lib/jwt.ts'
import { FLOW_STATE_EXPIRY_SECONDS } from './db/flow-state.ts'

function stateKey(jwtSecret: string): Promise<CryptoKey> {
  return hs256Key(`oauth state\0${jwtSecret}`, () => crypto.createHmac('sha256', jwtSecret).update('baseplane oauth state v1').digest())
}

export interface OAuthState {
  flowStateId: string
  secret: string
  provider: string
}

export function newStateSecret(): string {
  return crypto.randomBytes(24).toString('base64url')
}

/** What the flow_state row keeps of the secret. */
export function secretHash(secret: string): string {
  return crypto.createHash('sha256').update(secret).digest('hex')
}

/** The OpenID nonce of the flow: binds the ID token to this sign-in. */
export function nonceOf(secret: string): string {
  return crypto.createHash('sha256').update(`nonce:${secret}`).digest('base64url')
}

export async function signState(jwtSecret: string, state: OAuthState, siteUrl: string): Promise<string> {
  const now = Math.floor(Date.now() / 1000)
  return new SignJWT({ flow_state_id: state.flowStateId, secret: state.secret, provider: state.provider, site_url: siteUrl })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuedAt(now)
    .setExpirationTime(now + FLOW_STATE_EXPIRY_SECONDS)
    .sign(await stateKey(jwtSecret))
}

export type StateProblem = 'invalid' | 'expired'

export async function verifyState(jwtSecret: string, token: string): Promise<OAuthState | StateProblem> {
  try {
    const { payload } = await jwtVerify(token, await stateKey(jwtSecret), { algorithms: ['HS256'] })
    const { flow_state_id: flowStateId, secret, provider } = payload as Record<string, unknown>
    if (typeof flowStateId !== 'string' || typeof secret !== 'string' || typeof provider !== 'string') return 'invalid'
    return { flowStateId, secret, provider }
  } catch (error) {
    return error instanceof joseErrors.JWTExpired ? 'expired' : 'invalid'
  }
}
