// Structured logging to stderr, one JSON object per line. Never pass secrets
// (JWT secrets, keys, passwords) into these.
type Level = 'silent' | 'info' | 'debug'

let level: Level = (process.env.BASEPLANE_LOG_LEVEL as Level) || 'info'

export function setLogLevel(next: Level): void {
  level = next
}

/** The current level, for threads started from here (they read BASEPLANE_LOG_LEVEL). */
export function logLevel(): Level {
  return level
}

function write(kind: string, message: string, fields: Record<string, unknown>): void {
  process.stderr.write(JSON.stringify({ time: new Date().toISOString(), level: kind, message, ...fields }) + '\n')
}

export const log = {
  info(message: string, fields: Record<string, unknown> = {}): void {
    if (level !== 'silent') write('info', message, fields)
  },
  debug(message: string, fields: Record<string, unknown> = {}): void {
    if (level === 'debug') write('debug', message, fields)
  },
  error(message: string, error?: unknown, fields: Record<string, unknown> = {}): void {
    if (level === 'silent') return
    const detail = error instanceof Error ? { error: error.message, stack: error.stack } : error === undefined ? {} : { error: String(error) }
    write('error', message, { ...fields, ...detail })
  },
}
