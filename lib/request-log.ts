// The request log (issue 28 item 9): one JSON line per answered request on
// standard output, where process managers collect it, when the operator turns
// it on (BASEPLANE_REQUEST_LOG=on; off by default: a busy node answers
// thousands a second). Never a secret: no query string (an apikey may ride
// there, and links carry tokens), no header, no body; the path is cut at
// MAX_PATH characters, since a client chooses it.
const MAX_PATH = 300

export interface RequestLogEntry {
  /** The project's ref; null for the platform's own routes (/health, the admin API, the dashboard). */
  ref: string | null
  /** The concern that answered (auth, graphql, push), `platform`, or `other` (a project's /health, an unknown path). */
  service: string
  method: string
  path: string
  status: number
  /** From the request's arrival to its answer, in milliseconds. */
  ms: number
  /** The answer body's bytes (headers not counted; a streamed answer counts 0). */
  bytes: number
  /** The client's address (the trusted proxy's header when configured). */
  address: string
}

export function formatRequestLog(entry: RequestLogEntry, now = new Date()): string {
  const path = entry.path.length > MAX_PATH ? `${entry.path.slice(0, MAX_PATH)}...` : entry.path
  return JSON.stringify({ time: now.toISOString(), type: 'request', ...entry, path, ms: Math.round(entry.ms * 100) / 100 })
}

export function writeRequestLog(entry: RequestLogEntry): void {
  process.stdout.write(formatRequestLog(entry) + '\n')
}
