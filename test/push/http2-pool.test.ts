// The HTTP/2 session pool every push provider sends through: answers with
// their bodies (decoded once, whole), and a deadline that cancels a stream
// the peer never answers.
import http2 from 'node:http2'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { Http2Pool, TransportError } from '../../workers/push/providers/http2-pool.ts'
import { closableHttp2 } from '../../dev/push-peers/h2c.ts'

// Multi-byte characters, long enough to arrive in several DATA frames.
const LONG = 'ü€𝄞'.repeat(20000)

t.test('answers, bodies and the request deadline', async (t) => {
  const server = http2.createServer()
  server.on('stream', (stream, headers) => {
    const path = headers[':path']
    if (path === '/hang') return // never answered
    stream.respond({ ':status': path === '/long' ? 200 : 204, 'x-path': String(path) })
    stream.end(path === '/long' ? LONG : undefined)
  })
  const close = closableHttp2(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const pool = new Http2Pool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, { requestTimeoutMs: 300 })
  t.teardown(async () => {
    await pool.close()
    await close()
  })
  const post = (path: string) => pool.request({ ':method': 'POST', ':path': path }, '{}')

  const empty = await post('/empty')
  t.strictSame({ status: empty.status, path: empty.headers['x-path'], body: empty.body }, { status: 204, path: '/empty', body: '' })
  const long = await post('/long')
  t.equal(long.body, LONG, 'a body of many frames, characters split across them, decoded whole')

  const started = Date.now()
  const hung = post('/hang')
  const answered = post('/empty')
  const error = await hung.then(() => undefined, (e: unknown) => e)
  t.ok(error instanceof TransportError, `a TransportError: ${String(error)}`)
  const waited = Date.now() - started
  t.ok(waited >= 300 && waited < 1500, `cancelled after the deadline (${waited} ms)`)
  t.equal((await answered).status, 204, 'other streams on the session are unaffected')
  t.equal(pool.inFlight, 0)
})
