// A push service's answer is bounded (issue 36 item 5). Over HTTP/2 (APNs,
// FCM, Web Push) the pool keeps at most MAX_ANSWER_BYTES of a body and
// cancels the stream past it; a Web Push endpoint (any URL a subscriber
// gave) that speaks only HTTP/1.1 has its body dropped unread, within the
// request's deadline. Real peers: a node:http2 server that streams an endless
// body, and the hostile HTTP/1.1 peer (test/helpers/hostile-peer.ts). FCM's
// OAuth token endpoint, called through google-auth-library, is read through
// the same bounded reader.
import crypto from 'node:crypto'
import http2 from 'node:http2'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import webpush from 'web-push'
import { closableHttp2 } from '../../dev/push-peers/h2c.ts'
import { createTokenSource, TokenError } from '../../workers/push/providers/fcm-token.ts'
import { Http2Pool, MAX_ANSWER_BYTES, TransportError } from '../../workers/push/providers/http2-pool.ts'
import type { Delivery } from '../../workers/push/providers/provider.ts'
import { WebPushProvider } from '../../workers/push/providers/webpush.ts'
import { startHostilePeer, type HostileMode } from '../helpers/hostile-peer.ts'

/** What flow-control windows and socket buffers may hold beyond what the reader took. */
const BUFFERS = 12 * 1024 * 1024
const CHUNK = Buffer.alloc(16 * 1024, '7')

t.test('HTTP/2: an endless answer is cancelled at the limit', async (t) => {
  let written = 0
  let resolveClosed!: () => void
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve))
  const server = http2.createServer()
  server.on('stream', (stream) => {
    stream.on('error', () => {})
    stream.on('close', resolveClosed)
    stream.respond({ ':status': 400, 'content-type': 'application/json' })
    const flood = () => {
      while (!stream.closed && !stream.destroyed) {
        written += CHUNK.length
        if (!stream.write(CHUNK)) return void stream.once('drain', flood)
      }
    }
    flood()
  })
  const close = closableHttp2(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const pool = new Http2Pool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, { requestTimeoutMs: 5000 })
  t.teardown(async () => {
    await pool.close()
    await close()
  })
  const started = Date.now()
  const error = await pool.request({ ':method': 'POST', ':path': '/3/device/x' }, '{}').then(() => undefined, (e: unknown) => e)
  t.ok(error instanceof TransportError, `a TransportError: ${String(error)}`)
  t.match(String(error), `answer over ${MAX_ANSWER_BYTES} bytes`)
  t.ok(Date.now() - started < 4000, 'cancelled at the limit, not at the deadline')
  await closed
  t.ok(written <= MAX_ANSWER_BYTES + BUFFERS, `the server saw the stream cancelled (${written} bytes written)`)
  t.equal(pool.inFlight, 0, 'the stream slot is free again')
})

t.test('Web Push over HTTP/1.1: the answer body is dropped unread, within the deadline', async (t) => {
  const peer = await startHostilePeer(t, (path) => path.split('/').pop() as HostileMode)
  const vapid = webpush.generateVAPIDKeys()
  const provider = new WebPushProvider({ ...vapid, subject: 'mailto:ops@example.test' })
  t.teardown(() => provider.close())
  const ecdh = crypto.createECDH('prime256v1')
  ecdh.generateKeys()
  const delivery = (mode: HostileMode): Delivery => ({
    queueId: '1',
    messageId: crypto.randomUUID(),
    deviceId: crypto.randomUUID(),
    platform: 'web',
    attempt: 1,
    apnsId: crypto.randomUUID(),
    expiresAtMs: Date.now() + 3_600_000,
    token: `${peer.url}/push/${mode}`,
    p256dh: ecdh.getPublicKey().toString('base64url'),
    auth: crypto.randomBytes(16).toString('base64url'),
    title: 'Hello',
    body: 'World',
    data: {},
    ttl: 3600,
    collapseKey: null,
    priority: 'normal',
  })
  const [endless, huge, trickle, silent, redirect] = await Promise.all((['endless', 'huge-length', 'trickle', 'silent', 'redirect-loop'] as const).map((mode) => provider.send(delivery(mode))))
  t.match(endless, { kind: 'sent', httpStatus: 200 }, 'an endless 200: sent, its body never read')
  t.match(huge, { kind: 'sent', httpStatus: 200 }, 'a 10 GiB 200: sent')
  t.match(trickle, { kind: 'sent', httpStatus: 200 }, 'a trickled 200: sent, not waited for')
  t.match(silent, { kind: 'retry', httpStatus: null, reason: 'Web Push: connection error (no complete answer within 10000 ms)' }, 'no headers: retried later')
  t.match(redirect, { kind: 'failed', httpStatus: 307 }, 'a redirect is the answer, not followed')
  for (const request of peer.requests) {
    await request.closed
    t.ok(request.written <= BUFFERS, `${request.mode}: ${request.written} bytes written before the socket closed`)
  }
  t.equal(peer.requests.filter((r) => r.mode === 'redirect-loop').length, 1, 'one request to the redirecting endpoint')
})

t.test("FCM's token endpoint: an endless or huge answer fails the credential check, read no further than the bound", async (t) => {
  const peer = await startHostilePeer(t, (path) => path.split('/').pop() as HostileMode)
  const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 })
  const account = { project_id: 'bounded', client_email: 'push@bounded.iam.gserviceaccount.com', private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() }
  for (const mode of ['endless', 'huge-length'] as const) {
    const error = await createTokenSource(account, `${peer.url}/token/${mode}`)
      .getToken()
      .then(() => undefined, (e: unknown) => e)
    t.ok(error instanceof TokenError && !error.refused, `${mode}: the endpoint counts as unreachable (${String(error)})`)
    const calls = peer.requests.filter((r) => r.mode === mode)
    t.ok(calls.length >= 1, `${mode}: asked`)
    for (const call of calls) {
      await call.closed
      t.ok(call.written <= BUFFERS, `${mode}: ${call.written} bytes written before the socket closed`)
    }
  }
})
