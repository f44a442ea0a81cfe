// A Web Push service that only takes deliveries: cleartext HTTP/2 (as the
// platform speaks to an http:// endpoint with BASEPLANE_WEBPUSH_ALLOW_INSECURE),
// 201 to every POST, the time of each arrival kept. bench:fleet times when a
// notification arrives, not what it says: the VAPID and payload checks are
// dev/push-peers/webpush-receiver.ts's job.
import crypto from 'node:crypto'
import http2 from 'node:http2'
import type { AddressInfo } from 'node:net'

export interface Subscription {
  endpoint: string
  keys: { p256dh: string; auth: string }
}

export interface WebPushSink {
  /** performance.now() of each delivery, in order of arrival. */
  arrivals: number[]
  /** A subscription as a browser serialises it: an endpoint here and real key material (the sender encrypts to it). */
  subscribe(): Subscription
  close(): Promise<void>
}

export async function startWebPushSink(): Promise<WebPushSink> {
  const arrivals: number[] = []
  const server = http2.createServer()
  const sessions = new Set<http2.ServerHttp2Session>()
  server.on('session', (session) => {
    sessions.add(session)
    session.on('close', () => sessions.delete(session))
  })
  server.on('stream', (stream) => {
    stream.on('data', () => {})
    stream.on('end', () => {
      arrivals.push(performance.now())
      stream.respond({ ':status': 201 })
      stream.end()
    })
    stream.on('error', () => {})
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    arrivals,
    subscribe: () => {
      const ecdh = crypto.createECDH('prime256v1')
      ecdh.generateKeys()
      return {
        endpoint: `${origin}/push/${crypto.randomUUID()}`,
        keys: { p256dh: ecdh.getPublicKey().toString('base64url'), auth: crypto.randomBytes(16).toString('base64url') },
      }
    },
    close: async () => {
      for (const session of sessions) session.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
