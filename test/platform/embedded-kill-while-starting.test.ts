// Issue 36 item 4, later in the start: the embedded PostgreSQL killed (SIGKILL)
// a few hundred ms after /health first answers ok, again while the demo project
// is being made, and once more while the node serves. The node keeps running,
// answers only ok or 503 with Retry-After meanwhile, and heals by itself.
import fs from 'node:fs'
import path from 'node:path'
import pg from 'pg'
import t from 'tap'
import { Answers, deaths, healthOk, kill, pidFile, servedAfterKill, servesProject, sleep, startNode, stopNode, until } from '../helpers/embedded-start.ts'
import { request } from '../helpers/http.ts'

t.test('killed a few hundred ms after /health first answers ok, and while the demo project is made', async (t) => {
  const node = await startNode(t)
  await healthOk(node)
  await sleep(300)
  const first = pidFile(node)!.pid
  t.ok(kill(first), 'the postmaster is killed')
  // Once it is back: killed again in the middle of making the demo project (its database exists, its catalogue row not yet).
  const { password, port } = JSON.parse(fs.readFileSync(path.join(node.home, 'state.json'), 'utf8')) as { password: string; port: number }
  const url = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`
  await until('the demo database being made', node, async () => {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 })
    client.on('error', () => {})
    try {
      await client.connect()
      const { rows } = await client.query("select 1 from pg_database where datname = 'bp_demo'")
      return rows.length > 0 ? true : undefined
    } catch {
      return undefined
    } finally {
      await client.end().catch(() => {})
    }
  }, 20)
  const second = pidFile(node)!.pid
  t.not(second, first, 'a new postmaster runs')
  if (!node.output().includes('Press Ctrl-C to stop.')) t.ok(kill(second), 'the postmaster is killed while the demo is made')
  const demo = await servedAfterKill(t, node)
  t.ok(deaths(node).length >= 1, 'each death was logged')
  await servesProject(t, node, demo)

  // Served now: killed again, every request meanwhile answers 503 with Retry-After until it is back.
  const answers = new Answers()
  t.ok(kill(pidFile(node)!.pid), 'killed once more while serving')
  let down = 0
  await until('REST and Auth to answer again', node, async () => {
    const rest = answers.check('REST', await request(`${demo.baseUrl}/rest/v1/`, { headers: { apikey: demo.anon } }), [200])
    const auth = answers.check(
      'Auth',
      await request(`${demo.baseUrl}/auth/v1/token?grant_type=password`, { headers: { apikey: demo.anon }, body: { email: 'nobody@example.com', password: 'wrong password' } }),
      [400],
    )
    if (!rest || !auth) down++
    return rest && auth && down > 0 ? true : undefined
  }, 50)
  t.ok(down > 0, `requests met PostgreSQL away (${down} rounds)`)
  t.same(answers.bad, [], `every answer meanwhile was the healthy one or 503 with Retry-After (${answers.count} answers)`)
  await servesProject(t, node, demo)
  await stopNode(t, node)
})
