// The names of a channel: its key (the project's ref, whether it is private,
// and the client's topic, so one project's `realtime:room` is never another's,
// and a private `room` is not the public one, as Supabase Realtime keeps them
// apart) and the uWS topic its sockets of one protocol version subscribe to (a
// frame differs by version).
import type { ProtocolVersion } from '../../workers/realtime/frames.ts'

/** A channel of a project: `ref`, private or public, and the client's topic (`realtime:room`). */
export const channelKey = (ref: string, topic: string, isPrivate: boolean): string => `${ref}${isPrivate ? '-private' : ''}:${topic}`

/** The uWS topic of a channel's sockets of one protocol version. */
export const socketTopic = (vsn: ProtocolVersion, key: string): string => `${vsn}|${key}`
