// Realtime's refusals as supabase/realtime words them: a join's error reply
// carries `{reason: "<Code>: <message>"}`, which realtime-js hands subscribe()'s
// callback; a channel ended later gets a `system` message with the message
// alone, then `phx_close`.
import { decodeJwt } from 'jose'
import { BaseplaneError } from '../../lib/errors.ts'

export interface Refusal {
  code: string
  message: string
}

export const reasonOf = (refusal: Refusal): string => `${refusal.code}: ${refusal.message}`

export const refusals = {
  topicRequired: (): Refusal => ({ code: 'TopicNameRequired', message: 'You must provide a topic name' }),
  tooManyChannels: (): Refusal => ({ code: 'ChannelRateLimitReached', message: 'Too many channels' }),
  privateNotServed: (): Refusal => ({
    code: 'PrivateChannelsNotServed',
    message: 'Baseplane does not serve private channels (config.private) yet: join without it',
  }),
  presencePayload: (): Refusal => ({ code: 'InvalidPresencePayload', message: 'Presence track payload must be a map' }),
  unmatchedTopic: (): Refusal => ({ code: 'UnmatchedTopic', message: 'unmatched topic' }),
}

/** Seconds since the token's `exp` (0 when it cannot be read or has not passed). */
export function secondsExpired(token: string, now = Date.now()): number {
  try {
    const exp = decodeJwt(token).exp
    return typeof exp === 'number' ? Math.max(0, Math.floor(now / 1000 - exp)) : 0
  } catch {
    return 0
  }
}

export const expiredToken = (token: string): Refusal => ({ code: 'InvalidJWTToken', message: `Token has expired ${secondsExpired(token)} seconds ago` })

/** The refusal of a token the gate's JWT check refused (lib/jwt.ts words its reasons). */
export function tokenRefusal(error: unknown, token: string): Refusal {
  const message = BaseplaneError.is(error) ? error.message : String(error)
  if (message.includes('token has expired')) return expiredToken(token)
  if (message.includes('required claim')) return { code: 'InvalidJWTToken', message: 'Fields `role` and `exp` are required in JWT' }
  if (message.includes('signature is invalid')) return { code: 'JwtSignatureError', message: 'Failed to validate JWT signature' }
  if (message.includes('unable to parse token')) return { code: 'MalformedJWT', message: 'The token provided is not a valid JWT' }
  return { code: 'Unauthorized', message: message.replace(/^Invalid JWT: /, '') }
}
