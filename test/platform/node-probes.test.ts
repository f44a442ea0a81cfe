// GET /live and GET /ready, the node's probes for orchestrators (issue 43
// item 4), in each state: both 200 with an empty body on a serving node;
// /ready 503 with Retry-After (and /live still 200) while a worker thread is
// being replaced, while the node drains, and, where the catalogue's silence
// is bounded, once the catalogue does not answer; /ready stays 200 without
// that bound, as the node serves the projects it knows.
import { escapeIdentifier } from 'pg'
import t from 'tap'
import { adminQuery, serverUrl } from '../helpers/db.ts'
import { request } from '../helpers/http.ts'
import { startTestPlatform } from '../helpers/platform.ts'

// States show within the silence bound and a probe's second; this only keeps a broken build from waiting forever.
const SETTLES_WITHIN_MS = 20_000

const server = await serverUrl()

async function probe(origin: string, path: '/live' | '/ready', method = 'GET') {
  const reply = await request(`${origin}${path}`, { method })
  return { status: reply.status, body: reply.text, retryAfter: reply.headers['retry-after'] }
}

async function readyUntil(origin: string, status: number) {
  const deadline = Date.now() + SETTLES_WITHIN_MS
  for (;;) {
    const reply = await probe(origin, '/ready')
    if (reply.status === status || Date.now() > deadline) return reply
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

const SERVING = { status: 200, body: '', retryAfter: undefined }
const NOT_READY = { status: 503, body: '', retryAfter: '2' }

// One node for the states of a node whose catalogue silence is unbounded (draining, last, ends its serving).
const platform = await startTestPlatform(t)
const allow = (name: string, on: boolean) => adminQuery(server, `alter database ${escapeIdentifier(name)} allow_connections ${on}`)
async function cut(name: string): Promise<void> {
  await allow(name, false)
  await adminQuery(server, 'select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [name])
}

t.test('a serving node: both 200 with an empty body, for GET and HEAD', async (t) => {
  t.same(await probe(platform.origin, '/live'), SERVING)
  t.same(await probe(platform.origin, '/ready'), SERVING)
  t.same(await probe(platform.origin, '/live', 'HEAD'), SERVING)
  t.same(await probe(platform.origin, '/ready', 'HEAD'), SERVING)
  const post = await request(`${platform.origin}/ready`, { method: 'POST', body: {} })
  t.not(post.status, 200, 'only GET and HEAD are the probe')
})

t.test('a worker thread replaced: /ready 503 until its successor has started, /live 200 throughout', async (t) => {
  const [thread] = platform.platform.dispatcher.threadsOf('rest')
  t.ok(thread, 'the rest concern has a thread')
  const sawDown = new Promise<boolean>((resolve) => thread!.once('exit', () => resolve(!platform.platform.dispatcher.threadsUp())))
  await thread!.terminate()
  t.equal(await sawDown, true, 'the node knows a shard has no thread once it exits')
  t.same(await readyUntil(platform.origin, 200), SERVING, 'ready again once Piscina has started a new thread')
  t.same(await probe(platform.origin, '/live'), SERVING)
  const rest = await request(`${platform.origin}/ready`)
  t.equal(rest.status, 200)
})

t.test('the catalogue away', async (t) => {
  t.test('with BASEPLANE_CATALOGUE_SILENCE_MS: /ready 503 past the bound, 200 once it is back', async (t) => {
    const platform = await startTestPlatform(t, { BASEPLANE_CATALOGUE_SILENCE_MS: '3000' })
    const name = new URL(platform.catalogueUrl).pathname.slice(1)
    t.teardown(() => allow(name, true))
    t.same(await probe(platform.origin, '/ready'), SERVING)
    await cut(name)
    t.same(await readyUntil(platform.origin, 503), NOT_READY)
    t.same(await probe(platform.origin, '/live'), SERVING)
    await allow(name, true)
    t.same(await readyUntil(platform.origin, 200), SERVING, 'ready again without a restart')
  })

  t.test('without it: /ready stays 200, the node serving what it knows', async (t) => {
    const name = new URL(platform.catalogueUrl).pathname.slice(1)
    t.teardown(() => allow(name, true))
    await cut(name)
    // Past the probe's second and its cache: the catalogue has been found away by now.
    await new Promise((resolve) => setTimeout(resolve, 3000))
    const health = await request<{ catalogue?: string }>(`${platform.origin}/health`)
    t.same({ status: health.status, catalogue: health.json.catalogue }, { status: 200, catalogue: 'down' }, '/health says the catalogue is down')
    t.same(await probe(platform.origin, '/ready'), SERVING)
    await allow(name, true)
  })
  t.end()
})

t.test('a draining node: /ready 503 at once, /live 200', async (t) => {
  platform.platform.leaving()
  t.same(await probe(platform.origin, '/ready'), NOT_READY)
  t.same(await probe(platform.origin, '/live'), SERVING, 'draining is not dead: the orchestrator must not restart it')
})
