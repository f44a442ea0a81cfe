// A start step that meets its database away runs again until it answers (the
// supervisor is restarting it), up to a deadline that names the step; any other
// error is the step's own and is thrown at once (lib/db/while-unavailable.ts).
import net from 'node:net'
import pg from 'pg'
import t from 'tap'
import { freePort } from '../../lib/db/embedded.ts'
import { whileUnavailable } from '../../lib/db/while-unavailable.ts'
import { setLogLevel } from '../../lib/log.ts'

setLogLevel('silent')

/** A real connection attempt to `port`: refused while nothing listens there. */
async function connectTo(port: number): Promise<string> {
  const client = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/postgres`, connectionTimeoutMillis: 1000 })
  client.on('error', () => {})
  try {
    await client.connect()
    return 'connected'
  } catch (error) {
    // Past the refusal, the stand-in below answers no PostgreSQL: a protocol failure, not an unavailable server.
    if ((error as { code?: string }).code === 'ECONNREFUSED') throw error
    return 'reached'
  } finally {
    await client.end().catch(() => {})
  }
}

t.test('a refused connection is tried again until the server listens', async (t) => {
  const port = await freePort()
  let attempts = 0
  const step = whileUnavailable('reaching the server', async () => {
    attempts++
    // Refused once, then the server is back (as the supervisor restarts PostgreSQL).
    if (attempts === 2) server.listen(port, '127.0.0.1')
    return connectTo(port)
  }, { deadlineMs: 30_000, firstDelayMs: 20 })
  const server = net.createServer((socket) => socket.end())
  t.teardown(() => server.close())
  t.equal(await step, 'reached')
  t.ok(attempts >= 2, `tried ${attempts} times`)
})

t.test('past the deadline: one line naming the step and the cause', async (t) => {
  const port = await freePort()
  await t.rejects(whileUnavailable('migrating the catalogue', () => connectTo(port), { deadlineMs: 200, firstDelayMs: 20 }), {
    code: 'database_unavailable',
    status: 503,
    message: `the platform database did not answer for 0 s while migrating the catalogue: connect ECONNREFUSED 127.0.0.1:${port}`,
  })
})

t.test("the step's own error is thrown at once, not tried again", async (t) => {
  let attempts = 0
  await t.rejects(
    whileUnavailable('checking the fleet settings', async () => {
      attempts++
      throw Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' })
    }, { deadlineMs: 30_000 }),
    { code: '23505' },
  )
  t.equal(attempts, 1)
})

t.test('a stop asked for ends the wait with the last failure', async (t) => {
  const port = await freePort()
  let attempts = 0
  await t.rejects(
    whileUnavailable('making the demo project', () => connectTo(port), { deadlineMs: Infinity, firstDelayMs: 20, stopped: () => ++attempts >= 3 }),
    { code: 'ECONNREFUSED' },
  )
  t.equal(attempts, 3)
})
