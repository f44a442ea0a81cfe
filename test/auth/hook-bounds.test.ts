// A send email hook's answer is bounded (issue 36 item 5). A hostile endpoint
// (a real node:http server, test/helpers/hostile-peer.ts) answers each
// sign-up's hook call in one of a broken or malicious endpoint's ways, picked
// by the address signing up: an endless fast body, a 10 GiB Content-Length,
// a body trickled a byte a second, headers that never come, a redirect to
// itself. Each sign-up answers GoTrue's documented hook error (never 500),
// leaves no user, and the Auth worker stopped reading at the limit: the
// endpoint saw its connection closed within the attempt's deadline, having
// handed the socket at most the limit plus what the kernel's socket buffers
// take (a few MiB on loopback; reading for the 5 s deadline took hundreds).
import crypto from 'node:crypto'
import t from 'tap'
import { setAuthOptions } from '../../control-plane/auth-settings.ts'
import { HTTP_HOOK } from '../../workers/auth/hooks/send-email.ts'
import { adminQuery, serverUrl, withDatabase } from '../helpers/db.ts'
import { startHostilePeer, type HostileMode } from '../helpers/hostile-peer.ts'
import { authFixture, call } from './helpers.ts'

const SECRET = `v1,whsec_${crypto.randomBytes(32).toString('base64')}`
/** What the kernel's socket buffers on loopback may hold beyond what the reader took (send and receive side). */
const SOCKET_BUFFERS = 12 * 1024 * 1024
/** Slack for a loaded machine on top of a deadline. */
const SLACK_MS = 3000

t.test('a hostile send email hook endpoint gets its documented error, bounded in bytes and time', async (t) => {
  const f = await authFixture(t)
  // The address signing up names the endpoint's behaviour: endless@..., trickle@...
  const peer = await startHostilePeer(t, (_path, body) => String(JSON.parse(body).user?.email ?? '').split('@')[0] as HostileMode)
  // A project's mail is sent under one lock (its hourly ceiling), so its slow hook calls queue: the two
  // slow cases (3 × 5 s + 2 × 2 s each) run at once on two projects.
  const other = await f.test.createProject({ auth: true })
  const fixtures = [f, { ...f, project: other, url: (path: string) => `${other.baseUrl}/auth/v1${path}` }]
  for (const fixture of fixtures) {
    await setAuthOptions(f.test.platform.controlPlane, fixture.project.ref, { hook_send_email_uri: `${peer.url}/hook`, hook_send_email_secrets: SECRET })
  }

  const signUp = async (mode: HostileMode, fixture = f) => {
    const email = `${mode}@example.test`
    const answer = await call(fixture, 'POST', '/signup', { email, password: 'hostile password' })
    const db = withDatabase(await serverUrl(), fixture.project.record.dbName)
    const users = await adminQuery(db, 'select 1 from auth.users where email = $1', [email])
    return { status: answer.status, code: answer.body.code, message: answer.body.message, users: users.rowCount, calls: peer.requests.filter((r) => r.mode === mode) }
  }
  const endless = await signUp('endless')
  const huge = await signUp('huge-length')
  const redirect = await signUp('redirect-loop')
  const [trickle, silent] = await Promise.all([signUp('trickle', fixtures[0]), signUp('silent', fixtures[1])])

  const oversize = [422, 'hook_payload_over_size_limit', `Payload size exceeded size limit of ${200 * 1024} bytes`]
  for (const [name, result] of [['an endless fast body', endless], ['a 10 GiB Content-Length', huge]] as const) {
    t.same([result.status, result.code, result.message], oversize, `${name}: GoTrue's size error`)
    t.equal(result.users, 0, `${name}: no user`)
    t.equal(result.calls.length, 1, `${name}: not tried again`)
    const [call] = result.calls
    await call!.closed
    t.ok(call!.written <= HTTP_HOOK.maxAnswerBytes + SOCKET_BUFFERS, `${name}: the reader cancelled at the limit (${call!.written} bytes written before the socket closed)`)
    t.ok(call!.closedAt! - call!.startedAt < HTTP_HOOK.timeoutMs, `${name}: cancelled, not read until the deadline`)
  }

  for (const [name, result] of [['a trickled body', trickle], ['headers that never come', silent]] as const) {
    t.same([result.status, result.code], [422, 'hook_timeout_after_retry'], `${name}: GoTrue's timeout error`)
    t.equal(result.users, 0, `${name}: no user`)
    t.equal(result.calls.length, HTTP_HOOK.attempts, `${name}: each attempt timed out`)
    for (const call of result.calls) {
      await call.closed
      t.ok(call.closedAt! - call.startedAt < HTTP_HOOK.timeoutMs + SLACK_MS, `${name}: the attempt was cut at its deadline (${call.closedAt! - call.startedAt} ms)`)
    }
  }
  t.ok(trickle.calls.every((c) => c.written <= Math.ceil(HTTP_HOOK.timeoutMs / 1000) + 1), 'a trickle is cut after about five bytes')

  t.same([redirect.status, redirect.code, redirect.message], [502, 'hook_send_email_failed', `Error running hook URI: ${peer.url}/hook`], 'a redirect is not followed: the error status fails the call')
  t.equal(redirect.users, 0)
  t.equal(redirect.calls.length, 1, 'one request, no loop')
})
