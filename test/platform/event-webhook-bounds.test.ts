// The operator webhook's calls are bounded (issue 36 item 5). A hostile
// receiver (a real node:http server, test/helpers/hostile-peer.ts) answers
// each event's post in one of a broken or malicious endpoint's ways, picked by
// a marker in the event's data: an endless fast body, a 10 GiB
// Content-Length, a body trickled a byte a second, headers that never come, a
// redirect to itself. Each attempt is recorded as failed (or taken, for a 2xx
// whose body never ends: the status decides) within the attempt's deadline,
// the receiver saw its connection closed having handed the socket no more
// than the kernel's buffers take, and the outbox goes on to the next event.
import crypto from 'node:crypto'
import t from 'tap'
import { ATTEMPT_TIMEOUT_MS, EventOutbox } from '../../control-plane/event-outbox.ts'
import { migrate } from '../../lib/db/migrations.ts'
import { adminQuery, connectClient, freshDatabase } from '../helpers/db.ts'
import { startHostilePeer, type HostileMode } from '../helpers/hostile-peer.ts'

/** What the kernel's socket buffers on loopback may hold beyond what the reader took. */
const SOCKET_BUFFERS = 12 * 1024 * 1024
const SLACK_MS = 3000
const MODES = ['endless', 'huge-length', 'trickle', 'silent', 'redirect-loop'] as const

t.test('a hostile operator webhook receiver costs an attempt each, bounded in bytes and time', async (t) => {
  const catalogue = await freshDatabase(t)
  const client = await connectClient(catalogue)
  await migrate(client, 'catalogue')
  await client.end()
  for (const mode of MODES) {
    await adminQuery(catalogue, `insert into baseplane.events (kind, ref, data, delivery, next_attempt_at) values ('project.created', 'hostile', $1, 'pending', now())`, [
      JSON.stringify({ mode }),
    ])
  }
  const peer = await startHostilePeer(t, (_path, body) => JSON.parse(body).data.mode as HostileMode)
  const outbox = new EventOutbox(catalogue, { url: `${peer.url}/hooks`, secret: `whsec_${crypto.randomBytes(24).toString('base64')}`, pollMillis: 3_600_000 })
  t.teardown(() => outbox.stop())

  // The failed ones may come due again within the same look (the 5 s retry counts from the claim), hence "at least".
  t.ok((await outbox.deliverDue()) >= MODES.length, 'every event attempted, none holding up the next')
  const { rows } = await adminQuery<{ mode: HostileMode; delivery: string; last_error: string | null }>(
    catalogue,
    `select data->>'mode' as mode, delivery, last_error from baseplane.events order by id`,
  )
  t.same(Object.fromEntries(rows.map((r) => [r.mode, [r.delivery, r.last_error]])), {
    // A 2xx is the receiver's yes: its body is never read.
    endless: ['delivered', null],
    'huge-length': ['delivered', null],
    trickle: ['delivered', null],
    silent: ['pending', `no answer within ${ATTEMPT_TIMEOUT_MS} ms`],
    'redirect-loop': ['pending', 'HTTP 307'],
  })
  for (const mode of MODES) {
    const calls = peer.requests.filter((r) => r.mode === mode)
    t.ok(calls.length >= 1, `${mode}: posted`)
    if (mode === 'redirect-loop') t.ok(calls.every((c) => c.path === '/hooks'), 'the redirect was not followed')
    for (const call of calls) {
      await call.closed
      const took = call.closedAt! - call.startedAt
      t.ok(call.written <= SOCKET_BUFFERS, `${mode}: the body was dropped, not read (${call.written} bytes written before the socket closed)`)
      t.ok(took < (mode === 'silent' ? ATTEMPT_TIMEOUT_MS + SLACK_MS : SLACK_MS), `${mode}: the connection closed in ${took} ms`)
    }
  }
})
