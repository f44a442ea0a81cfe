// The names of a channel: its key (the project's ref, whether it is private,
// and the client's topic, so one project's `realtime:room` is never another's,
// and a private `room` is not the public one, as Supabase Realtime keeps them
// apart) and the uWS topic its sockets of one protocol version subscribe to (a
// frame differs by version), and the subjects a channel takes between nodes.
import type { ProtocolVersion } from '../../workers/realtime/frames.ts'

/** A channel of a project: `ref`, private or public, and the client's topic (`realtime:room`). */
export const channelKey = (ref: string, topic: string, isPrivate: boolean): string => `${ref}${isPrivate ? '-private' : ''}:${topic}`

/** The uWS topic of a channel's sockets of one protocol version. */
export const socketTopic = (vsn: ProtocolVersion, key: string): string => `${vsn}|${key}`

/** The client's topic of a channel key (a ref holds no `:`). */
export const topicOfKey = (key: string): string => key.slice(key.indexOf(':') + 1)

/**
 * The bus subject of a channel: NATS subjects are dot-separated tokens without
 * spaces or wildcards, and a client's topic may hold any of them, so the key
 * goes as base64url; the ref stays readable (for `nats sub 'rt.ch.<ref>.>'`).
 */
export const channelSubject = (key: string): string => `rt.ch.${key.slice(0, key.indexOf(':')).replace(/[^A-Za-z0-9_-]/g, '_')}.${Buffer.from(key).toString('base64url')}`

/** Where the nodes tell each other about presence (every node listens: each holds the fleet's presence). */
export const PRESENCE_SUBJECT = 'rt.presence'
