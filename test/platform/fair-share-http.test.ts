// Fair shares through HTTP (issue 11): a project flooding GraphQL with slow
// queries runs only its plan's share of the GraphQL thread, waits behind
// itself, is refused with 503 and Retry-After once its queue is full, and a
// neighbour on the same (single) thread keeps answering at once.
import pg from 'pg'
import t from 'tap'
import { ownerUrlOf } from '../../lib/catalogue.ts'
import { PLAN_LIMITS } from '../../lib/plans.ts'
import { request, type ErrorBody, type Reply } from '../helpers/http.ts'
import { startTestPlatform } from '../helpers/platform.ts'

const SLEEP_SECONDS = 1

t.test('a slow neighbour takes only its share', async (t) => {
  const platform = await startTestPlatform(t, { BASEPLANE_GRAPHQL_THREADS: '1', BASEPLANE_TASKS_PER_THREAD: '16' })
  const slow = await platform.createProject({ name: 'slow', plan: 'free' })
  const quiet = await platform.createProject({ name: 'quiet', plan: 'free' })
  const owner = new pg.Client({ connectionString: ownerUrlOf(slow.record) })
  await owner.connect()
  await owner.query(`create function nap() returns int language sql stable as $$ select pg_sleep(${SLEEP_SECONDS}); select 1 $$`)
  await owner.end()

  const graphql = (project: typeof slow, query: string) =>
    request<unknown>(`${project.baseUrl}/graphql/v1`, { headers: { apikey: project.anonKey }, body: { query } })

  const warm = await graphql(quiet, '{ __typename }')
  t.same(warm.json, { data: { __typename: 'Query' } }, 'the quiet project answers before the flood')

  const { concurrentRequests, queuedRequests } = PLAN_LIMITS.free
  const flood = concurrentRequests + queuedRequests + 4
  const started = Date.now()
  const answers: Array<Promise<Reply<unknown>>> = []
  for (let i = 0; i < flood; i++) answers.push(graphql(slow, '{ nap }'))
  // Give the flood time to reach the server and fill the slow project's slots.
  await new Promise((resolve) => setTimeout(resolve, 200))

  const during = Date.now()
  const neighbour = await graphql(quiet, '{ __typename }')
  const neighbourMs = Date.now() - during
  t.same(neighbour.json, { data: { __typename: 'Query' } }, 'the neighbour is answered during the flood')
  // Without fair shares the neighbour would queue behind the flood in the
  // thread's 16 slots: at least one SLEEP_SECONDS. Answering well inside one
  // sleep shows it did not wait for the slow project, with room for a slow machine.
  t.ok(neighbourMs < SLEEP_SECONDS * 1000, `the neighbour did not wait for the slow project (${neighbourMs} ms)`)

  const replies = await Promise.all(answers)
  const elapsed = Date.now() - started
  const refused = replies.filter((r) => r.status === 503)
  const served = replies.filter((r) => r.status === 200)
  t.equal(refused.length, flood - concurrentRequests - queuedRequests, 'everything beyond the running and queued requests is refused')
  t.equal(served.length, concurrentRequests + queuedRequests, 'every admitted request is answered')
  for (const reply of served) t.same(reply.json, { data: { nap: 1 } })
  t.same(refused[0]!.json as ErrorBody, {
    code: 'service_unavailable',
    message: 'Too many requests for this project are waiting; try again shortly',
    hint: 'Each project may run a few requests at once per service (more on larger plans); spread requests out or retry after the Retry-After seconds.',
  })
  t.equal(refused[0]!.headers['retry-after'], '1')
  t.equal(refused[0]!.headers['x-sb-error-code'], 'service_unavailable')
  // The admitted requests ran at most `concurrentRequests` at a time.
  const rounds = Math.ceil((concurrentRequests + queuedRequests) / concurrentRequests)
  t.ok(elapsed >= rounds * SLEEP_SECONDS * 1000 * 0.9, `the slow project ran ${concurrentRequests} at a time (${elapsed} ms for ${rounds} rounds)`)
})
