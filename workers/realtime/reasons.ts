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
  privateNotServed: (): Refusal => ({ code: 'PrivateChannelsNotServed', message: 'This node does not authorize private channels: join without config.private' }),
  unreadable: (topic: string): Refusal => ({ code: 'Unauthorized', message: `You do not have permissions to read from this Channel topic: ${topic}` }),
  tooManyConnections: (): Refusal => ({ code: 'ConnectionRateLimitReached', message: 'Too many connected users' }),
  tooManyJoins: (): Refusal => ({ code: 'ClientJoinRateLimitReached', message: 'Too many joins per second' }),
  tooManyMessages: (): Refusal => ({ code: 'TooManyMessages', message: 'Too many messages per second' }),
  tooManyPresence: (): Refusal => ({ code: 'PresenceRateLimitReached', message: 'Too many presence messages per second' }),
  payloadTooLarge: (): Refusal => ({ code: 'PayloadSizeExceeded', message: 'Payload size exceeded' }),
  unwritable: (topic: string): Refusal => ({ code: 'Unauthorized', message: `You do not have permissions to write to this Channel topic: ${topic}` }),
  notAuthorized: (): Refusal => ({ code: 'UnableToSetPolicies', message: 'The channel\'s policies could not be checked: try again' }),
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
