// GET /health says whether the node may be sent requests: 503 with
// Retry-After once the catalogue has not answered for
// BASEPLANE_CATALOGUE_SILENCE_MS, 200 again once it does.
import { escapeIdentifier } from 'pg'
import t from 'tap'
import { silentServer } from '../helpers/silent-server.ts'
import { PlatformHealth } from '../../data-plane/platform-health.ts'
import { adminQuery, serverUrl } from '../helpers/db.ts'
import { request } from '../helpers/http.ts'
import { startTestPlatform } from '../helpers/platform.ts'

// The node turns unready after its silence bound (the least the configuration takes, here) and a
// probe's second: the state shows within a few seconds; this bound only keeps a broken build from
// waiting forever.
const SETTLES_WITHIN_MS = 20_000

const platform = await startTestPlatform(t, { BASEPLANE_CATALOGUE_SILENCE_MS: '3000' })
const server = await serverUrl()
const catalogueName = new URL(platform.catalogueUrl).pathname.slice(1)
const catalogue = escapeIdentifier(catalogueName)

async function healthUntil(status: number) {
  const deadline = Date.now() + SETTLES_WITHIN_MS
  for (;;) {
    const reply = await request<Record<string, unknown>>(`${platform.origin}/health`)
    if (reply.status === status || Date.now() > deadline) return reply
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

async function allowConnections(allow: boolean): Promise<void> {
  await adminQuery(server, `alter database ${catalogue} allow_connections ${allow}`)
}

t.test('200 while the catalogue answers; one probe connection however many ask', async (t) => {
  const replies = await Promise.all(Array.from({ length: 50 }, () => request(`${platform.origin}/health`)))
  t.same(
    replies.map((reply) => ({ status: reply.status, body: reply.json })),
    replies.map(() => ({ status: 200, body: { status: 'ok', version: '0.6.0' } })),
  )
  // This platform's probes only: another platform on the same server has its own catalogue.
  const { rows } = await adminQuery<{ n: number }>(server, "select count(*)::int as n from pg_stat_activity where application_name = 'baseplane health' and datname = $1", [catalogueName])
  // One, not none: the probes ran on it, and it stays open between them.
  t.equal(rows[0]!.n, 1, `${rows[0]!.n} probe connection(s)`)
})

t.test('503 with Retry-After while the catalogue refuses connections, 200 once it is back', async (t) => {
  t.teardown(() => allowConnections(true))
  await allowConnections(false)
  await adminQuery(server, 'select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [catalogueName])

  const down = await healthUntil(503)
  t.same(
    { status: down.status, body: down.json, retryAfter: down.headers['retry-after'] },
    { status: 503, body: { status: 'unavailable', version: '0.6.0', message: 'The platform database does not answer' }, retryAfter: '2' },
  )
  const again = await request(`${platform.origin}/health`)
  t.equal(again.status, 503, 'it stays unavailable while the catalogue is closed')

  await allowConnections(true)
  const up = await healthUntil(200)
  t.same({ status: up.status, body: up.json, retryAfter: up.headers['retry-after'] }, { status: 200, body: { status: 'ok', version: '0.6.0' }, retryAfter: undefined })
})

t.test('other paths and methods are not the health check', async (t) => {
  const post = await request(`${platform.origin}/health`, { method: 'POST', body: {} })
  t.same({ status: post.status, body: post.json }, { status: 404, body: { code: 'project_not_found', message: 'No project in the request: use <ref>.<base domain> or the /project/<ref>/ prefix' } })
  const nested = await request(`${platform.origin}/health/catalogue`)
  t.equal(nested.status, 404)
})

t.test('a catalogue that accepts the connection but never answers: 503 after the probe bound, probed once per second', async (t) => {
  const { port, accepted } = await silentServer(t)
  const health = new PlatformHealth(`postgres://nobody:secret@127.0.0.1:${port}/catalogue`, '0.6.0', { probeTimeoutMs: 300 })
  t.teardown(() => health.close())

  const started = Date.now()
  const first = await health.response()
  const elapsed = Date.now() - started
  t.same({ status: first.status, body: JSON.parse(first.body) }, { status: 503, body: { status: 'unavailable', version: '0.6.0', message: 'The platform database does not answer' } })
  // Without the bound this would wait for tap's timeout; 10 s is many times the 300 ms bound, even on a loaded machine.
  t.ok(elapsed < 10_000, `answered after ${elapsed} ms`)
  const cached = await health.response()
  t.equal(cached.status, 503)
  t.equal(accepted(), 1, 'the second answer came from the kept result, without a new connection')
})
