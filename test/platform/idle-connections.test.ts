// Through the running platform (issue 11): a project's connections are opened
// in one worker thread per concern, at most its plan's share of them, and
// closed once idle, so an idle project holds none. Worker threads must keep
// their timers running between tasks for that (Piscina's default parks them).
import pg from 'pg'
import t from 'tap'
import { PLAN_LIMITS } from '../../lib/plans.ts'
import { request } from '../helpers/http.ts'
import { startTestPlatform } from '../helpers/platform.ts'

const IDLE_MS = 1000

t.test('an idle project ends up holding no connection', async (t) => {
  const platform = await startTestPlatform(t, {
    BASEPLANE_IDLE_CONNECTION_MS: String(IDLE_MS),
    BASEPLANE_GRAPHQL_THREADS: '2',
    BASEPLANE_AUTH_THREADS: '2',
  })
  const project = await platform.createProject({ name: 'idle', auth: true })
  const admin = new pg.Client({ connectionString: platform.catalogueUrl })
  await admin.connect()
  t.teardown(() => admin.end())
  const connections = async () =>
    (await admin.query<{ n: number }>('select count(*)::int as n from pg_stat_activity where usename = $1', [project.record.dbApiRole])).rows[0]!.n

  const answers = await Promise.all(
    Array.from({ length: 24 }, () =>
      request<unknown>(`${project.baseUrl}/graphql/v1`, { headers: { apikey: project.anonKey }, body: { query: '{ __typename }' } }),
    ),
  )
  for (const answer of answers) t.same(answer.json, { data: { __typename: 'Query' } })
  const open = await connections()
  t.ok(open >= 1, `the requests opened connections (${open})`)
  // One thread of the two serves the project, with at most its share of connections.
  t.ok(open <= PLAN_LIMITS.free.concurrentRequests, `at most the free plan's ${PLAN_LIMITS.free.concurrentRequests} (${open})`)

  // The idle time, plus the pools' sweep, plus room for a loaded machine.
  const deadline = Date.now() + IDLE_MS + 10_000
  let left = open
  while (left > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200))
    left = await connections()
  }
  t.equal(left, 0, 'no connection is left once the project has been idle')

  const again = await request<unknown>(`${project.baseUrl}/graphql/v1`, { headers: { apikey: project.anonKey }, body: { query: '{ __typename }' } })
  t.same(again.json, { data: { __typename: 'Query' } }, 'and the next request opens one again')
})
