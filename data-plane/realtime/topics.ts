// The names of a channel: its key (the project's ref and the client's topic,
// so one project's `realtime:room` is never another's) and the uWS topic its
// sockets of one protocol version subscribe to (a frame differs by version).
import type { ProtocolVersion } from '../../workers/realtime/frames.ts'

/** A channel of a project: `ref` and the client's topic (`realtime:room`). */
export const channelKey = (ref: string, topic: string): string => `${ref}:${topic}`

/** The uWS topic of a channel's sockets of one protocol version. */
export const socketTopic = (vsn: ProtocolVersion, key: string): string => `${vsn}|${key}`
