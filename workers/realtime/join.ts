// What a phx_join asks for (realtime-js's `config` and `access_token`), read
// as Supabase Realtime reads it: a field of the wrong type falls back to its
// default rather than refusing the join.

export interface PostgresChangesBinding {
  event: string
  schema: string
  table?: string
  filter?: string
  /** The columns to send (realtime-js's `select`); all the caller may select when absent. */
  select?: string[]
}

export interface JoinConfig {
  broadcast: { self: boolean; ack: boolean; replay?: { since: number; limit: number } }
  presence: { enabled: boolean; key: string }
  postgresChanges: PostgresChangesBinding[]
  private: boolean
  /** The caller's token: a user's JWT, or none (the socket's apikey stands for it). */
  accessToken: string | undefined
}

const record = (value: unknown): Record<string, unknown> => (value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {})
const flag = (value: unknown, fallback: boolean): boolean => (typeof value === 'boolean' ? value : fallback)
const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined)

function binding(value: unknown): PostgresChangesBinding | undefined {
  const entry = record(value)
  const event = text(entry.event)
  if (event === undefined) return undefined
  const table = text(entry.table)
  const filter = text(entry.filter)
  const select = Array.isArray(entry.select) ? entry.select.filter((c): c is string => typeof c === 'string') : undefined
  return { event, schema: text(entry.schema) ?? 'public', ...(table !== undefined ? { table } : {}), ...(filter !== undefined ? { filter } : {}), ...(select ? { select } : {}) }
}

/** `config.broadcast.replay`: `since` in epoch milliseconds, `limit` 1 to 25 (Supabase's bounds; 25 when absent). */
function replayOf(value: unknown): { replay?: { since: number; limit: number } } {
  const replay = record(value)
  if (typeof replay.since !== 'number' || !Number.isFinite(replay.since)) return {}
  const limit = typeof replay.limit === 'number' && Number.isInteger(replay.limit) && replay.limit > 0 ? Math.min(replay.limit, 25) : 25
  return { replay: { since: replay.since, limit } }
}

export function joinConfigOf(payload: unknown): JoinConfig {
  const join = record(payload)
  const config = record(join.config)
  const broadcast = record(config.broadcast)
  const presence = record(config.presence)
  const changes = Array.isArray(config.postgres_changes) ? config.postgres_changes : []
  const token = text(join.access_token) ?? text(join.user_token)
  return {
    broadcast: { self: flag(broadcast.self, false), ack: flag(broadcast.ack, false), ...replayOf(broadcast.replay) },
    presence: { enabled: flag(presence.enabled, false), key: text(presence.key) ?? '' },
    postgresChanges: changes.map(binding).filter((b): b is PostgresChangesBinding => b !== undefined),
    private: flag(config.private, false),
    // A publishable key (sb_...) is not a user's token: the socket's key stands.
    accessToken: token === undefined || token === '' || token.startsWith('sb_') ? undefined : token,
  }
}
