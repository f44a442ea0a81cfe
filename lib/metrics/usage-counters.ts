// What usage is counted per project and minute (issue 27 item 1), by the name
// it carries in the catalogue (sql/catalogue/0013_usage.sql), in the admin
// API's answers and in the billing export's columns; and the UTC months and
// minutes it is counted in (the billing month is the UTC calendar month).
import { SERVICES } from './project-figures.ts'

/** Push providers and outcomes as the push actor thread's tally labels them (workers/push/delivery-tally.ts). */
export const PUSH_PROVIDERS = ['apns', 'fcm', 'web'] as const
export const PUSH_OUTCOMES = ['sent', 'failed', 'retry', 'held', 'expired'] as const

/**
 * Every counter, in a fixed order (the recorder's arrays are indexed by it):
 * answers and response-body bytes per service, Auth's sign-ins and token
 * refreshes, the platform's mail sent (SMTP or outbox; a project's own send
 * email hook is its mail, not counted), push deliveries by provider and outcome,
 * Realtime's broadcasts.
 */
export const USAGE_COUNTERS: readonly string[] = [
  ...SERVICES.map((service) => `requests_${service}`),
  ...SERVICES.map((service) => `bytes_out_${service}`),
  'auth_sign_ins',
  'auth_token_refreshes',
  'mail_sent',
  ...PUSH_PROVIDERS.flatMap((provider) => PUSH_OUTCOMES.map((outcome) => `push_${provider}_${outcome}`)),
  // Realtime's broadcasts taken (sockets and the HTTP API), as Supabase counts Realtime messages.
  'realtime_messages',
  // The most Realtime sockets open at once: a peak, not a sum (isPeakCounter).
  'realtime_peak_connections',
]

export const REQUESTS_AT = USAGE_COUNTERS.indexOf('requests_auth')
export const BYTES_OUT_AT = USAGE_COUNTERS.indexOf('bytes_out_auth')
export const SIGN_INS_AT = USAGE_COUNTERS.indexOf('auth_sign_ins')
export const REFRESHES_AT = USAGE_COUNTERS.indexOf('auth_token_refreshes')
export const MAIL_AT = USAGE_COUNTERS.indexOf('mail_sent')
export const PUSH_AT = USAGE_COUNTERS.indexOf('push_apns_sent')
export const REALTIME_MESSAGES_AT = USAGE_COUNTERS.indexOf('realtime_messages')
export const REALTIME_PEAK_AT = USAGE_COUNTERS.indexOf('realtime_peak_connections')

/**
 * Whether a counter is a peak (`*_peak_*`): the nodes' figures of one minute
 * add up (each node's sockets are its own), and a longer period keeps its
 * largest minute rather than a sum. The catalogue's statements say the same
 * with PEAK_COUNTER_SQL.
 */
export const isPeakCounter = (name: string): boolean => name.includes('_peak_')

/** isPeakCounter in SQL, on a `counter` column. */
export const PEAK_COUNTER_SQL = `counter like '%\\_peak\\_%'`

const INDEX = new Map(USAGE_COUNTERS.map((name, i) => [name, i]))

/** A counter's index by its name; -1 for a name this version does not count. */
export function counterIndex(name: string): number {
  return INDEX.get(name) ?? -1
}

/** The counter of a push delivery's tally labels; -1 for a provider or outcome not counted. */
export function pushCounterIndex(provider: string, outcome: string): number {
  const p = PUSH_PROVIDERS.indexOf(provider as (typeof PUSH_PROVIDERS)[number])
  const o = PUSH_OUTCOMES.indexOf(outcome as (typeof PUSH_OUTCOMES)[number])
  return p === -1 || o === -1 ? -1 : PUSH_AT + p * PUSH_OUTCOMES.length + o
}

export const MINUTE_MS = 60_000

/** The start of the UTC minute holding `ms`. */
export function minuteOf(ms: number): number {
  return Math.floor(ms / MINUTE_MS) * MINUTE_MS
}

/** The first day of the UTC month holding `ms`, as `YYYY-MM-01` (a catalogue `date`). */
export function monthDateOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 7) + '-01'
}
