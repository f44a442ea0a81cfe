// Usage recorded once for the fleet (issue 27 item 1), across two data-plane
// processes on one catalogue: node A (this process) writes on its timer,
// every half second; node B (a child process) has an hour's interval, so what
// it counted reaches the catalogue only when it stops (SIGTERM). The same user
// signing in through both nodes is one active user of the month.
import t from 'tap'
import { setAuthOptions } from '../../control-plane/auth-settings.ts'
import { projectUsage } from '../../control-plane/usage.ts'
import { eventually } from '../helpers/eventually.ts'
import { request } from '../helpers/http.ts'
import { startPlatformProcess } from '../helpers/platform-process.ts'
import { startTestPlatform } from '../helpers/platform.ts'

const a = await startTestPlatform(t, { BASEPLANE_USAGE_FLUSH_MS: '500' })
const { controlPlane } = a.platform
const project = await a.createProject({ name: 'Billed', auth: true })
await setAuthOptions(controlPlane, project.ref, { mailer_autoconfirm: true, external_anonymous_users_enabled: true })
const b = await startPlatformProcess(t, a.catalogueUrl, { BASEPLANE_USAGE_FLUSH_MS: '3600000' })

interface Counted {
  requests: number
  bytes: number
}

/** An Auth request through a node, its answer counted as the node counts it. */
async function auth(origin: string, counted: Counted, path: string, body: object) {
  const reply = await request<{ access_token?: string; refresh_token?: string; user?: { id: string } }>(`${origin}/project/${project.ref}/auth/v1${path}`, {
    headers: { apikey: project.anonKey },
    body,
  })
  counted.requests += 1
  counted.bytes += Buffer.byteLength(reply.text)
  return reply
}

t.test('one user through two nodes is one active user; a stopping node writes what it holds', async (t) => {
  const onA: Counted = { requests: 0, bytes: 0 }
  const onB: Counted = { requests: 0, bytes: 0 }
  const credentials = { email: 'grace@example.test', password: 'secret-password' }
  const signedUp = await auth(a.origin, onA, '/signup', credentials)
  t.ok(signedUp.json.access_token, 'signed up and in through A')
  const throughB = await auth(b.origin, onB, '/token?grant_type=password', credentials)
  t.ok(throughB.json.access_token, 'signed in through B')
  t.equal(throughB.json.user!.id, signedUp.json.user!.id, 'the same user')
  const refreshed = await auth(b.origin, onB, '/token?grant_type=refresh_token', { refresh_token: throughB.json.refresh_token })
  t.ok(refreshed.json.access_token, 'refreshed through B')
  const anonymous = await auth(b.origin, onB, '/signup', {})
  t.ok(anonymous.json.access_token, 'an anonymous sign-in through B')
  const again = await auth(a.origin, onA, '/token?grant_type=password', credentials)
  t.ok(again.json.access_token, 'signed in again through A')

  // A writes on its own timer: its counts arrive without anyone asking; B's are still held.
  const fromA = await eventually('node A writes its counts on its timer', 10000, async () => {
    const view = await projectUsage(controlPlane, project.ref)
    return view.totals.requests_auth === onA.requests && view
  })
  t.match(fromA, { totals: { requests_auth: onA.requests, bytes_out_auth: onA.bytes, auth_sign_ins: 2, auth_token_refreshes: 0 }, active_users: { total: 1, anonymous: 0 } })

  await b.stop()
  const both = await projectUsage(controlPlane, project.ref)
  t.match(both.totals, {
    requests_auth: onA.requests + onB.requests,
    bytes_out_auth: onA.bytes + onB.bytes,
    auth_sign_ins: 4,
    auth_token_refreshes: 1,
  })
  t.same(both.active_users, { total: 2, anonymous: 1, authenticated: 1 }, 'the user seen by both nodes counts once')
  const { rows } = await controlPlane.catalogue.query<{ users: number }>('select count(*)::int as users from baseplane.usage_active_users where ref = $1', [project.ref])
  t.same(rows, [{ users: 2 }])
  t.equal(a.platform.usage!.stats().failures, 0, "node A's writes did not fail")
})
