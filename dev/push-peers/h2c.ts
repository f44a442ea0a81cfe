// Closing an HTTP/2 stand-in for good: server.close() waits for every open
// session, and provider clients keep theirs open on purpose.
import type http2 from 'node:http2'

/** Tracks `server`'s sessions; the returned function destroys them and closes the server. */
export function closableHttp2(server: http2.Http2Server): () => Promise<void> {
  const sessions = new Set<http2.ServerHttp2Session>()
  server.on('session', (session: http2.ServerHttp2Session) => {
    sessions.add(session)
    session.on('close', () => sessions.delete(session))
    session.on('error', () => {})
  })
  return () =>
    new Promise<void>((resolve) => {
      for (const session of sessions) session.destroy()
      server.close(() => resolve())
    })
}
